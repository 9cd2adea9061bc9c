"""Kafka into hoodie tables: how fresh the table is, and the rows per second ingestion sustains into a large one.

    python benchmarks/kafka_ingest.py --rows 5000000 --batches 6 --events-per-s 200 --produce-s 60

Kafka is the tests' broker (``tests/kafka/server.py``: ``make kafka``), one broker on loopback; both
pipelines run in one local[2] session:

* the streamer (``JsonKafkaSource``, ``python -m hoodie_datasource.streamer``'s ``run``): offset ranges read in
  Spark tasks with confluent-kafka, one commit a round;
* Structured Streaming: Spark's Kafka connector (``readStream.format("kafka")``, ``from_json``) into the
  hoodie sink, one commit a micro-batch.

* Freshness. A producer sends ``--events-per-s`` trips a second for ``--produce-s`` seconds, each stamped with
  its send time, into a MERGE_ON_READ table, the streamer running a round every 10 seconds
  (``--min-sync-interval-seconds 10``) or the query on a 10-second trigger. An event's freshness is the time
  from its send to the completion of the commit that made it visible to a snapshot (the completed instant
  file's modification time).
* Throughput. A MERGE_ON_READ table of ``--rows`` trips (bulk insert); ``--batches`` upsert batches (the seed
  batch: updates, most into the latest days, and inserts) are produced as JSON, then ingested a batch per
  round or micro-batch (``maxEvents`` / ``maxOffsetsPerTrigger``). Rows per second = rows / wall time.

Results: ``benchmarks/results/kafka_ingest.md``.
"""

from __future__ import annotations

import argparse
import json
import logging
import shlex
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import spark_session  # noqa: E402
from benchmarks.machine import load_average  # noqa: E402
from benchmarks.streaming import TABLE, completion_ms  # noqa: E402
from benchmarks.workload import ORDERING, SEED, base_table, stored_trips, upsert_batch  # noqa: E402
from hoodie_datasource.client.local_engine import write_local  # noqa: E402
from hoodie_datasource.config.read_config import ReadConfig  # noqa: E402
from hoodie_datasource.read.table_reader import read_table  # noqa: E402
from hoodie_datasource.schema.avro_schema import arrow_to_avro_schema  # noqa: E402
from hoodie_datasource.spark.types import spark_schema  # noqa: E402
from hoodie_datasource.streamer.config import parse_config  # noqa: E402
from hoodie_datasource.streamer.streamer import run  # noqa: E402
from tests.kafka.server import require_spark_kafka, spark_kafka_jars, start_kafka  # noqa: E402
from tests.kafka.topics import make_topic  # noqa: E402

logger = logging.getLogger("benchmarks.kafka_ingest")
RESULTS = Path(__file__).resolve().parent / "results"
SENT = "sent_ms"
TRIGGER_S = 10
PIPELINES = ("streamer", "structured streaming")


def _producer(server):
    from confluent_kafka import Producer

    return Producer({"bootstrap.servers": server.bootstrap, "linger.ms": 5, "log_level": 2})


def _send(producer, topic: str, table: pa.Table) -> None:
    for row in table.to_pylist():
        while True:
            try:
                producer.produce(topic, value=json.dumps(row))
                break
            except BufferError:  # the client's queue is full: let it drain
                producer.poll(0.1)
    assert producer.flush(120) == 0


def _streamer_args(work: Path, topic: str, server, schema_file: Path, *extra: str) -> list[str]:
    return ["--target-base-path", str(work / "t"), "--target-table", "t", "--table-type", "MERGE_ON_READ",
            "--source-class", "JsonKafkaSource", "--source-ordering-field", ORDERING,
            "--hoodie-conf", f"hoodie.streamer.source.kafka.topic={topic}",
            "--hoodie-conf", f"bootstrap.servers={server.bootstrap}", "--hoodie-conf", "auto.offset.reset=earliest",
            "--hoodie-conf", f"hoodie.streamer.schemaprovider.source.schema.file={schema_file}",
            *[arg for key, value in TABLE.items() for arg in ("--hoodie-conf", f"{key}={value}")],
            "--continuous", "--post-write-termination-strategy-class", "NoNewDataTerminationStrategy",
            "--hoodie-conf", "max.rounds.without.new.data.to.shutdown=1", *extra]


