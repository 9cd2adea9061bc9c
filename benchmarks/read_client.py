"""The read client against a filtered scan (issue 30, part 3): ``HoodieReadClient(spark, path).read_keys(keys)`` of
1,000 random existing keys (with their ``dt``) against ``spark.read.format("hoodie").load(path).where(uuid in
(...))``, at each ``--rows`` (the ``benchmarks/workload.py`` base table, uuid-like keys, 30 day partitions), on a
copy-on-write table under the BLOOM index and under a BUCKET index (4 buckets a partition), and a merge-on-read one
(BLOOM) after the seed upsert (1% updates in log files). Both sides collect the rows; the client is made in the timed
region (it loads the table, as the scan plans it). Cases interleave (``timing.interleave``), medians of ``--runs``
after a warm-up round; results as markdown, with the file groups each side read: the client's, those of the keys'
records (it reads the groups the index names, which hold them: tests/*/test_read_client.py), the scan's, Spark's own
count of the files its scans read.

    python -m benchmarks.read_client --rows 5000000,20000000 --runs 3 --work /tmp/read_client --shared
"""

from __future__ import annotations

import logging
import shlex
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from benchmarks import cli, ours, spark_session
from benchmarks.fixtures import stage
from benchmarks.machine import facts, load_average, versions
from benchmarks.memory import PeakMemory
from benchmarks.timing import Case, Measurement, interleave
from benchmarks.workload import KEY, PARTITION, SEED, base_table, stored_trips, upsert_batch
from hoodie_datasource import HoodieReadClient, HoodieTable
from hoodie_datasource.table.file_names import BaseFileName
from hoodie_datasource.table.meta_columns import FILE_NAME_COLUMN

logger = logging.getLogger(__name__)

KEYS = 1000
TABLES = {  # name: (table type, index options, label)
    "cow_bloom": (ours.COW, {}, "COW, BLOOM index"),
    "cow_bucket": (ours.COW, ours.BUCKET_INDEX, "COW, BUCKET index (4 buckets a partition)"),
    "mor_bloom": (ours.MOR, {}, "MOR, BLOOM index, after the seed upsert (1% updates in log files)"),
}
CASES = {"read_keys": "HoodieReadClient.read_keys", "scan": 'format("hoodie").load().where(uuid in keys)'}


@dataclass
class SizeResult:
    rows: int
    groups: dict[str, int] = field(default_factory=dict)  # file groups of each table
    measured: dict[str, dict[str, Measurement]] = field(default_factory=dict)  # by table


def _file_group(name: str) -> str:
    """A record's file group from its ``_hoodie_file_name`` (a log record's is its file id)."""
    parsed = BaseFileName.parse(name)
    return parsed.file_id if parsed is not None else name


def _scan_files(df: DataFrame) -> int | None:
    """The files Spark's scans of ``df``'s last run read (their ``number of files read`` metrics), or None when the
    plan does not say."""
    try:
        plan = df._jdf.queryExecution().executedPlan()
        if plan.getClass().getSimpleName() == "AdaptiveSparkPlanExec":
            plan = plan.executedPlan()
        leaves = plan.collectLeaves()
        total, found = 0, False
        for i in range(leaves.size()):
            metrics = leaves.apply(i).metrics()
            if metrics.contains("numFiles"):
                total += int(metrics.apply("numFiles").value())
                found = True
        return total if found else None
    except Exception:  # noqa: BLE001 - a plan of another shape: the figure is left out
        return None


def _cases(spark: SparkSession, path: Path, index: dict[str, str], keys: pa.Table) -> list[Case]:
    keys_df = spark.createDataFrame(keys).cache()
    keys_df.count()
    wanted = keys.column(KEY).to_pylist()
    seen: dict[str, Any] = {}

    def read_keys() -> None:
        rows = HoodieReadClient(spark, str(path), index).read_keys(keys_df).select(FILE_NAME_COLUMN).collect()
        seen["read_keys"] = {"rows": len(rows), "groups": len({_file_group(r[0]) for r in rows})}

    def scan() -> None:
        df = spark.read.format("hoodie").load(str(path)).where(F.col(KEY).isin(wanted))
        seen["scan"] = {"rows": len(df.collect()), "files": _scan_files(df)}

    return [Case("read_keys", CASES["read_keys"], run=read_keys, facts=lambda: dict(seen["read_keys"])),
            Case("scan", CASES["scan"], run=scan, facts=lambda: dict(seen["scan"]))]


def _tables(spark: SparkSession, rows: int, root: Path) -> dict[str, Path]:
    base = stage(spark, base_table(rows, SEED), root / "staging" / "base.parquet", cache=False)
    batch = stage(spark, upsert_batch(rows, SEED), root / "staging" / "batch.parquet", cache=False)
    paths = {}
    for name, (table_type, index, _) in TABLES.items():
        path = root / name
        started = time.perf_counter()
        ours.write(base, path, table_type, "bulk_insert", index)
        if table_type == ours.MOR:
            ours.write(batch, path, table_type, "upsert", index)
        logger.info("loaded %s: %.1f s", name, time.perf_counter() - started)
        paths[name] = path
    return paths


