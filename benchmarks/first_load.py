"""The first load and the first upsert after it (issue 28): hoodie ``bulk_insert`` with its default layout from
three input shapes, COW and MOR, against Spark's partitioned parquet write of the same DataFrame repartitioned by
``dt``; the files each table partition holds after the load against the bound ceil(bytes / target) + 1; the
first upsert (the seed batch: 1% updates, 90% of them in the latest 3 of 30 days, 0.5% new keys) against
delta-rs MERGE; and load + first upsert end to end against delta-rs (``write_deltalake`` + MERGE) and a Spark
parquet reload. Beside each load and first upsert, its floor (``python_hop``: the same rows shuffled by ``dt`` into
Python tasks and only counted there). Cases interleave (``timing.interleave``), medians of ``--runs`` of the wall
time and of the CPU seconds of the driver, the JVM and its Python workers (``cpu_time.CpuClock``: on 2 cores a
case's CPU seconds over 2 is the least wall time it can take); results as markdown.

Input shapes, each of the same rows; the first upsert's batch comes in the shape its table's load came in:

* ``tiny``: a DataFrame from Arrow in ~200 partitions, each holding every day's rows (PySpark before 4.1 made
  one Arrow batch of 10,000 rows a partition; 4.3 makes ``defaultParallelism`` partitions, so here: 200
  slices of the Arrow table, each made a DataFrame, unioned);
* ``files``: a read of 200 parquet files, each holding every day's rows;
* ``cached``: a cached DataFrame of 2 partitions.

    python -m benchmarks.first_load --rows 2000000,5000000 --runs 5 --work /tmp/first_load \\
        --out benchmarks/results/first_load.md
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import math
import os
import shutil
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession

from benchmarks import cli, ours, peer_delta, spark_session
from benchmarks.copies import restore
from benchmarks.cpu_time import CpuClock
from benchmarks.fixtures import stage
from benchmarks.machine import load_average
from benchmarks.memory import PeakMemory
from benchmarks.python_hop import python_hop_case
from benchmarks.spark_parquet import partitioned_write_case, reload_case
from benchmarks.timing import Case, Measurement, interleave
from benchmarks.workload import PARTITION, SEED, apply_batch, base_table, upsert_batch

logger = logging.getLogger(__name__)

SHAPES = ("tiny", "files", "cached")
FORMATS = {"cow": ours.COW, "mor": ours.MOR}
TARGET = 120 * 1024 * 1024  # hoodie.parquet.max.file.size's default
# an uncounted upsert first: the first shape's upserts ran first in the session, warming the JVM and the
# Python workers (MOR at 2M: 0.9-1.4 s, against 0.56-0.62 s after)
UPSERT_WARMUP = 1
INPUT_FILES = 200
UPSERT_TARGETS = {"cow": 1.0, "mor": 0.3}  # against delta-rs MERGE
UPSERT_TASKS = 2  # the first upsert's write tasks: one per core (its batch is a few MB)
QUIET_RUN = ("python -m benchmarks.first_load --rows 2000000,5000000 --runs 5 --work /tmp/first_load "
             "--out benchmarks/results/first_load.md")


@dataclass
class SizeResult:
    rows: int
    batch_rows: int
    loads: dict[str, dict[str, Measurement]] = field(default_factory=dict)  # by shape
    layouts: dict[str, dict[str, dict]] = field(default_factory=dict)  # shape -> format -> files per partition
    upserts: dict[str, dict[str, Measurement]] = field(default_factory=dict)  # by shape, and "peers"
    peers: dict[str, Measurement] = field(default_factory=dict)  # delta-rs load, Spark reload


def _shapes(spark: SparkSession, base: pa.Table, root: Path) -> dict[str, DataFrame]:
    files = root / "input_files"
    files.mkdir(parents=True)
    per_file = math.ceil(base.num_rows / INPUT_FILES)
    for i in range(INPUT_FILES):
        pq.write_table(base.slice(i * per_file, per_file), files / f"part-{i:03d}.parquet")
    cached = spark.createDataFrame(base).coalesce(2).cache()
    cached.count()
    # not createDataFrame(base).repartition(200): Spark's own write, repartitioned by dt, would drop that
    # round-robin shuffle (CollapseRepartition) while every other reader of the DataFrame pays for it
    tiny = functools.reduce(DataFrame.union, [spark.createDataFrame(base.slice(i * per_file, per_file))
                                              for i in range(INPUT_FILES)])
    return {"tiny": tiny, "files": spark.read.parquet(str(files)), "cached": cached}


def layout(path: Path) -> dict:
    """Files per table partition after a load (latest base files; a load writes one version) against the
    bound ceil(bytes / target) + 1."""
    per_partition = defaultdict(list)
    for day in (d for d in os.listdir(path) if not d.startswith(".")):
        for name in (n for n in os.listdir(path / day) if n.endswith(".parquet")):
            per_partition[day].append((path / day / name).stat().st_size)
    over = {day: len(sizes) for day, sizes in per_partition.items() if len(sizes) > math.ceil(sum(sizes) / TARGET) + 1}
    files = [len(sizes) for sizes in per_partition.values()]
    sizes = [s for group in per_partition.values() for s in group]
    return {"partitions": len(per_partition), "files": sum(files), "max_files": max(files),
            "mean_mb": sum(sizes) / len(sizes) / 2**20, "over_bound": over}


def measure_size(spark: SparkSession, rows: int, runs: int, root: Path, memory: PeakMemory,
                 cpu: CpuClock) -> SizeResult:
    base, batch = base_table(rows, SEED), upsert_batch(rows, SEED)
    result = SizeResult(rows, batch.num_rows)
    shapes, batches = _shapes(spark, base, root / "base"), _shapes(spark, batch, root / "batch")
    for shape, df in shapes.items():
        loads = root / "load" / shape
        cases = [ours.bulk_insert_case(key, f"hoodie {key.upper()} bulk_insert", df, loads / key, table_type)
                 for key, table_type in FORMATS.items()]
        cases.append(partitioned_write_case("spark", f'Spark repartition("{PARTITION}").write.partitionBy',
                                            df.repartition(PARTITION), loads / "spark"))
        cases.append(python_hop_case("floor", f'Spark repartition("{PARTITION}") into Python, counted (the floor)', df))
        result.loads[shape] = interleave(f"load/{shape}", cases, runs, 0, memory, cpu)
        result.layouts[shape] = {key: layout(loads / key) for key in FORMATS}
        logger.info("%s: %s", shape, json.dumps(result.layouts[shape]))
        pristine = root / "pristine" / shape
        for key in FORMATS:
            restore(loads / key, pristine / key)
        shutil.rmtree(loads)
        result.upserts[shape] = interleave(f"upsert/{shape}", [
            *(ours.upsert_case(key, f"hoodie {key.upper()} upsert", batches[shape], pristine / key,
                               root / "work" / key, table_type) for key, table_type in FORMATS.items()),
            python_hop_case("floor", f"the batch shuffled by {PARTITION} into 2 Python tasks, counted (the floor)",
                            batches[shape], tasks=UPSERT_TASKS)], runs, UPSERT_WARMUP, memory, cpu)
    result.peers = _peers(spark, base, batch, root, runs, memory, cpu)
    for df in (*shapes.values(), *batches.values()):
        df.unpersist()
    return result


def _peers(spark: SparkSession, base: pa.Table, batch: pa.Table, root: Path, runs: int,
           memory: PeakMemory, cpu: CpuClock) -> dict[str, Measurement]:
    """delta-rs: ``write_deltalake`` of the Arrow table, then MERGE of the batch; Spark: the reload of all
    rows with the batch applied (cached, so only the rewrite is timed)."""
    delta, pristine = root / "peers" / "delta", root / "pristine" / "delta"
    delta_load = Case("delta_load", "delta-rs write_deltalake", run=lambda: peer_delta.load(base, delta, False),
                      prepare=lambda: shutil.rmtree(delta, ignore_errors=True), spark=False)
    measured = interleave("peers/load", [delta_load], runs, 0, memory, cpu)
    restore(delta, pristine)
    merged = stage(spark, apply_batch(base, batch), root / "staging" / "merged.parquet", cache=True)
    reload_pristine = root / "pristine" / "reload"
    merged.write.partitionBy(PARTITION).parquet(str(reload_pristine))
    measured |= interleave("peers/upsert", [
        peer_delta.merge_case("delta_merge", "delta-rs MERGE", batch, pristine, root / "work" / "delta"),
        reload_case("reload", "Spark parquet reload (all rows, batch applied)", merged, reload_pristine,
                    root / "work" / "reload")], runs, 0, memory, cpu)
    merged.unpersist()
    return measured


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x"


def _cpu(m: Measurement) -> str:
    """The median CPU seconds of a case's runs: the driver, the JVM and the Python workers together."""
    return f"{m.median_cpu:.2f}" if m.median_cpu is not None else "-"


