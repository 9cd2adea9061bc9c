"""A Kafka topic as the streamer's source (Apache Hudi's ``JsonKafkaSource`` and ``AvroKafkaSource`` over
``KafkaOffsetGen``), read with confluent-kafka, the librdkafka client: no JAR, and the same code runs in
the Spark tasks of a classic session and of a Spark Connect server. confluent-kafka rather than
kafka-python: its wheels carry librdkafka, kept by Confluent with every Kafka release, and a task decodes
a message in C (a range of 37,500 JSON records is read in about 0.3 s and parsed in 0.2 s).

The driver plans (``plan``): the topic's partitions and their earliest and end offsets, the ranges to read
from the checkpoint (``kafka_offsets``). Each Spark task reads its ranges (``read_range``) with a consumer
assigned to one partition at the range's first offset, with ``auto.offset.reset=error`` so that a position
Kafka no longer holds fails the task, naming the partition and the offsets, instead of jumping ahead; a
partition that ends before the range does fails the same way. Offsets the broker skips (compacted records,
transaction markers) are not records and are passed over, as Hudi's reader does.

Decoding (``decode``): JSON values are parsed together, columnar, by the same parser as JSON files
(``file_source``); Avro values are binary records, framed as Confluent's ``KafkaAvroSerializer`` frames them
(a zero byte and a 4-byte schema id first; Hudi's default ``KafkaAvroDeserializer``) or bare (Hudi's
``ByteArrayDeserializer`` setting, records of the source schema). A framed value is read with the writer schema
its id names in the schema registry (``schema.registry.url``, ``schema_registry``) and resolved into the source
schema by Avro's rules, as Hudi's ``KafkaAvroSchemaDeserializer`` does: a message written with an older
compatible version decodes into the latest (a field it lacks takes the default). Without a registry the id is
not looked up and the value is read with the source schema. A value that does not decode (no zero byte, an id the
registry does not know, a writer schema that does not resolve into the source schema) and a record with a null
key are bad records, named by topic and partition (and offset, for a value); a registry that does not answer
fails the round (``SchemaRegistryError``, naming the message). A null or empty value, a compacted topic's
tombstone, is no record and is skipped (logged), as Hudi's sources skip it.

Consumer settings: every setting whose name does not start with ``hoodie.`` goes to the client (Hudi's
``KafkaOffsetGen.excludeHoodieConfigs``), less the Java client's deserializer classes, which librdkafka
does not have; a setting librdkafka does not know fails at once, naming it.
"""

from __future__ import annotations

import io
import logging
import sys
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import fastavro
import pyarrow as pa
from fastavro.schema import to_parsing_canonical_form

from hoodie_datasource.errors import (
    HoodieConfigError,
    KafkaDataLossError,
    KafkaSourceError,
    PythonEnvironmentError,
    SchemaRegistryError,
)
from hoodie_datasource.streamer.file_source import BAD_RECORD_SCHEMA, keyed_records, parse_json_lines
from hoodie_datasource.streamer.kafka_offsets import (
    OffsetRange,
    checkpoint_string,
    compute_offset_ranges,
    is_kafka_checkpoint,
    parse_checkpoint,
    valid_start,
)
from hoodie_datasource.streamer.schema_registry import UnknownSchemaId, writer_schema

RESETS = ("earliest", "latest", "group")
AVRO_DESERIALIZERS = {"io.confluent.kafka.serializers.KafkaAvroDeserializer": True,
                      "org.apache.hudi.utilities.deser.KafkaAvroSchemaDeserializer": True,
                      "org.apache.kafka.common.serialization.ByteArrayDeserializer": False}  # -> Confluent framing
