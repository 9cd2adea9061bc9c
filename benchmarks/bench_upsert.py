"""Upsert, read and table-service timings of hoodie COW and MOR tables, in one warm Spark session.

    python benchmarks/bench_upsert.py --rows 1000000 --runs 3

Writes ``benchmarks/results/upsert_<rows>.md``. Each figure is the median of ``--runs`` runs.
This is the first part of the benchmark suite (our own paths); the comparisons with delta-rs,
pyiceberg and plain Spark parquet reloads are still to come (issue 5).
"""

from __future__ import annotations

import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyspark  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

import hoodie_datasource  # noqa: E402
from benchmarks.workload import base_table, size_arguments, upsert_batch  # noqa: E402
from hoodie_datasource import HoodieTable  # noqa: E402
from hoodie_datasource.config.read_config import ReadConfig  # noqa: E402
from hoodie_datasource.read.planner import plan_read  # noqa: E402

META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def median_of(runs: int, fn) -> float:
    return statistics.median(timed(fn) for _ in range(runs))


def measure(spark, base, batch, table_type: str, path: str, runs: int, rows: int,
            figures: list, stages: list) -> None:
    """Every figure for one table type, appended to ``figures`` (and stage timings to ``stages``)."""
    short = "COW" if table_type == "COPY_ON_WRITE" else "MOR"
    opts = {"table.name": "trips", "recordkey.field": "uuid", "partitionpath.field": "dt",
            "precombine.field": "ts", "storage.type": table_type, "hoodie.clean.automatic": "false"}
    figures.append((f"{short} bulk insert of {rows:,} rows",
                    timed(lambda: base.write.format("hoodie").options(**opts).mode("bulk_insert").save(path))))
    batch.write.format("hoodie").options(**opts).mode("upsert").save(path)  # warm-up
    figures.append((f"{short} upsert of {batch.count():,} rows (1% updates, 0.5% inserts)",
                    median_of(runs, lambda: batch.write.format("hoodie").options(**opts)
                              .mode("upsert").save(path))))
    meta = HoodieTable(path).commit_metadata(HoodieTable(path).latest_commit())["extraMetadata"]
    stages.append((f"{short} upsert", {k: v for k, v in meta.items() if k.startswith("hoodie.stage")}))
    one = spark.read.format("hoodie").load(path).limit(1).drop(*META).cache()
    one.count()
    figures.append((f"{short} upsert of 1 row", median_of(
        runs, lambda: one.write.format("hoodie").options(**opts).mode("upsert").save(path))))
    agg = ("count(*)", "sum(fare)")
    figures.append((f"{short} snapshot count + sum(fare)", median_of(
        runs, lambda: spark.read.format("hoodie").load(path).selectExpr(*agg).collect())))
    files = [os.path.join(path, s.base_relative_path) for s in plan_read(path, ReadConfig()).slices]
    if short == "COW":
        figures.append(("spark.read.parquet count + sum(fare), same files", median_of(
            runs, lambda: spark.read.parquet(*files).selectExpr(*agg).collect())))
        figures.append(("COW snapshot full scan (noop sink)", median_of(
            runs, lambda: spark.read.format("hoodie").load(path).write.format("noop")
            .mode("overwrite").save())))
        figures.append(("spark.read.parquet full scan (noop sink), same files", median_of(
            runs, lambda: spark.read.parquet(*files).write.format("noop").mode("overwrite").save())))
        last = HoodieTable(path).completed_commits()[-2]
        figures.append(("COW incremental pull of the last commits", median_of(
            runs, lambda: spark.read.format("hoodie").option("query", "incremental")
            .option("begin.instant", last).load(path).write.format("noop").mode("overwrite").save())))
    else:
        figures.append(("MOR compaction", timed(lambda: HoodieTable(path).compact())))
        figures.append(("MOR snapshot count + sum(fare) after compaction", median_of(
            runs, lambda: spark.read.format("hoodie").load(path).selectExpr(*agg).collect())))

def main() -> None:
    args = size_arguments(__doc__)

    spark = (SparkSession.builder.master("local[2]").appName("hoodie-bench")
             .config("spark.sql.shuffle.partitions", "8").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").config("spark.sql.session.timeZone", "UTC")
             .config("spark.driver.memory", "8g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    hoodie_datasource.register(spark)
    base = spark.createDataFrame(base_table(args.rows).to_pandas()).cache()
    batch = spark.createDataFrame(upsert_batch(args.rows).to_pandas()).cache()
    base.count(), batch.count()
    work = Path(tempfile.mkdtemp(prefix="hoodie-bench-"))
    figures: list[tuple[str, float]] = []
    stages: list[tuple[str, dict]] = []
    try:
        for table_type in ("COPY_ON_WRITE", "MERGE_ON_READ"):
            measure(spark, base, batch, table_type, str(work / table_type), args.runs, args.rows, figures, stages)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        spark.stop()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    lines = [f"# hoodie upsert benchmark, {args.rows:,} rows", "",
             f"`python benchmarks/bench_upsert.py --rows {args.rows} --runs {args.runs}` "
             f"(median of {args.runs} runs, warm local[2] session)", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
             f"pyspark {pyspark.__version__}, hoodie-datasource {hoodie_datasource.__version__}", "",
             "| measurement | seconds |", "|---|---|"]
    lines += [f"| {name} | {seconds:.2f} |" for name, seconds in figures]
    lines += ["", "Stage timings recorded in the last upsert's commit metadata (ms; `_task` = summed task time):", ""]
    lines += [f"- {name}: {timings}" for name, timings in stages]
    (out / f"upsert_{args.rows}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
