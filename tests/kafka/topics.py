"""Helpers of the Kafka tests: topics made on the test broker, records produced into them, Avro values
framed as Confluent's serializer frames them."""

from __future__ import annotations

import io
import json
import struct
import uuid

import fastavro

from tests.conftest import require_module

AVRO_SCHEMA = {"type": "record", "name": "trip", "fields": [
    {"name": "id", "type": ["null", "string"]}, {"name": "ts", "type": "long"},
    {"name": "p", "type": "string"}, {"name": "v", "type": "string"}]}
QUIET = 2  # librdkafka logs only critical events: a client left alive past the session's broker retries forever


def make_topic(server, partitions: int = 3, name: str | None = None) -> str:
    admin_module = require_module("confluent_kafka.admin")
    name = name or f"trips-{uuid.uuid4().hex[:8]}"
    admin = admin_module.AdminClient({"bootstrap.servers": server.bootstrap, "log_level": QUIET})
    for future in admin.create_topics([admin_module.NewTopic(name, partitions, 1)]).values():
        future.result(30)
    return name


def produce(server, topic: str, values: list, partition=lambda i: i % 3) -> None:
    """Each value (a dict as JSON, or bytes/str as they are, None as a tombstone) into its partition, in order."""
    producer = require_module("confluent_kafka").Producer({"bootstrap.servers": server.bootstrap, "linger.ms": 5,
                                                       "log_level": QUIET})
    for i, value in enumerate(values):
        payload = json.dumps(value) if isinstance(value, dict) else value
        producer.produce(topic, value=payload, partition=partition(i))
    assert producer.flush(30) == 0


def avro_value(record: dict, framed: bool = True, schema_id: int = 1, schema: dict = AVRO_SCHEMA) -> bytes:
    """``record`` in Avro's binary encoding of ``schema``, framed as Confluent's ``KafkaAvroSerializer`` frames it
    (a zero byte, then ``schema_id`` in 4 bytes, big-endian) unless not ``framed``."""
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), record)
    return (b"\x00" + struct.pack(">I", schema_id) if framed else b"") + out.getvalue()


def delete_records(server, topic: str, partition: int, before: int) -> None:
    """Kafka's deleteRecords: the partition's records below ``before`` are gone (as retention ages them out)."""
    kafka_module = require_module("confluent_kafka")
    admin = require_module("confluent_kafka.admin").AdminClient({"bootstrap.servers": server.bootstrap, "log_level": QUIET})
    for future in admin.delete_records([kafka_module.TopicPartition(topic, partition, before)]).values():
        future.result(30)


def delete_topic(server, topic: str) -> None:
    admin = require_module("confluent_kafka.admin").AdminClient({"bootstrap.servers": server.bootstrap, "log_level": QUIET})
    for future in admin.delete_topics([topic]).values():
        future.result(30)