JAVA_ONLY = ("key.deserializer", "value.deserializer", "schema.registry.url", "specific.avro.reader")
FETCH_BATCH = 10_000
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class KafkaSourceConfig:
    topic: str
    value_format: str  # json | avro
    client: Mapping[str, str] = field(default_factory=dict)  # librdkafka settings: bootstrap.servers, ...
    auto_offset_reset: str = "latest"
    max_events: int = 5_000_000  # hoodie.streamer.kafka.source.maxEvents
    min_partitions: int = 0
    fail_on_data_loss: bool = True
    commit_offsets: bool = False  # hoodie.streamer.source.kafka.enable.commit.offset
    confluent_framing: bool = True
    schema_registry: str | None = None  # schema.registry.url: where a framed value's schema id is looked up
    timeout_s: float = 60.0  # a metadata request, or a read that gets no record


@dataclass(frozen=True)
class Plan:
    ranges: tuple[OffsetRange, ...]
    checkpoint: str

    @property
    def count(self) -> int:
        return sum(r.count for r in self.ranges)


def _client():
    """confluent-kafka, imported where it is used: the driver and each task reading a range."""
    try:
        import confluent_kafka
    except ImportError:
        raise PythonEnvironmentError(
            f"The Kafka sources need confluent-kafka in the Python interpreter {sys.executable} (the driver's and "
            "Spark's workers'): pip install 'hoodie-datasource[kafka]'") from None
    return confluent_kafka


def _consumer(cfg: KafkaSourceConfig, **extra):
    client = _client()
    # read_uncommitted: the Java client's default, which Hudi reads with (librdkafka's is read_committed, whose
    # end is the last stable offset, below the high watermark the plan reads to while a transaction is open)
    settings = {"group.id": f"hoodie-streamer-{uuid.uuid4().hex[:8]}", "isolation.level": "read_uncommitted",
                **cfg.client, **extra, "enable.auto.commit": False}
    try:
        return client.Consumer(settings)
    except client.KafkaException as exc:
        raise HoodieConfigError(f"Kafka client settings {sorted(cfg.client)} for topic {cfg.topic!r} are refused: "
                                f"{exc.args[0].str()}") from None


def client_settings(conf: Mapping[str, str]) -> dict[str, str]:
    """The consumer's settings among the streamer's: those not starting with ``hoodie.``."""
    return {key: value for key, value in conf.items()
            if not key.startswith("hoodie.") and key not in JAVA_ONLY and key != "auto.offset.reset"}


def plan(cfg: KafkaSourceConfig, checkpoint: str | None, source_limit: int) -> Plan:
    """The ranges this round reads and the checkpoint recording them (``KafkaOffsetGen.getNextOffsetRanges``:
    ``--source-limit``, when given, counts events and overrides ``maxEvents``)."""
    client = _client()
    events = cfg.max_events if source_limit >= 2**63 - 1 else source_limit
    consumer = _consumer(cfg)
    try:
        try:
            topics = consumer.list_topics(cfg.topic, timeout=cfg.timeout_s).topics
        except client.KafkaException as exc:
            raise KafkaSourceError(f"Kafka at {cfg.client.get('bootstrap.servers')} did not answer for topic "
                                   f"{cfg.topic!r}: {exc.args[0].str()}") from None
        found = topics.get(cfg.topic)
        if found is None or found.error is not None or not found.partitions:
            raise KafkaSourceError(f"Kafka topic {cfg.topic!r} does not exist at {cfg.client.get('bootstrap.servers')}")
        earliest, latest = {}, {}
        for p in sorted(found.partitions):
            earliest[p], latest[p] = _watermarks(consumer, client, cfg, p)
        if is_kafka_checkpoint(checkpoint):
            start = valid_start(cfg.topic, parse_checkpoint(checkpoint, cfg.topic), earliest, latest,
                                cfg.fail_on_data_loss)
            start = {**earliest, **start}  # a partition added since: from its first record
        elif cfg.auto_offset_reset == "earliest":
            start = earliest
        elif cfg.auto_offset_reset == "latest":
            start = latest
        else:
            start = _group_offsets(consumer, cfg, latest)
    finally:
        consumer.close()
    ranges = compute_offset_ranges(start, latest, events, cfg.min_partitions)
    return Plan(tuple(ranges), checkpoint_string(cfg.topic, ranges))


