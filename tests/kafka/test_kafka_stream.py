"""Structured Streaming from a Kafka topic (Spark's Kafka connector) into a hoodie table, exactly once across
a crash: the query's driver is killed (SIGKILL) after the sink committed a micro-batch and before Spark
recorded it in its checkpoint's commit log. Restarted from the same checkpoint, Spark reads that batch's
offsets again; the sink finds the batch id in the table's last commit and skips it, so every record is in
the table once (the operation is ``insert``: a second write would add its rows again)."""

from __future__ import annotations

import signal

import pytest

from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.table_reader import read_table
from tests.kafka.server import require_spark_kafka
from tests.kafka.topics import make_topic, produce
from tests.spark.streams import batches, run_child

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


def trips(first: int, count: int) -> list[dict]:
    return [{"uuid": f"u{i:03d}", "ts": i, "city": ("sf", "nyc")[i % 2], "fare": float(i)}
            for i in range(first, first + count)]


def test_a_kafka_batch_replayed_after_a_crash_is_written_once(tmp_path, table_path, kafka):
    require_spark_kafka()
    topic = make_topic(kafka, partitions=2)
    produce(kafka, topic, trips(0, 20), partition=lambda i: i % 2)  # 2 batches of 10 (maxOffsetsPerTrigger)
    checkpoint = tmp_path / "ckpt"
    arguments = (kafka.bootstrap, topic, table_path, str(checkpoint))

    crashed = run_child("tests.kafka.stream_child", *arguments, killed=True)

    assert crashed.returncode == -signal.SIGKILL, crashed.stderr[-3000:]
    assert batches(table_path) == ["0"]  # the sink committed batch 0 ...
    assert (checkpoint / "offsets" / "0").is_file()  # ... which Spark had planned ...
    assert not (checkpoint / "commits" / "0").exists()  # ... and never marked done

    produce(kafka, topic, trips(20, 6), partition=lambda i: i % 2)
    restarted = run_child("tests.kafka.stream_child", *arguments, killed=False)

    assert restarted.returncode == 0, restarted.stderr[-3000:]
    assert "Skipping micro-batch 0" in restarted.stderr  # Spark read batch 0's offsets again; the sink skipped it
    assert batches(table_path) == ["0", "1", "2"]  # 10 + 10 + 6 records
    table = read_table(table_path, ReadConfig())
    assert sorted(table.column("uuid").to_pylist()) == [f"u{i:03d}" for i in range(26)]