def _schema_file(work: Path, schema: pa.Schema) -> Path:
    path = work / "trip.avsc"
    path.write_text(json.dumps(arrow_to_avro_schema(schema, "trip", "bench")))
    return path


def _query(spark, server, topic: str, table: str, checkpoint: str, schema: pa.Schema, trigger: dict, **options):
    from pyspark.sql import functions as F

    raw = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", server.bootstrap)
           .option("subscribe", topic).option("startingOffsets", "earliest")
           .options(**{k: str(v) for k, v in options.items()}).load())
    records = raw.select(F.from_json(F.col("value").cast("string"), spark_schema(schema)).alias("r")).select("r.*")
    return (records.writeStream.format("hoodie").options(**TABLE).option("hoodie.table.name", "t")
            .option("hoodie.datasource.write.table.type", "MERGE_ON_READ").option("checkpointLocation", checkpoint)
            .trigger(**trigger).start(table))


def freshness(spark, server, pipeline: str, work: Path, events_per_s: int, produce_s: int) -> list[float]:
    """Seconds from each event's send to the completion of the commit that made it visible."""
    topic = make_topic(server, partitions=2)
    sample = stored_trips(np.arange(1, dtype=np.int64), 0, 1, False)
    schema = sample.schema.append(pa.field(SENT, pa.int64()))
    table = str(work / "t")

    def produce() -> None:
        producer = _producer(server)
        for second in range(produce_s):
            started = time.time()
            ids = np.arange(second * events_per_s, (second + 1) * events_per_s, dtype=np.int64)
            trips = stored_trips(ids, 0, 1, False)
            for i, row in enumerate(trips.to_pylist()):
                producer.produce(topic, value=json.dumps({**row, SENT: int(time.time() * 1000)}))
                if i % 20 == 19:  # spread over the second
                    producer.poll(0)
                    time.sleep(max(0.0, started + (i + 1) / events_per_s - time.time()))
            producer.flush(30)
        assert producer.flush(120) == 0

    sender = threading.Thread(target=produce)
    if pipeline == "streamer":
        cfg = parse_config(_streamer_args(work, topic, server, _schema_file(work, schema),
                                          "--min-sync-interval-seconds", str(TRIGGER_S)))
        sender.start()
        time.sleep(1)
        run(spark, cfg)  # ends after the first round without new data
    else:
        query = _query(spark, server, topic, table, str(work / "checkpoint"), schema,
                       {"processingTime": f"{TRIGGER_S} seconds"})
        sender.start()
        deadline = time.monotonic() + produce_s + 6 * TRIGGER_S + 120
        while time.monotonic() < deadline:
            time.sleep(2)
            if not sender.is_alive() and (work / "t" / ".hoodie").exists() and \
                    read_table(table, ReadConfig()).num_rows == events_per_s * produce_s:
                break
        query.stop()
    sender.join()
    done = completion_ms(table)
    rows = read_table(table, ReadConfig())
    assert rows.num_rows == events_per_s * produce_s, f"{rows.num_rows} of {events_per_s * produce_s} events"
    commit = rows.column("_hoodie_commit_time").to_pylist()
    sent = rows.column(SENT).to_numpy()
    return list((np.array([done[c] for c in commit]) - sent) / 1000)


def throughput(spark, server, base: Path, pipeline: str, work: Path, batches: list[pa.Table]) -> tuple[int, float]:
    """Rows ingested and rows per second, a batch's rows a round or micro-batch, into a copy of ``base``."""
    topic = make_topic(server, partitions=2)
    producer = _producer(server)
    for batch in batches:
        _send(producer, topic, batch)
    rows, per = sum(b.num_rows for b in batches), max(b.num_rows for b in batches)
    shutil.copytree(base, work / "t")
    started = time.monotonic()
    if pipeline == "streamer":
        cfg = parse_config(_streamer_args(work, topic, server, _schema_file(work, batches[0].schema),
                                          "--hoodie-conf", f"hoodie.streamer.kafka.source.maxEvents={per}"))
        summary = run(spark, cfg)
        assert summary.rows == rows, (summary.rows, rows)
    else:
        query = _query(spark, server, topic, str(work / "t"), str(work / "checkpoint"), batches[0].schema,
                       {"availableNow": True}, maxOffsetsPerTrigger=per)
        query.awaitTermination()
    seconds = time.monotonic() - started
    return rows, rows / seconds