def _watermarks(consumer, client, cfg: KafkaSourceConfig, partition: int) -> tuple[int, int]:
    """A partition's earliest and end offsets, asked again while the broker answers with an error Kafka calls
    retriable (a partition whose leader is being elected, as just after the topic was made) until ``timeout_s``."""
    deadline = time.monotonic() + cfg.timeout_s
    while True:
        try:
            return consumer.get_watermark_offsets(client.TopicPartition(cfg.topic, partition),
                                                  timeout=cfg.timeout_s, cached=False)
        except client.KafkaException as exc:
            error = exc.args[0]
            electing = error.code() in (client.KafkaError.NOT_LEADER_FOR_PARTITION, client.KafkaError.LEADER_NOT_AVAILABLE)
            if not (error.retriable() or electing) or time.monotonic() >= deadline:
                raise KafkaSourceError(f"Kafka at {cfg.client.get('bootstrap.servers')} gave no offsets of "
                                       f"{cfg.topic}-{partition}: {error.str()}") from None
            time.sleep(0.2)


def _group_offsets(consumer, cfg: KafkaSourceConfig, latest: Mapping[int, int]) -> dict[int, int]:
    """The consumer group's committed offsets; the end of each partition when the group has none for one
    (``KafkaOffsetGen.getGroupOffsets``)."""
    if "group.id" not in cfg.client:
        raise HoodieConfigError("auto.offset.reset=group needs the consumer group: --hoodie-conf group.id=<group>")
    committed = consumer.committed([_client().TopicPartition(cfg.topic, p) for p in latest], timeout=cfg.timeout_s)
    offsets = {tp.partition: tp.offset for tp in committed}
    if any(offset < 0 for offset in offsets.values()):
        return dict(latest)
    return offsets


def commit_to_group(cfg: KafkaSourceConfig, checkpoint: str) -> None:
    """Tell the consumer group how far the table read (after the table's commit; a failure only warns,
    as ``KafkaOffsetGen.commitOffsetToKafka``)."""
    client = _client()
    if "group.id" not in cfg.client:
        raise HoodieConfigError("hoodie.streamer.source.kafka.enable.commit.offset=true needs --hoodie-conf group.id=..")
    consumer = _consumer(cfg)
    try:
        consumer.commit(offsets=[client.TopicPartition(cfg.topic, p, o) for p, o in
                                 parse_checkpoint(checkpoint, cfg.topic).items()], asynchronous=False)
    except client.KafkaException as exc:
        logger.warning("Committing offsets %s to Kafka failed (the table is unaffected): %s",
                                            checkpoint, exc)
    finally:
        consumer.close()


@dataclass(frozen=True)
class Messages:
    """One range's records as Kafka holds them."""
    partition: int
    offsets: list[int]
    values: list[bytes | None]


