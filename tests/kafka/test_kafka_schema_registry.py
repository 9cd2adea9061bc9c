"""AvroKafkaSource with Apache Hudi's ``SchemaRegistryProvider`` on a real broker and a real schema registry
(Apicurio's Confluent-compatible API): values framed as Confluent's serializer frames them, each read with the
writer schema its id names and resolved into the subject's latest version, fetched anew each round; a restart
resumes at the committed checkpoint; a value without the zero byte, with an unknown id or with a writer schema
that does not resolve is a bad record; a registry that does not answer fails the round naming it, and the table
is unchanged."""

from __future__ import annotations

import pytest

from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.errors import InvalidRecordError, SchemaRegistryError
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.streamer.config import parse_config
from hoodie_datasource.streamer.streamer import run, run_round
from tests.kafka.test_kafka_streamer import args, checkpoints, rec
from tests.kafka.topics import AVRO_SCHEMA, avro_value, make_topic, produce
from tests.object_stores import free_port
from tests.unit.small_tables import read_pairs

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

# version 2 adds a field with a default: a value written with version 1 reads into it with the default
TRIP_V2 = {**AVRO_SCHEMA, "fields": [*AVRO_SCHEMA["fields"], {"name": "rider", "type": "string", "default": "anon"}]}
PAYMENT = {"type": "record", "name": "payment", "fields": [{"name": "amount", "type": "double"}]}


def registry_args(tmp_path, kafka, registry, topic: str, *extra: str) -> list[str]:
    return args(tmp_path, kafka, topic, "--schemaprovider-class", "org.apache.hudi.utilities.schema.SchemaRegistryProvider",
                "--hoodie-conf", f"hoodie.streamer.schemaprovider.registry.url={registry.subject_url(f'{topic}-value')}",
                *extra, source="AvroKafkaSource")


def rows(path: str) -> list[tuple]:
    table = read_table(path, ReadConfig())
    return sorted(zip(*(table.column(c).to_pylist() for c in ("id", "v", "rider"))))


def test_values_of_two_schema_versions_read_into_the_latest_and_a_restart_resumes(spark, tmp_path, kafka,
                                                                                schema_registry):
    topic = make_topic(kafka, partitions=2)
    v1 = schema_registry.register(f"{topic}-value", AVRO_SCHEMA)
    v2 = schema_registry.register(f"{topic}-value", TRIP_V2)
    assert v1 != v2
    produce(kafka, topic, [avro_value(rec(0), schema_id=v1), avro_value({**rec(1), "rider": "ann"}, schema_id=v2,
                                                                        schema=TRIP_V2),
                           avro_value(rec(2), schema_id=v1), avro_value({**rec(3), "rider": "bob"}, schema_id=v2,
                                                                        schema=TRIP_V2)],
            partition=lambda i: i % 2)
    cfg = parse_config(registry_args(tmp_path, kafka, schema_registry, topic))
    assert run(spark, cfg).rows == 4
    assert rows(cfg.target_path) == [("k000", "a", "anon"), ("k001", "a", "ann"), ("k002", "a", "anon"),
                                     ("k003", "a", "bob")]
    assert checkpoints(cfg.target_path) == [f"{topic},0:2,1:2"]

    # a restart (a new configuration, the table's checkpoint) reads only what came after, both versions again
    produce(kafka, topic, [avro_value(rec(0, "b", 2), schema_id=v1),
                           avro_value({**rec(5, "b", 2), "rider": "cy"}, schema_id=v2, schema=TRIP_V2)],
            partition=lambda i: i % 2)
    summary = run(spark, parse_config(registry_args(tmp_path, kafka, schema_registry, topic)))
    assert (summary.rows, summary.commits) == (2, 1)
    assert rows(cfg.target_path) == [("k000", "b", "anon"), ("k001", "a", "ann"), ("k002", "a", "anon"),
                                     ("k003", "a", "bob"), ("k005", "b", "cy")]
    assert checkpoints(cfg.target_path) == [f"{topic},0:2,1:2", f"{topic},0:3,1:3"]
    assert run(spark, cfg).commits == 0  # caught up


def test_a_version_registered_between_rounds_is_the_next_rounds_schema(spark, tmp_path, kafka, schema_registry):
    topic = make_topic(kafka, partitions=1)
    v1 = schema_registry.register(f"{topic}-value", AVRO_SCHEMA)
    produce(kafka, topic, [avro_value(rec(0), schema_id=v1)], partition=lambda i: 0)
    cfg = parse_config(registry_args(tmp_path, kafka, schema_registry, topic))
    assert run_round(spark, cfg).rows == 1
    assert "rider" not in read_table(cfg.target_path, ReadConfig()).column_names
    v2 = schema_registry.register(f"{topic}-value", TRIP_V2)
    produce(kafka, topic, [avro_value(rec(1), schema_id=v1), avro_value({**rec(2), "rider": "dee"}, schema_id=v2,
                                                                        schema=TRIP_V2)], partition=lambda i: 0)
    assert run_round(spark, cfg).rows == 2
    assert rows(cfg.target_path) == [("k000", "a", None), ("k001", "a", "anon"), ("k002", "a", "dee")]


