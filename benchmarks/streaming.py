"""Streams: the freshness of the seed's pipeline, and the rows per second a stream sustains into a large table.

    python benchmarks/streaming.py --rows 5000000 --batch-rows 250000 --batches 4 --files 6

* Freshness. Files of trips land in a directory (written elsewhere, renamed into place); stream 1 reads
  them (``readStream.json``) into MERGE_ON_READ table A; stream 2 reads A's commits
  (``readStream.format("hoodie")``), transforms them and writes MERGE_ON_READ table B. A file's freshness
  is the time from its landing to the completion of the commit of B that made its rows visible (the
  completed instant file's modification time). Measured with 10-second and 1-minute triggers on both
  streams, ``--files`` files landing every half trigger.
* Throughput. A COPY_ON_WRITE and a MERGE_ON_READ table of ``--rows`` trips; ``--batches`` parquet files
  of ``--batch-rows`` upserts each (the seed batch's mix: updates, most into recent days, and inserts)
  are streamed in with ``maxFilesPerTrigger=1`` and ``Trigger.AvailableNow``: one commit per file. Rows per
  second = rows streamed / wall time of the query.

Results: ``benchmarks/results/streaming.md``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import spark_session  # noqa: E402
from benchmarks.machine import load_average  # noqa: E402
from benchmarks.workload import KEY, ORDERING, PARTITION, SEED, base_table, stored_trips, upsert_batch  # noqa: E402
from hoodie_datasource.client.local_engine import write_local  # noqa: E402
from hoodie_datasource.hoodie_table import HoodieTable  # noqa: E402

logger = logging.getLogger("benchmarks.streaming")
RESULTS = Path(__file__).resolve().parent / "results"
TABLE = {"hoodie.datasource.write.recordkey.field": KEY, "hoodie.datasource.write.precombine.field": ORDERING,
         "hoodie.datasource.write.partitionpath.field": PARTITION}
LANDED = "landed_ms"


def completion_ms(path: str) -> dict[str, float]:
    """Completion time (ms) of each completed write: its completed instant file's modification time."""
    table = HoodieTable(path)
    timeline = table.timeline()
    return {i.timestamp: table.storage.stat(timeline.path_of(i)).modified_ns / 1e6 for i in timeline.completed()}


def _land(folder: str, data: pa.Table, n: int) -> None:
    """Write a JSON file elsewhere, then rename it into the watched folder (it appears whole)."""
    staged = os.path.join(folder, f".staging-{n}.json")
    landed = data.append_column(LANDED, pa.array([int(time.time() * 1000)] * data.num_rows, pa.int64()))
    with open(staged, "w") as f:
        f.writelines(json.dumps(row) + "\n" for row in landed.to_pylist())
    os.replace(staged, os.path.join(folder, f"{n:04d}.json"))