def read_range(cfg: KafkaSourceConfig, r: OffsetRange) -> Messages:
    """Every record of ``r``, or ``KafkaDataLossError``/``KafkaSourceError`` naming what could not be read."""
    client = _client()
    KafkaError = client.KafkaError  # noqa: N806 - the client's error codes, as its documentation names them
    offsets: list[int] = []
    values: list[bytes | None] = []
    if r.count == 0:
        return Messages(r.partition, offsets, values)
    where = f"{cfg.topic}-{r.partition} offsets [{r.start}, {r.until})"
    consumer = _consumer(cfg, **{"auto.offset.reset": "error", "enable.partition.eof": True})
    try:
        consumer.assign([client.TopicPartition(cfg.topic, r.partition, r.start)])
        position, deadline = r.start, time.monotonic() + cfg.timeout_s
        while position < r.until:
            batch = consumer.consume(min(FETCH_BATCH, r.until - position), timeout=1.0)
            if not batch:
                if time.monotonic() > deadline:
                    raise KafkaSourceError(f"No record of {where} arrived within {cfg.timeout_s:.0f}s "
                                           f"(read up to offset {position})")
                continue
            deadline = time.monotonic() + cfg.timeout_s
            for message in batch:
                error = message.error()
                if error is None:
                    offset = message.offset()
                    if offset >= r.until:
                        position = r.until
                        break
                    offsets.append(offset)
                    values.append(message.value())
                    position = offset + 1
                elif error.code() == KafkaError._PARTITION_EOF:
                    if message.offset() < r.until:
                        raise KafkaDataLossError(f"Kafka's {cfg.topic}-{r.partition} ends at offset "
                                                 f"{message.offset()} while reading {where}: the topic was truncated "
                                                 "or made again under the reader. Nothing was written")
                    position = r.until
                elif error.code() in (KafkaError._AUTO_OFFSET_RESET, KafkaError.OFFSET_OUT_OF_RANGE):
                    raise KafkaDataLossError(f"Kafka no longer holds offset {position} of {cfg.topic}-{r.partition} "
                                             f"while reading {where}: records were deleted under the reader "
                                             f"({error.str()}). Nothing was written")
                elif error.code() in (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_TOPIC,
                                      KafkaError.UNKNOWN_TOPIC_ID):
                    raise KafkaDataLossError(f"Kafka topic {cfg.topic!r} was deleted while reading {where} "
                                             f"(at offset {position}). Nothing was written")
                elif error.fatal() or not error.retriable():
                    raise KafkaSourceError(f"Reading {where} failed at offset {position}: {error.str()}")
    finally:
        consumer.close()
    return Messages(r.partition, offsets, values)


@dataclass(frozen=True)
class Decoded:
    good: pa.Table
    bad: pa.Table  # BAD_RECORD_SCHEMA


def decode(cfg: KafkaSourceConfig, messages: Messages, schema: pa.Schema | None, avro_schema: dict | None,
           key_fields: Sequence[str]) -> Decoded:
    """The records of ``messages``, conformed to ``schema`` when given, good apart from bad."""
    bad: list[tuple[str, str, str]] = []  # source, record, reason
    source = f"kafka:{cfg.topic}/{messages.partition}"
    # a null or empty value (a tombstone of a compacted topic) is no record: skipped, as JsonKafkaSource does
    values = [(offset, value) for offset, value in zip(messages.offsets, messages.values) if value]
    if len(values) < len(messages.values):
        logger.info("Skipped %d null or empty values (tombstones) of %s", len(messages.values) - len(values), source)
    if cfg.value_format == "json":
        table = _json(values, schema, source, bad)
    else:
        table = _avro(values, cfg, messages.partition, avro_schema, schema, source, bad)
    table, rejected = keyed_records(table, schema, key_fields, f"the records of Kafka topic {cfg.topic!r}")
    bad += [(source, record, reason) for record, reason in rejected]
    return Decoded(table, pa.table({"source": [b[0] for b in bad], "record": [b[1] for b in bad],
                                    "reason": [b[2] for b in bad]}, schema=BAD_RECORD_SCHEMA))


def _json(values: list[tuple[int, bytes]], schema: pa.Schema | None, source: str,
          bad: list[tuple[str, str, str]]) -> pa.Table:
    """The values as lines of one JSON buffer: a line break inside a JSON value can only be whitespace
    between its tokens (one in a string is escaped), so it becomes a space."""
    if not values:
        return schema.empty_table() if schema is not None else pa.table({})
    data = b"\n".join(v for _, v in values)
    if data.count(b"\n") != len(values) - 1 or b"\r" in data:
        data = b"\n".join(v.replace(b"\n", b" ").replace(b"\r", b" ") for _, v in values)
    line_errors: list[tuple[str, str]] = []
    table = parse_json_lines(data, schema, line_errors)
    bad += [(source, record, reason) for record, reason in line_errors]
    return table


