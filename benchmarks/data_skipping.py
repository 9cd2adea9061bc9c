"""Data skipping (issue 31, section 4): a selective filter on a sorted column reads at most a third of the files,
and returns the same rows as without skipping.

Java Hudi 0.15 (the oracle's bundle, ``make oracle``) writes the tables, with its metadata table's
``column_stats`` on, until our writer keeps that partition: a bulk insert of ``--rows`` rows globally sorted by
key (``hoodie.bulkinsert.sort.mode=GLOBAL_SORT``) into files of at most ``--file-mb`` MB
(``hoodie.parquet.max.file.size``: each task rolls over to a new file, so each base file holds a contiguous range
of ``ts``, which follows the key; the oracle's session sorts into 2 tasks, so a file count set by the bulk
insert's parallelism would be 2), copy-on-write, and merge-on-read with an upsert of 1% of the rows (one contiguous
key range: its file slices get log files). Our session reads ``ts BETWEEN`` a window of ``--selectivity`` of the
rows, natively (Spark's parquet scan over the listing) and with the Python reader, data skipping on and off,
interleaved, medians of ``--runs``; files read: ``inputFiles()`` of the native read, the Python reader's file
slices (one input partition each with ``hoodie.read.split.size=1``).

    python -m benchmarks.data_skipping --rows 1000000 --file-mb 1 --runs 5 --work /tmp/data_skipping \\
        --out benchmarks/results/data_skipping.md
"""

from __future__ import annotations

import argparse
import datetime
import logging
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from benchmarks import spark_session
from benchmarks.machine import facts, load_average, versions
from benchmarks.markdown import markdown_table
from benchmarks.memory import PeakMemory
from benchmarks.timing import Case, interleave
from tests.hudi_oracle import HUDI_0_15, HudiOracle

logger = logging.getLogger(__name__)

UPSERTED = 0.01  # of the rows, one key range, upserted into the merge-on-read table


def rows_of(count: int, seed: int = 7) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array([f"{i:010d}" for i in range(count)]),
        "ts": pa.array(np.arange(count, dtype=np.int64)),
        "amount": pa.array(rng.random(count) * 1000),
        "city": pa.array(rng.choice(["sf", "nyc", "la", "sea"], count)),
    })


def write_tables(rows: pa.Table, file_mb: int, work: Path) -> dict[str, str]:
    """The copy-on-write and merge-on-read tables Java writes; their paths by table type."""
    hudi = HudiOracle(HUDI_0_15, work / "oracle")
    paths = {}
    try:
        for table_type in ("COPY_ON_WRITE", "MERGE_ON_READ"):
            path = str(work / table_type.lower())
            options = {
                "hoodie.table.name": "sorted", "hoodie.datasource.write.recordkey.field": "id",
                "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.table.type": table_type,
                "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
                "hoodie.datasource.write.operation": "bulk_insert", "hoodie.bulkinsert.sort.mode": "GLOBAL_SORT",
                "hoodie.parquet.max.file.size": str(file_mb * 1024 * 1024), "hoodie.metadata.enable": "true",
                "hoodie.metadata.index.column.stats.enable": "true", "hoodie.compact.inline": "false",
            }
            hudi.write(path, rows, options, mode="overwrite")
            if table_type == "MERGE_ON_READ":
                start, count = rows.num_rows // 2, int(rows.num_rows * UPSERTED)
                changed = rows.slice(start, count)
                changed = changed.set_column(2, "amount", pa.array(np.full(count, -1.0)))
                hudi.write(path, changed, {**options, "hoodie.datasource.write.operation": "upsert"})
            paths[table_type] = path
    finally:
        hudi.close()
    return paths


def _read(spark: SparkSession, path: str, skipping: bool, split_per_slice: bool = False) -> DataFrame:
    reader = spark.read.format("hoodie").option("data.skipping", str(skipping).lower())
    if split_per_slice:
        reader = reader.option("hoodie.read.split.size", "1")
    return reader.load(path)