def freshness(spark, work: str, trigger_s: int, files: int, rows_per_file: int) -> list[float]:
    """Seconds from each file's landing to the commit of B that made its rows visible."""
    landing, a, b = (os.path.join(work, name) for name in ("landing", "a", "b"))
    os.makedirs(landing)
    first = stored_trips(np.arange(rows_per_file, dtype=np.int64), 0, 1, False)
    _land(landing, first, 0)  # the first file fixes the schema both streams start with
    schema = spark.read.json(landing).schema
    mor = {**TABLE, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    trigger = f"{trigger_s} seconds"
    into_a = (spark.readStream.schema(schema).json(landing).writeStream.format("hoodie")
              .options(**mor, **{"hoodie.table.name": "a"}).option("checkpointLocation", os.path.join(work, "ca"))
              .trigger(processingTime=trigger).start(a))
    while not os.path.exists(os.path.join(a, ".hoodie", "hoodie.properties")):
        time.sleep(0.2)
    changes = spark.readStream.format("hoodie").load(a)
    transformed = changes.select(KEY, ORDERING, PARTITION, LANDED, (changes.fare * 1.1).alias("fare_eur"))
    into_b = (transformed.writeStream.format("hoodie").options(**mor, **{"hoodie.table.name": "b"})
              .option("checkpointLocation", os.path.join(work, "cb")).trigger(processingTime=trigger).start(b))
    for n in range(1, files):
        time.sleep(trigger_s / 2)
        ids = np.arange(n * rows_per_file, (n + 1) * rows_per_file, dtype=np.int64)
        _land(landing, stored_trips(ids, 0, 1, False), n)
    deadline = time.monotonic() + 6 * trigger_s + 120
    while time.monotonic() < deadline:
        if os.path.exists(os.path.join(b, ".hoodie")) and \
                spark.read.format("hoodie").load(b).count() == files * rows_per_file:
            break
        time.sleep(1)
    into_a.stop()
    into_b.stop()
    done = completion_ms(b)
    rows = spark.read.format("hoodie").load(b).groupBy(LANDED).agg({"_hoodie_commit_time": "max"}).collect()
    assert len(rows) == files, f"{len(rows)} of {files} files reached B"
    return sorted((done[r[1]] - r[0]) / 1000 for r in rows)


def throughput(spark, work: str, table_type: str, rows: int, batch_rows: int, batches: int) -> float:
    """Rows per second a stream of ``batches`` upsert files sustains into a table of ``rows`` rows."""
    path, landing = os.path.join(work, f"t_{table_type}"), os.path.join(work, f"in_{table_type}")
    os.makedirs(landing)
    options = {**TABLE, "hoodie.table.name": "t", "hoodie.datasource.write.table.type": table_type}
    write_local(path, base_table(rows, SEED), {**options, "hoodie.datasource.write.operation": "bulk_insert"})
    for n in range(batches):
        batch = upsert_batch(rows, SEED, seed=100 + n)
        pq.write_table(batch.slice(0, batch_rows) if batch.num_rows > batch_rows else batch,
                       os.path.join(landing, f"{n:04d}.parquet"))
    streamed = sum(pq.read_metadata(os.path.join(landing, f)).num_rows for f in os.listdir(landing))
    schema = spark.read.parquet(landing).schema
    started = time.monotonic()
    query = (spark.readStream.schema(schema).option("maxFilesPerTrigger", "1").parquet(landing)
             .writeStream.format("hoodie").options(**options)
             .option("checkpointLocation", os.path.join(work, f"c_{table_type}"))
             .trigger(availableNow=True).start(path))
    query.awaitTermination()
    seconds = time.monotonic() - started
    assert len(HoodieTable(path).completed_commits()) == batches + 1
    return streamed / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--batch-rows", type=int, default=250_000)
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--files", type=int, default=6)
    parser.add_argument("--file-rows", type=int, default=1000)
    parser.add_argument("--triggers", default="10,60", help="trigger intervals in seconds, comma-separated")
    parser.add_argument("--name", default="streaming")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    spark = spark_session.start("hoodie-bench-streaming")
    lines = [f"# Streaming ({time.strftime('%Y-%m-%d')})", "",
             f"`python benchmarks/streaming.py {shlex.join(sys.argv[1:])}`; load average at start "
             f"{load_average()}; local[2].", ""]
    lines += ["## Freshness of the pipeline (files -> A -> transformed -> B, both MERGE_ON_READ)", "",
              f"{args.files} files of {args.file_rows} trips, one every half trigger.", "",
              "| trigger | median s | max s | each file, s |", "|---|---|---|---|"]
    for trigger in (int(t) for t in args.triggers.split(",")):
        work = tempfile.mkdtemp(prefix="hoodie-stream-")
        try:
            seconds = freshness(spark, work, trigger, args.files, args.file_rows)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        logger.info("trigger %d s: freshness %s", trigger, seconds)
        lines.append(f"| {trigger} s | {statistics.median(seconds):.1f} | {max(seconds):.1f} | "
                     f"{', '.join(f'{s:.1f}' for s in seconds)} |")
    lines += ["", f"## A stream of upserts into a {args.rows:,}-row table", "",
              f"{args.batches} micro-batches of {min(args.batch_rows, upsert_batch(args.rows, SEED).num_rows):,} rows "
              "(the seed batch: updates, most into the latest days, and inserts), one commit each.", "",
              "| table | rows/s |", "|---|---|"]
    for table_type in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        work = tempfile.mkdtemp(prefix="hoodie-stream-")
        try:
            rate = throughput(spark, work, table_type, args.rows, args.batch_rows, args.batches)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        logger.info("%s: %.0f rows/s", table_type, rate)
        lines.append(f"| {table_type} | {rate:,.0f} |")
    spark.stop()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    logger.info("\n%s", "\n".join(lines))


if __name__ == "__main__":
    main()