def _avro(values: list[tuple[int, bytes]], cfg: KafkaSourceConfig, partition: int, avro_schema: dict,
          schema: pa.Schema, source: str, bad: list[tuple[str, str, str]]) -> pa.Table:
    """The values' records in the source schema ``avro_schema``; a framed value is read with the writer schema
    its id names when there is a registry (``writer_schema`` keeps each id's), resolved into the source schema."""
    reader = fastavro.parse_schema(avro_schema)
    framed = cfg.confluent_framing
    by_id: dict[int, dict] = {}  # schema id -> its writer schema, the reader itself when they are equal
    records = []
    for offset, value in values:
        try:
            writer = reader
            if framed:
                if len(value) < 5 or value[0] != 0:
                    raise ValueError("not framed as Confluent's KafkaAvroSerializer frames a value (a zero byte and "
                                     "a 4-byte schema id first); set hoodie.streamer.source.kafka.value.deserializer."
                                     "class=org.apache.kafka.common.serialization.ByteArrayDeserializer for bare "
                                     "Avro records")
                if cfg.schema_registry:
                    schema_id = int.from_bytes(value[1:5], "big")
                    writer = by_id.get(schema_id)
                    if writer is None:  # resolving a schema into an equal one costs fastavro a third more time
                        writer = _writer(cfg, schema_id, partition, offset)
                        if to_parsing_canonical_form(writer) == to_parsing_canonical_form(reader):
                            writer = reader
                        by_id[schema_id] = writer
            stream = io.BytesIO(value)
            stream.seek(5 if framed else 0)
            record = fastavro.schemaless_reader(stream, writer, None if writer is reader else reader)
            if stream.tell() != len(value):
                raise ValueError(f"{len(value) - stream.tell()} bytes left after the record")
            records.append(record)
        except SchemaRegistryError:
            raise
        except Exception as exc:  # noqa: BLE001 - fastavro raises several unrelated types on bad input
            bad.append((f"{source}@{offset}", value.hex(), f"unparseable Avro: {str(exc) or type(exc).__name__}"))
    return pa.Table.from_pylist(records, schema=schema)


def _writer(cfg: KafkaSourceConfig, schema_id: int, partition: int, offset: int) -> dict:
    """The writer schema of ``schema_id``; ``ValueError`` (a bad record) for an id the registry does not know."""
    try:
        return writer_schema(cfg.schema_registry, schema_id)
    except UnknownSchemaId as exc:
        raise ValueError(f"unknown schema id {schema_id}: {exc}") from None
    except SchemaRegistryError as exc:
        raise SchemaRegistryError(f"Cannot decode the message at {cfg.topic}-{partition} offset {offset} (schema id "
                                  f"{schema_id}): {exc}. Nothing was written") from None


def read_ranges(cfg: KafkaSourceConfig, ranges: Sequence[OffsetRange], schema: pa.Schema | None,
                avro_schema: dict | None, key_fields: Sequence[str]) -> Iterator[Decoded]:
    for r in ranges:
        yield decode(cfg, read_range(cfg, r), schema, avro_schema, key_fields)


def sample_json_schema(cfg: KafkaSourceConfig, ranges: Sequence[OffsetRange], limit: int = 1000) -> pa.Schema:
    """The columns of the first records of the round (JSON without a schema file): give a schema file
    when records differ."""
    for r in ranges:
        if r.count:
            sample = read_range(cfg, OffsetRange(r.partition, r.start, min(r.until, r.start + limit)))
            table = decode(cfg, sample, None, None, ()).good
            if table.num_columns:
                return table.schema
    raise KafkaSourceError(f"No record of Kafka topic {cfg.topic!r} in this round parses as JSON: give "
                           "hoodie.streamer.schemaprovider.source.schema.file")
