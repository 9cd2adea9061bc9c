"""Where an upsert's wall time goes in Spark: its jobs, stages and tasks on the timeline, from Spark's event log.

Upserts a batch (``--variant``) into a table of ``--rows`` rows (the benchmark's workload, bulk-inserted once
under ``--work`` and restored before each run, as ``run.py`` does), ``--runs`` times in one local[2] session
with the event log on, then prints for each run: the write's wall time and the commit's stage timings; each
Spark job of the write (start, duration) and, per stage, its tasks (count, summed duration, the longest) and
the time a core sat idle while the stage's last tasks ran (the tail); and what is left of the wall time
outside the jobs (the driver: listing, planning, commit). ``--option KEY=VALUE`` (repeatable) adds a write
option to the upserts (not to the load). ``--pause SECONDS`` waits that long before each run: more than 60
and Spark has stopped its idle Python workers, so the run starts new ones, as a write after a pause does.

    python -m benchmarks.write_timeline --rows 20000000 --work /tmp/timeline
    python -m benchmarks.write_timeline --rows 5000000 --work /tmp/timeline --table-type MERGE_ON_READ \
        --variant uniform --option hoodie.merge.small.file.group.candidates.limit=0
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import time
from collections import defaultdict
from pathlib import Path

from pyspark.sql import SparkSession

import hoodie_datasource
from benchmarks import ours, workload
from benchmarks.copies import restore
from benchmarks.pristine import stage

logger = logging.getLogger(__name__)
CORES = 2


def _session(events: Path) -> SparkSession:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (SparkSession.builder.master(f"local[{CORES}]").appName("hoodie-write-timeline")
               .config("spark.sql.shuffle.partitions", "8").config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false").config("spark.sql.session.timeZone", "UTC")
               .config("spark.driver.memory", "8g").config("spark.eventLog.enabled", "true")
               .config("spark.eventLog.dir", str(events)).config("spark.eventLog.compress", "false")
               .config("spark.eventLog.rolling.enabled", "false"))
    spark = hoodie_datasource.session(builder)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _events(events: Path) -> list[dict]:
    (log,) = [p for p in events.rglob("*") if p.is_file() and not p.name.endswith(".inprogress.crc")]
    with open(log) as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _report(events: list[dict], started_ms: int, ended_ms: int) -> None:
    """The jobs that started within [started_ms, ended_ms], their stages' tasks, and the idle tail."""
    jobs = [e for e in events if e["Event"] == "SparkListenerJobStart" and started_ms <= e["Submission Time"] <= ended_ms]
    ends = {e["Job ID"]: e["Completion Time"] for e in events if e["Event"] == "SparkListenerJobEnd"}
    tasks = defaultdict(list)
    for e in events:
        if e["Event"] == "SparkListenerTaskEnd":
            info = e["Task Info"]
            tasks[e["Stage ID"]].append((info["Launch Time"], info["Finish Time"]))
    in_jobs = 0
    for job in jobs:
        start, end = job["Submission Time"], ends[job["Job ID"]]
        in_jobs += end - start
        logger.info("  job %d at +%d ms: %d ms", job["Job ID"], start - started_ms, end - start)
        for stage_id in job["Stage IDs"]:
            spans = tasks.get(stage_id)
            if not spans:
                continue  # skipped (its shuffle was written by an earlier job)
            durations = [b - a for a, b in spans]
            first, last = min(a for a, _ in spans), max(b for _, b in spans)
            busy = sum(durations)
            tail = CORES * (last - first) - busy  # core-ms idle between the stage's first launch and last end
            logger.info("    stage %d: %d tasks, %d ms of task time (longest %d), %d ms wall, %d core-ms idle",
                        stage_id, len(spans), busy, max(durations), last - first, max(tail, 0))
    logger.info("  outside the jobs: %d ms", (ended_ms - started_ms) - in_jobs)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--work", type=Path, required=True, help="scratch folder (the pristine table is kept there)")
    parser.add_argument("--table-type", default=ours.COW, choices=(ours.COW, ours.MOR))
    parser.add_argument("--variant", default="seed", choices=sorted(workload.VARIANTS))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="a write option of the upserts (repeatable)")
    parser.add_argument("--pause", type=float, default=0, help="seconds to wait before each run")
    args = parser.parse_args(argv)
    if any("=" not in option for option in args.option):
        parser.error("--option takes KEY=VALUE")
    extra = dict(option.split("=", 1) for option in args.option)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logger.setLevel(logging.INFO)
    events = args.work / "events"
    shutil.rmtree(events, ignore_errors=True)
    events.mkdir(parents=True)
    spark = _session(events)
    variant = workload.VARIANTS[args.variant]
    pristine, target = args.work / f"pristine_{args.rows}_{args.table_type}", args.work / "target"
    if not pristine.exists():
        base = stage(spark, workload.base_table(args.rows, variant), args.work / "staging" / "base.parquet", False)
        ours.write(base, pristine, args.table_type, "bulk_insert")
    batch = stage(spark, workload.upsert_batch(args.rows, variant), args.work / "staging" / "batch.parquet", True)
    runs = []
    for _ in range(args.runs):
        restore(pristine, target)
        time.sleep(args.pause)
        started = time.time()
        ours.write(batch, target, args.table_type, "upsert", extra)
        runs.append((int(started * 1000), int(time.time() * 1000), ours.commit_facts(target)["stages"]))
    spark.stop()  # flushes the event log
    found = _events(events)
    for i, (started_ms, ended_ms, stages) in enumerate(runs, start=1):
        logger.info("run %d: %d ms; commit stages %s", i, ended_ms - started_ms,
                    {k: v for k, v in stages.items() if not k.startswith("index.")})
        _report(found, started_ms, ended_ms)


if __name__ == "__main__":
    main()