def warm_up(spark, server, work: Path) -> None:
    """One streamer round of a few records, so neither measured pipeline pays for the session's first Python
    workers and write."""
    topic = make_topic(server, partitions=2)
    sample = stored_trips(np.arange(10, dtype=np.int64), 0, 1, False)
    _send(_producer(server), topic, sample)
    work.mkdir()
    run(spark, parse_config(_streamer_args(work, topic, server, _schema_file(work, sample.schema))))
    shutil.rmtree(work, ignore_errors=True)


def throughput_section(spark, server, root: Path, pipelines: list[str], rows: int, batch_count: int) -> list[str]:
    """The throughput table: a base table of ``rows`` rows, then each pipeline's upserts into a copy of it."""
    batches = [upsert_batch(rows, SEED, seed=100 + n) for n in range(batch_count)]
    lines = ["", f"## Upserts from Kafka into a {rows:,}-row MERGE_ON_READ table", "",
             f"{batch_count} batches of {batches[0].num_rows:,} JSON records (the seed batch: updates, most "
             "into the latest days, and inserts), one commit each.", "",
             "| pipeline | rows | seconds | rows/s |", "|---|---|---|---|"]
    base = root / "base"
    started = time.monotonic()
    write_local(str(base), base_table(rows, SEED),
                {**TABLE, "hoodie.table.name": "t", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
                 "hoodie.datasource.write.operation": "bulk_insert"})
    logger.info("base table of %d rows in %.0f s", rows, time.monotonic() - started)
    for pipeline in pipelines:
        work = root / f"load-{pipeline.replace(' ', '-')}"
        work.mkdir()
        ingested, rate = throughput(spark, server, base, pipeline, work, batches)
        logger.info("%s: %.0f rows/s", pipeline, rate)
        lines.append(f"| {pipeline} | {ingested:,} | {ingested / rate:.1f} | {rate:,.0f} |")
        shutil.rmtree(work, ignore_errors=True)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--batches", type=int, default=6)
    parser.add_argument("--events-per-s", type=int, default=200)
    parser.add_argument("--produce-s", type=int, default=60)
    parser.add_argument("--pipelines", default=",".join(PIPELINES))
    parser.add_argument("--parts", default="freshness,throughput")
    parser.add_argument("--name", default="kafka_ingest")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    require_spark_kafka()
    pipelines = args.pipelines.split(",")
    root = Path(tempfile.mkdtemp(prefix="hoodie-kafka-"))
    (root / "kafka").mkdir()
    server = start_kafka(root / "kafka")
    spark = spark_session.start("hoodie-bench-kafka", conf={
        "spark.driver.extraClassPath": ":".join(map(str, spark_kafka_jars()))})
    lines = [f"# Kafka ingestion ({time.strftime('%Y-%m-%d')})", "",
             f"`python benchmarks/kafka_ingest.py {shlex.join(sys.argv[1:])}`; load average at start "
             f"{load_average()} (a machine shared with other engineers' work); local[2]; one Kafka broker on "
             "loopback.", ""]
    parts = args.parts.split(",")
    try:
        warm_up(spark, server, root / "warm-up")
        if "freshness" in parts:
            lines += [f"## Freshness at a {TRIGGER_S}-second trigger (MERGE_ON_READ)", "",
                      f"{args.events_per_s} events a second for {args.produce_s} s; seconds from an event's send to "
                      "the completion of the commit that made it visible.", "",
                      "| pipeline | median s | p95 s | max s | commits |", "|---|---|---|---|---|"]
        for pipeline in pipelines if "freshness" in parts else ():
            work = root / f"fresh-{pipeline.replace(' ', '-')}"
            work.mkdir()
            seconds = sorted(freshness(spark, server, pipeline, work, args.events_per_s, args.produce_s))
            commits = len(completion_ms(str(work / "t")))
            logger.info("%s: freshness median %.1f s", pipeline, statistics.median(seconds))
            lines.append(f"| {pipeline} | {statistics.median(seconds):.1f} | {seconds[int(0.95 * len(seconds))]:.1f} "
                         f"| {seconds[-1]:.1f} | {commits} |")
            shutil.rmtree(work, ignore_errors=True)
        if "throughput" in parts:
            lines += throughput_section(spark, server, root, pipelines, args.rows, args.batches)
    finally:
        spark.stop()
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    logger.info("\n%s", "\n".join(lines))


if __name__ == "__main__":
    main()
