"""The streamer reading a Kafka topic on a real broker (``JsonKafkaSource``, ``AvroKafkaSource``): each round
reads the offset ranges after the table's checkpoint in Spark tasks and commits them with the checkpoint in
Hudi's format (``topic,0:n,1:n,...``), so a restart resumes exactly there; bad records fail the round or go
to the error table; records deleted before they were read fail the round naming partitions and offsets."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys

import pytest

from hoodie_datasource.errors import InvalidRecordError, KafkaDataLossError, KafkaSourceError
from hoodie_datasource.hoodie_table import HoodieTable
from hoodie_datasource.streamer.checkpoint import CHECKPOINT_KEY
from hoodie_datasource.streamer.config import parse_config
from hoodie_datasource.streamer.kafka_offsets import OffsetRange
from hoodie_datasource.streamer.kafka_source import read_range
from hoodie_datasource.streamer.streamer import run, run_round
from tests.conftest import REPO
from tests.kafka.topics import AVRO_SCHEMA, avro_value, delete_records, delete_topic, make_topic, produce
from tests.unit.small_tables import read_pairs

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


def rec(i: int, v: str = "a", ts: int = 1) -> dict:
    return {"id": f"k{i:03d}", "ts": ts, "p": "x" if i % 2 else "y", "v": v}


def args(tmp_path, kafka, topic: str, *extra: str, source: str = "JsonKafkaSource") -> list[str]:
    return ["--target-base-path", str(tmp_path / "t"), "--target-table", "t",
            "--source-class", f"org.apache.hudi.utilities.sources.{source}",
            "--hoodie-conf", f"hoodie.streamer.source.kafka.topic={topic}",
            "--hoodie-conf", f"bootstrap.servers={kafka.bootstrap}", "--hoodie-conf", "auto.offset.reset=earliest",
            "--hoodie-conf", "hoodie.datasource.write.recordkey.field=id",
            "--hoodie-conf", "hoodie.datasource.write.partitionpath.field=p", *extra]


def checkpoints(path: str) -> list[str | None]:
    table = HoodieTable(path)
    return [(table.commit_metadata(i).get("extraMetadata") or {}).get(CHECKPOINT_KEY) for i in table.completed_commits()]


def test_rounds_of_max_events_resume_exactly_after_the_checkpoint(spark, tmp_path, kafka):
    topic = make_topic(kafka)
    produce(kafka, topic, [rec(i) for i in range(50)])  # 17, 17, 16 records in partitions 0, 1, 2
    cfg = parse_config(args(tmp_path, kafka, topic, "--table-type", "MERGE_ON_READ",
                            "--hoodie-conf", "hoodie.streamer.kafka.source.maxEvents=30"))
    first = run_round(spark, cfg)
    assert first.rows == 30
    assert checkpoints(cfg.target_path) == [f"{topic},0:10,1:10,2:10"]  # round-robin slices of 30 / 3
    produce(kafka, topic, [rec(i, "b", 2) for i in range(0, 60, 5)])  # 12 updates and new keys, 4 a partition
    summary = run(spark, parse_config(args(tmp_path, kafka, topic, "--table-type", "MERGE_ON_READ")))  # the rest
    assert (summary.rows, summary.commits) == (32, 1)
    assert checkpoints(cfg.target_path)[-1] == f"{topic},0:21,1:21,2:20"
    expected = {f"k{i:03d}": "a" for i in range(50)} | {f"k{i:03d}": "b" for i in range(0, 60, 5)}
    assert read_pairs(cfg.target_path) == sorted(expected.items())
    assert run(spark, cfg).commits == 0  # caught up: no commit


def test_a_table_without_checkpoint_starting_at_the_end_reads_what_arrives_next(spark, tmp_path, kafka):
    topic = make_topic(kafka, partitions=1)
    produce(kafka, topic, [rec(i) for i in range(5)], partition=lambda i: 0)
    group = ["--hoodie-conf", f"group.id=g-{topic}",
             "--hoodie-conf", "hoodie.streamer.source.kafka.enable.commit.offset=true"]
    cfg = parse_config([*args(tmp_path, kafka, topic), "--hoodie-conf", "auto.offset.reset=latest", *group])
    idle = run_round(spark, cfg)
    assert (idle.instant, idle.checkpoint) == (None, f"{topic},0:5")  # Hudi's LATEST: the old records are skipped
    produce(kafka, topic, [rec(i, "b") for i in range(5, 8)], partition=lambda i: 0)
    assert run_round(spark, cfg, idle.checkpoint).rows == 3  # the next round of the run: nothing arrived is lost
    assert read_pairs(cfg.target_path) == [(f"k{i:03d}", "b") for i in range(5, 8)]
    assert checkpoints(cfg.target_path) == [f"{topic},0:8"]
    # the round committed its offsets to the group: a new table starting at the group's offsets reads what follows
    produce(kafka, topic, [rec(9, "c")], partition=lambda i: 0)
    follower = parse_config([*args(tmp_path / "g", kafka, topic), "--hoodie-conf", "auto.offset.reset=group", *group])
    assert run_round(spark, follower).rows == 1 and read_pairs(follower.target_path) == [("k009", "c")]


def test_avro_records_framed_or_bare_and_bad_ones_to_the_error_table(spark, tmp_path, kafka):
    schema_file = tmp_path / "trip.avsc"
    schema_file.write_text(json.dumps(AVRO_SCHEMA))
    framed = make_topic(kafka, partitions=2)
    produce(kafka, framed, [avro_value(rec(1)), b"\x00\x00\x00\x00\x01garbage", avro_value(rec(2)),
                            avro_value({**rec(3), "id": None}), None], partition=lambda i: i % 2)
    schema = ["--hoodie-conf", f"hoodie.streamer.schemaprovider.source.schema.file={schema_file}"]
    cfg = parse_config(args(tmp_path, kafka, framed, *schema, source="AvroKafkaSource"))
    with pytest.raises(InvalidRecordError, match="2 bad source record"):
        run(spark, cfg)
    assert not (tmp_path / "t" / ".hoodie").exists() or checkpoints(cfg.target_path) == []
    errors = str(tmp_path / "errors")
    cfg = parse_config(args(tmp_path, kafka, framed, *schema, "--hoodie-conf", "hoodie.errortable.enable=true",
                            "--hoodie-conf", f"hoodie.errortable.base.path={errors}", source="AvroKafkaSource"))
    assert run(spark, cfg).bad == 2  # the tombstone is no record: skipped, as Hudi's sources skip it
    assert read_pairs(cfg.target_path) == [("k001", "a"), ("k002", "a")]
    bad = sorted((r["source"], r["reason"].split(":")[0]) for r in spark.read.format("hoodie").load(errors).collect())
    assert bad == [(f"kafka:{framed}/1", "null record key (id)"), (f"kafka:{framed}/1@0", "unparseable Avro")]
    bare = make_topic(kafka, partitions=1)
    produce(kafka, bare, [avro_value(rec(7), framed=False)], partition=lambda i: 0)
    cfg = parse_config(args(tmp_path / "bare", kafka, bare, *schema, "--hoodie-conf",
                            "hoodie.streamer.source.kafka.value.deserializer.class="
                            "org.apache.kafka.common.serialization.ByteArrayDeserializer", source="AvroKafkaSource"))
    assert run(spark, cfg).rows == 1 and read_pairs(cfg.target_path) == [("k007", "a")]


def test_unparseable_json_and_null_keys_fail_the_round(spark, tmp_path, kafka):
    topic = make_topic(kafka, partitions=1)
    produce(kafka, topic, [rec(1), b"{broken", {**rec(2), "id": None}, rec(3)], partition=lambda i: 0)
    cfg = parse_config(args(tmp_path, kafka, topic))
    with pytest.raises(InvalidRecordError, match="2 bad source record.*unparseable JSON"):
        run(spark, cfg)
    assert not (tmp_path / "t" / ".hoodie").exists() or checkpoints(cfg.target_path) == []


def test_records_deleted_before_they_were_read_fail_the_round_naming_partitions_and_offsets(spark, tmp_path, kafka,
                                                                                             caplog):
    topic = make_topic(kafka, partitions=2)
    produce(kafka, topic, [rec(i) for i in range(20)], partition=lambda i: i % 2)
    cfg = parse_config(args(tmp_path, kafka, topic, "--hoodie-conf", "hoodie.streamer.kafka.source.maxEvents=8"))
    assert run_round(spark, cfg).rows == 8  # 0:4, 1:4
    delete_records(kafka, topic, 0, 7)  # offsets 4, 5, 6 of partition 0 aged out unread
    with pytest.raises(KafkaDataLossError, match=rf"{topic}-0: checkpoint 4, earliest offset 7"):
        run_round(spark, cfg)
    assert checkpoints(cfg.target_path) == [f"{topic},0:4,1:4"]
    lenient = parse_config(args(tmp_path, kafka, topic, "--hoodie-conf",
                                "hoodie.streamer.source.kafka.enable.failOnDataLoss=false"))
    with caplog.at_level(logging.WARNING):
        assert run_round(spark, lenient).rows == 3 + 6  # partition 0 from 7 (not partition 1 from its start)
    assert "Resuming those partitions at their earliest offset" in caplog.text
    assert checkpoints(cfg.target_path)[-1] == f"{topic},0:10,1:10"
    delete_topic(kafka, topic)
    with pytest.raises(KafkaSourceError, match=f"topic '{topic}' does not exist"):
        run_round(spark, cfg)
    make_topic(kafka, partitions=2, name=topic)  # made again: empty, the checkpoint is past its end
    with pytest.raises(KafkaDataLossError, match=rf"{topic}-0: checkpoint 10, end offset 0"):
        run_round(spark, cfg)


def test_a_range_truncated_under_the_reader_fails_naming_its_offsets(tmp_path, kafka):
    topic = make_topic(kafka, partitions=1)
    produce(kafka, topic, [rec(i) for i in range(10)], partition=lambda i: 0)
    cfg = parse_config(args(tmp_path, kafka, topic)).kafka
    assert read_range(cfg, OffsetRange(0, 2, 10)).offsets == list(range(2, 10))
    delete_records(kafka, topic, 0, 6)  # after the round planned [2, 10)
    with pytest.raises(KafkaDataLossError, match=rf"no longer holds offset 2 of {topic}-0 .*\[2, 10\)"):
        read_range(cfg, OffsetRange(0, 2, 10))


def test_a_round_over_spark_connect_reads_the_topic_in_the_servers_workers(tmp_path, kafka, spark_connect_port):
    topic = make_topic(kafka, partitions=2)
    produce(kafka, topic, [rec(i) for i in range(6)], partition=lambda i: i % 2)
    done = subprocess.run([sys.executable, "-m", "tests.kafka.connect_streamer", *args(tmp_path, kafka, topic)],
                          capture_output=True, text=True, timeout=300, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.split("RESULT ", 1)[1])
    assert result == {"rows": 6, "commits": 1, "session": "pyspark.sql.connect.session"}
    assert read_pairs(str(tmp_path / "t")) == [(f"k{i:03d}", "a") for i in range(6)]
    assert checkpoints(str(tmp_path / "t")) == [f"{topic},0:3,1:3"]
