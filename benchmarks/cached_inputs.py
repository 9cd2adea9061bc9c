"""What one Spark job over a cached DataFrame costs, by how the DataFrame was made (issue 28).

A DataFrame made from Arrow or pandas (``spark.createDataFrame(table)``) is an RDD of the table's Arrow
batches held in its partitions (``ParallelCollectionRDD``), and its cache keeps that lineage: every task
over the cache is sent with its partition, and a ``coalesce``'s partition with all of its parents, so each
task carries its share of the Arrow data although it reads the cache (Spark warns: "Stage 0 contains a task
of very large size"). A write that reads its input more than once (hoodie's bulk insert counts and samples
it before the write's own job) pays that once a job. The same rows cached from a parquet read, or kept as a
local checkpoint (Spark's default level: rows kept as objects), make tasks of a few KB.

The job measured is the count of the rows by table partition that the bulk insert's layout runs first
(``spark.bulk_insert_partitioning``), over the benchmark's trips, cached in 2 partitions three ways.

    python -m benchmarks.cached_inputs --rows 5000000 --runs 5 --out benchmarks/results/cached_inputs.md
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import shutil
import time
from pathlib import Path

import pyarrow.parquet as pq
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from benchmarks import cli, spark_session
from benchmarks.cpu_time import CpuClock
from benchmarks.machine import load_average
from benchmarks.markdown import markdown_table
from benchmarks.memory import PeakMemory
from benchmarks.timing import Case, interleave
from benchmarks.workload import PARTITION, SEED, base_table

PARTITIONS = 2


def _count_by_partition(df: DataFrame) -> None:
    df.groupBy(F.hash(PARTITION).alias("group")).count().collect()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--work", type=Path, default=Path("/tmp/hoodie-cached-inputs"), help="scratch folder")
    parser.add_argument("--out", type=Path, help="markdown results (default: printed)")
    cli.add_driver_memory(parser, default="12g")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    started, began, load_start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), time.monotonic(), load_average()
    spark = spark_session.start(driver_memory=args.driver_memory)
    table = base_table(args.rows, SEED)
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    pq.write_table(table, args.work / "trips.parquet")
    inputs = {
        "arrow": ("`spark.createDataFrame(table).coalesce(2).cache()`",
                  spark.createDataFrame(table).coalesce(PARTITIONS).cache()),
        "parquet": ("`spark.read.parquet(file).coalesce(2).cache()`",
                    spark.read.parquet(str(args.work / "trips.parquet")).coalesce(PARTITIONS).cache()),
        "checkpoint": ("`spark.createDataFrame(table).coalesce(2).localCheckpoint()`",
                       spark.createDataFrame(table).coalesce(PARTITIONS).localCheckpoint()),
    }
    cases = []
    for key, (label, df) in inputs.items():
        df.count()  # filled before it is measured
        cases.append(Case(key, label, run=functools.partial(_count_by_partition, df)))
    measured = interleave("cached_inputs", cases, args.runs, 1,
                          PeakMemory(spark_session.jvm_pid(spark)), CpuClock(os.getpid(), spark_session.jvm_pid(spark)))
    spark.stop()
    shutil.rmtree(args.work, ignore_errors=True)
    command = "python -m benchmarks.cached_inputs " + " ".join(argv if argv is not None else os.sys.argv[1:])
    lines = ["# One job over a cached DataFrame, by how it was made (issue 28)", "",
             f"`{command}` — started {started}, {(time.monotonic() - began) / 60:.1f} minutes. Load average "
             f"(1, 5, 15 min) at start: {load_start}; at end: {load_average()}.", "",
             f"{args.rows:,} trips in {PARTITIONS} partitions, counted by `hash(dt)` (the bulk insert's count by table "
             f"partition), local[2], one warm-up round, then medians of {args.runs} interleaved runs.", ""]
    lines += markdown_table(["input", "median s", "CPU s (driver, JVM, Python workers)", "runs s"],
                            [[m.label, f"{m.median:.2f}", f"{m.median_cpu:.2f}", ", ".join(f"{s:.2f}" for s in m.seconds)]
                             for m in measured.values()])
    text = "\n".join(lines)
    cli.publish(text, args.out)


if __name__ == "__main__":
    main()