def test_unframed_unknown_and_unresolvable_values_are_bad_records(spark, tmp_path, kafka, schema_registry):
    topic = make_topic(kafka, partitions=1)
    v1 = schema_registry.register(f"{topic}-value", AVRO_SCHEMA)
    other = schema_registry.register(f"{topic}-other-value", PAYMENT)
    produce(kafka, topic, [avro_value(rec(0), schema_id=v1),
                           avro_value(rec(1), framed=False),  # offset 1: no zero byte and id
                           avro_value(rec(2), schema_id=987654),  # offset 2: an id the registry does not know
                           avro_value({"amount": 1.5}, schema_id=other, schema=PAYMENT),  # offset 3: not a trip
                           avro_value(rec(4), schema_id=v1)], partition=lambda i: 0)
    cfg = parse_config(registry_args(tmp_path, kafka, schema_registry, topic))
    with pytest.raises(InvalidRecordError, match=rf"3 bad source record.*kafka:{topic}/0@1: unparseable Avro: not framed"):
        run(spark, cfg)
    assert not (tmp_path / "t" / ".hoodie").exists() or checkpoints(cfg.target_path) == []
    errors = str(tmp_path / "errors")
    cfg = parse_config(registry_args(tmp_path, kafka, schema_registry, topic,
                                     "--hoodie-conf", "hoodie.errortable.enable=true",
                                     "--hoodie-conf", f"hoodie.errortable.base.path={errors}"))
    assert run(spark, cfg).bad == 3
    assert read_pairs(cfg.target_path) == [("k000", "a"), ("k004", "a")]
    bad = sorted((r["source"], r["reason"]) for r in spark.read.format("hoodie").load(errors).collect())
    assert [source for source, _ in bad] == [f"kafka:{topic}/0@{offset}" for offset in (1, 2, 3)]
    assert "not framed" in bad[0][1]
    assert "unknown schema id 987654" in bad[1][1]
    assert bad[2][1].startswith("unparseable Avro: ") and "trip" in bad[2][1]  # payment does not resolve into trip


def test_a_registry_that_does_not_answer_fails_the_round_naming_it_and_the_table_is_unchanged(spark, tmp_path, kafka,
                                                                                             schema_registry):
    topic = make_topic(kafka, partitions=1)
    v1 = schema_registry.register(f"{topic}-value", AVRO_SCHEMA)
    produce(kafka, topic, [avro_value(rec(0), schema_id=v1)], partition=lambda i: 0)
    cfg = parse_config(registry_args(tmp_path, kafka, schema_registry, topic))
    assert run_round(spark, cfg).rows == 1
    v2 = schema_registry.register(f"{topic}-value", TRIP_V2)
    produce(kafka, topic, [avro_value({**rec(1), "rider": "eve"}, schema_id=v2, schema=TRIP_V2)], partition=lambda i: 0)
    dead = f"http://127.0.0.1:{free_port()}"
    # the latest version cannot be fetched: the round fails before reading
    down = parse_config(args(tmp_path, kafka, topic, "--hoodie-conf", "hoodie.streamer.schemaprovider.registry.url="
                             f"{dead}/subjects/{topic}-value/versions/latest", source="AvroKafkaSource"))
    with pytest.raises(SchemaRegistryError, match=rf"registry at {dead}/subjects/{topic}-value/versions/latest did not"):
        run_round(spark, down)
    # the latest version is fetched, but a writer schema cannot be: the task's error names the message
    ids_down = parse_config(registry_args(tmp_path, kafka, schema_registry, topic, "--hoodie-conf",
                                          f"schema.registry.url={dead}"))
    with pytest.raises(SchemaRegistryError, match=rf"message at {topic}-0 offset 1 \(schema id {v2}\).*{dead}"):
        run_round(spark, ids_down)
    assert checkpoints(cfg.target_path) == [f"{topic},0:1"]
    assert read_pairs(cfg.target_path) == [("k000", "a")]
    assert run_round(spark, cfg).rows == 1  # the registry back: the round reads what the failed ones did not
    assert rows(cfg.target_path) == [("k000", "a", None), ("k001", "a", "eve")]
