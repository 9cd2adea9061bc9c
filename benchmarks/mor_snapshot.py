"""Merge-on-read snapshots before and after compaction, alternating, in one Spark session.

``python benchmarks/mor_snapshot.py ROOT [--runs 3]``: ROOT holds merge-on-read tables ``<variant>``
(the batch upserted into log files) and ``<variant>_compacted`` (the same, compacted), e.g. ``seed``
and ``uniform``; every round reads each table once with a full scan and with count + sum(fare), and the
medians and the before/after ratios are printed (the issue-15 target: before <= 1.5x after), in wall
seconds and in CPU seconds of the JVM and its Python workers (less sensitive to a busy machine).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from benchmarks import spark_session
from benchmarks.cpu_time import tree_seconds
from benchmarks.reads import snapshot
from benchmarks.spark_parquet import count_and_sum, full_scan
from benchmarks.spark_session import jvm_pid


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("root", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    spark = spark_session.start()
    variants = sorted(p.name for p in args.root.iterdir() if (p.parent / f"{p.name}_compacted").is_dir())
    cases = [(f"{v}{suffix} {label}", args.root / f"{v}{suffix}", read)
             for v in variants for label, read in (("scan", full_scan), ("agg", count_and_sum))
             for suffix in ("", "_compacted")]
    for _, path, read in cases:  # warm up: the JVM, the Python workers, the page cache
        read(snapshot(spark, path))
    pid = jvm_pid(spark)
    times: dict[str, list[float]] = {name: [] for name, _, _ in cases}
    cpu: dict[str, list[float]] = {name: [] for name, _, _ in cases}
    for _ in range(args.runs):
        for name, path, read in cases:
            start, start_cpu = time.perf_counter(), tree_seconds(pid)
            read(snapshot(spark, path))
            times[name].append(time.perf_counter() - start)
            cpu[name].append(tree_seconds(pid) - start_cpu)
    for unit, measured in (("s", times), ("cpu s", cpu)):
        medians = {name: statistics.median(runs) for name, runs in measured.items()}
        for name, runs in measured.items():
            after = medians.get(name.replace(" ", "_compacted ", 1)) if "_compacted" not in name else None
            ratio = f"  {medians[name] / after:.2f}x after compaction" if after else ""
            print(f"{name:32} median {medians[name]:6.2f} {unit:5}  runs {', '.join(f'{r:.2f}' for r in runs)}{ratio}")
    spark.stop()


if __name__ == "__main__":
    main()