def _with_native(spark: SparkSession, native: bool, run: Callable[[], object]) -> object:
    return run() if native else spark_session.python_reader(spark, run)


def files_read(spark: SparkSession, path: str, condition: str, native: bool, skipping: bool) -> int:
    if native:
        return len(_read(spark, path, skipping).where(condition).inputFiles())
    return spark_session.python_reader(
        spark, lambda: _read(spark, path, skipping, split_per_slice=True).where(condition).rdd.getNumPartitions())


def _case(spark: SparkSession, path: str, condition: str, native: bool, skipping: bool,
          answers: dict[str, list[tuple]]) -> Case:
    key = f"{'native' if native else 'python'}, skipping {'on' if skipping else 'off'}"

    def run() -> None:
        rows = _with_native(spark, native, lambda: _read(spark, path, skipping).where(condition)
                            .select("id", "ts", "amount").collect())
        answers[key] = sorted(tuple(r) for r in rows)
    return Case(key, key, run)


def measure(spark: SparkSession, paths: dict[str, str], condition: str, runs: int) -> list[list[object]]:
    table = []
    memory = PeakMemory(spark_session.jvm_pid(spark))
    for table_type, path in paths.items():
        answers: dict[str, list[tuple]] = {}
        cases = [_case(spark, path, condition, native, skipping, answers)
                 for native in (True, False) for skipping in (True, False)]
        measured = interleave(f"data skipping {table_type}", cases, runs, warmup=1, memory=memory)
        first = next(iter(answers.values()))
        assert all(rows == first for rows in answers.values()), "the reads returned different rows"
        for key, m in measured.items():
            native, skipping = key.startswith("native"), key.endswith("on")
            read = files_read(spark, path, condition, native, skipping)
            everything = files_read(spark, path, condition, native, False)
            target = ("met" if read * 3 <= everything else "missed") if skipping else ""
            table.append([table_type, key, f"{read} of {everything}", target, f"{len(first):,}", f"{m.median:.2f}",
                          ", ".join(f"{s:.2f}" for s in m.seconds)])
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--file-mb", type=int, default=1)
    parser.add_argument("--selectivity", type=float, default=0.01)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--work", type=Path, default=Path("/tmp/data_skipping"))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    rows = rows_of(args.rows)
    paths = write_tables(rows, args.file_mb, args.work)
    low = int(args.rows * 0.3)
    condition = f"ts BETWEEN {low} AND {low + int(args.rows * args.selectivity) - 1}"
    spark = spark_session.start("hoodie-bench-data-skipping", driver_memory="2g")
    java = spark.sparkContext._jvm.java.lang.System.getProperty("java.version")
    try:
        table = measure(spark, paths, condition, args.runs)
    finally:
        spark.stop()
    lines = [f"# Data skipping on a sorted column ({datetime.date.today().isoformat()})", "",
             f"`python -m benchmarks.data_skipping --rows {args.rows} --file-mb {args.file_mb} --selectivity "
             f"{args.selectivity} --runs {args.runs}`: tables written by Java Hudi {HUDI_0_15} (bulk insert sorted "
             f"by key into files of at most {args.file_mb} MB; merge-on-read then upserts {UPSERTED:.0%} of the "
             "rows, one key range), "
             f"`column_stats` on; the query `{condition}` (`.collect()` of three columns), medians of {args.runs} "
             f"interleaved runs after one warm-up; load average at the end {load_average()}.", ""]
    lines += markdown_table(["table", "read", "files read", "<= 1/3 of the files", "rows", "median s", "runs s"],
                            table)
    lines += ["Machine: " + ", ".join(f"{k} {v}" for k, v in facts(java).items()) + ".",
              "Versions: " + ", ".join(f"{k} {v}" for k, v in versions().items()) + ".", ""]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