def measure_size(spark: SparkSession, rows: int, runs: int, root: Path, memory: PeakMemory) -> SizeResult:
    result = SizeResult(rows)
    ids = np.sort(np.random.default_rng(30).choice(rows, KEYS, replace=False))
    keys = stored_trips(ids, 0, 1, SEED.time_prefixed).select([KEY, PARTITION])
    assert pc.count_distinct(keys.column(KEY)).as_py() == KEYS
    for name, path in _tables(spark, rows, root).items():
        index = TABLES[name][1]
        result.groups[name] = len(HoodieTable(str(path)).table.fs_view.latest_file_slices())
        result.measured[name] = interleave(f"{rows}/{name}", _cases(spark, path, index, keys), runs, 1, memory)
        for case, m in result.measured[name].items():
            assert m.median_fact("rows") == KEYS, (name, case, m.facts)
    return result


def report(results: list[SizeResult], command: str, started: str, minutes: float, loads: tuple[str, str],
           shared: bool, java: str) -> str:
    lines = ["# The read client against a filtered scan (issue 30, part 3)", "",
             f"`{command}`: started {started}, {minutes:.1f} minutes. Load average (1, 5, 15 min) at start: "
             f"{loads[0]}; at end: {loads[1]}.", ""]
    if shared:
        lines += ["**The machine was shared with other engineers' test runs while this ran** (2 cores, load average "
                  "above): the times are indicative; the ratios between interleaved cases hold better; rows and files "
                  "read are exact.", ""]
    lines += [f"{KEYS:,} random existing keys (uuid-like, spread over the whole table) with their `dt`, as a cached "
              "DataFrame. `read_keys`: the client made and the keys' records collected (`HoodieReadClient(spark, "
              "path, index options).read_keys(keys).collect()`). The scan: `spark.read.format(\"hoodie\").load(path)"
              f".where(col(\"{KEY}\").isin(keys)).collect()` in the session of `hoodie_datasource.session` (the "
              "jvm-shim hands base files to Spark's parquet scan, the key filter pushed down). local[2], "
              f"`spark.sql.shuffle.partitions={spark_session.SHUFFLE_PARTITIONS}`; tables bulk-inserted with the "
              "library's defaults (30 day partitions). Medians of the counted runs after one warm-up round; cases "
              "interleaved.", "",
              "File groups read: the client's, the distinct groups of the records it returned (it reads exactly the "
              "groups the index names, which are those holding the keys: `tests/unit/test_read_client.py`, "
              "`tests/spark/test_read_client.py`); the scan's, Spark's `number of files read` of its scans.", "",
              f"What the figures say: {KEYS:,} random keys over 30 day partitions fall into every file group of these "
              "tables, so the index prunes nothing and both sides decode every base file; the client's lookup (bloom "
              "probes, bucket hashes) costs little next to that, and its reads (each named group by one Python "
              "task, decoded whole, then filtered by key) take about what the scan takes. The client reads fewer "
              "files only when the keys fall into fewer file groups (keys of a few partitions, or few keys): it "
              "then reads just those, while the scan reads every file whose key statistics do not rule the keys "
              "out (random uuid keys: all of them).", ""]
    for r in results:
        lines += [f"## {r.rows:,} rows", "",
                  "| table | file groups | read_keys s | files read | scan s | files read | read_keys / scan |",
                  "|---|---|---|---|---|---|---|"]
        for name, measured in r.measured.items():
            ours_m, scan_m = measured["read_keys"], measured["scan"]
            scan_files = scan_m.median_fact("files")
            lines.append(f"| {TABLES[name][2]} | {r.groups[name]} | {ours_m.median:.2f} | "
                         f"{int(ours_m.median_fact('groups'))} | {scan_m.median:.2f} | "
                         f"{int(scan_files) if scan_files is not None else '-'} | "
                         f"{ours_m.median / scan_m.median:.2f}x |")
        lines += ["", "Runs (s): " + "; ".join(
            f"{name} {case} {', '.join(f'{s:.2f}' for s in m.seconds)}"
            for name, measured in r.measured.items() for case, m in measured.items()), ""]
    lines += ["## Machine", ""] + [f"- {k}: {v}" for k, v in {**facts(java), **versions()}.items()] + [""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = cli.parser(__doc__)
    parser.add_argument("--work", type=Path, required=True, help="scratch folder (emptied first)")
    parser.add_argument("--shared", action="store_true", help="say in the results that the machine was shared")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    for name in (__name__, "benchmarks.timing"):
        logging.getLogger(name).setLevel(logging.INFO)
    started, began, load_start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), time.monotonic(), load_average()
    spark = spark_session.start()
    java = spark.sparkContext._jvm.java.lang.System.getProperty("java.version")
    memory = PeakMemory(spark_session.jvm_pid(spark))
    results = []
    for rows in args.rows:
        shutil.rmtree(args.work, ignore_errors=True)
        results.append(measure_size(spark, rows, args.runs, args.work / str(rows), memory))
        shutil.rmtree(args.work, ignore_errors=True)
    spark.stop()
    command = shlex.join(["python", "-m", "benchmarks.read_client", *(argv if argv is not None else sys.argv[1:])])
    text = report(results, command, started, (time.monotonic() - began) / 60, (load_start, load_average()),
                  args.shared, java)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "read_client.md").write_text(text)


if __name__ == "__main__":
    main()