def report(results: list[SizeResult], command: str, started: str, minutes: float, loads: tuple, shared: bool) -> str:
    lines = ["# The first load and the first upsert after it (issue 28)", "",
             f"`{command}` — started {started}, {minutes:.1f} minutes. Load average (1, 5, 15 min) at start: "
             f"{loads[0]}; at end: {loads[1]}.", ""]
    if shared:
        lines += ["**The machine was shared with other engineers' test runs while this ran** (2 cores, load average "
                  "above): the times are indicative, the ratios between interleaved cases less so than on a quiet "
                  "machine; file counts and layouts are exact. On a quiet machine: "
                  f"`{QUIET_RUN}`.", ""]
    lines += ["hoodie runs with its defaults (`hoodie.bulkinsert.sort.mode` unset: the size-balanced layout; "
              "BLOOM index), table partitioned by `dt` (30 days), uuid keys; local[2]. Input shapes: "
              "`tiny` = 200 Arrow slices each made a DataFrame, unioned (~200 partitions, each holding every day's rows); "
              "`files` = a read of 200 parquet files; `cached` = a cached 2-partition DataFrame. The first upsert's batch "
              "comes in the shape its table's load came in. The floor (`benchmarks/python_hop.py`): the same rows "
              "shuffled by `dt` and handed to Python tasks as Arrow, where they are only counted; every write that "
              "shuffles by partition and writes in Python pays at least that. CPU s: the driver's, the JVM's and its "
              "Python workers' CPU seconds (on 2 cores, a run takes at least half of them).", ""]
    for r in results:
        lines += [f"## {r.rows:,} rows (first upsert: {r.batch_rows:,} rows)", "",
                  "### The load", "",
                  "| shape | case | median s | CPU s | rows/s | vs Spark | files | max files / partition | bound met | "
                  "mean file MB | stage ms (profile, job; tasks: input, keys, meta, bloom, encode, upload) |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for shape, measured in r.loads.items():
            spark_s = measured["spark"].median
            for key, m in measured.items():
                lay = r.layouts[shape].get(key)
                stages = m.facts[-1].get("stages", {}) if m.facts else {}
                shown = ", ".join(str(stages.get(s, "-")) for s in (
                    "profile", "job", "input_task", "keys_task", "meta_task", "bloom_task", "encode_task", "upload_task"))
                lines.append(
                    f"| {shape} | {m.label} | {m.median:.2f} | {_cpu(m)} | {r.rows / m.median:,.0f} | "
                    f"{_ratio(m.median, spark_s)} | "
                    + (f"{lay['files']} | {lay['max_files']} | {'yes' if not lay['over_bound'] else lay['over_bound']} | "
                       f"{lay['mean_mb']:.1f} | {shown} |" if lay else "- | - | - | - | - |"))
        merge = r.peers["delta_merge"].median
        lines += ["", "### The first upsert after the load", "",
                  f"delta-rs MERGE of the same batch: {merge:.2f} s (median; {_cpu(r.peers['delta_merge'])} CPU s). "
                  "Targets: COW <= 1.0x, MOR <= 0.3x.", "",
                  "| shape | case | median s | CPU s | vs delta-rs MERGE | target met | files written |",
                  "|---|---|---|---|---|---|---|"]
        for shape, measured in r.upserts.items():
            for key, m in measured.items():
                target = UPSERT_TARGETS.get(key)
                met = "-" if target is None else "yes" if m.median <= target * merge else "**no**"
                files = m.median_fact("files")
                lines.append(f"| {shape} | {m.label} | {m.median:.2f} | {_cpu(m)} | {_ratio(m.median, merge)} | {met} | "
                             f"{int(files) if files is not None else '-'} |")
        delta_total = r.peers["delta_load"].median + merge
        reload_total = None
        lines += ["", "### Load + first upsert, end to end", "",
                  f"delta-rs (write_deltalake {r.peers['delta_load'].median:.2f} s + MERGE {merge:.2f} s): "
                  f"{delta_total:.2f} s.", "",
                  "| shape | case | load + upsert s | vs delta-rs | vs Spark parquet (write + reload) |",
                  "|---|---|---|---|---|"]
        for shape in r.loads:
            reload_total = r.loads[shape]["spark"].median + r.peers["reload"].median
            for key in FORMATS:
                total = r.loads[shape][key].median + r.upserts[shape][key].median
                lines.append(f"| {shape} | hoodie {key.upper()} | {total:.2f} | {_ratio(total, delta_total)} | "
                             f"{_ratio(total, reload_total)} |")
            lines.append(f"| {shape} | Spark parquet write + reload ({r.peers['reload'].median:.2f} s) | "
                         f"{reload_total:.2f} | {_ratio(reload_total, delta_total)} | 1.00x |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="2000000", help="table sizes, comma separated")
    parser.add_argument("--work", type=Path, required=True, help="scratch folder (emptied first)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, help="markdown results (default: printed)")
    parser.add_argument("--shared", action="store_true", help="say in the results that the machine was shared")
    cli.add_driver_memory(parser, why=": Spark's own write of 5M rows as 200 unioned Arrow slices needs more than 8g")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logger.setLevel(logging.INFO)
    logging.getLogger("benchmarks.timing").setLevel(logging.INFO)
    started, began, load_start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), time.monotonic(), load_average()
    spark = spark_session.start(driver_memory=args.driver_memory)
    memory = PeakMemory(spark_session.jvm_pid(spark))
    cpu = CpuClock(os.getpid(), spark_session.jvm_pid(spark))
    results = []
    for rows in (int(r) for r in args.rows.split(",")):
        shutil.rmtree(args.work, ignore_errors=True)
        results.append(measure_size(spark, rows, args.runs, args.work / str(rows), memory, cpu))
    spark.stop()
    shutil.rmtree(args.work, ignore_errors=True)
    command = "python -m benchmarks.first_load " + " ".join(argv if argv is not None else os.sys.argv[1:])
    text = report(results, command, started, (time.monotonic() - began) / 60, (load_start, load_average()), args.shared)
    cli.publish(text, args.out)


if __name__ == "__main__":
    main()
