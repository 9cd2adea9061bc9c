"""The streamer's Kafka settings, under Apache Hudi's names (``KafkaSourceConfig``), resolved from its command
line; bad ones refused naming the setting and the valid choices. No broker."""

from __future__ import annotations

import pytest

from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.streamer.config import parse_config

BASE = ["--target-base-path", "/tmp/t", "--target-table", "t", "--source-class", "JsonKafkaSource",
        "--hoodie-conf", "hoodie.streamer.source.kafka.topic=trips", "--hoodie-conf", "bootstrap.servers=b:9092"]


def conf(*pairs: str) -> list[str]:
    return [arg for pair in pairs for arg in ("--hoodie-conf", pair)]


def test_kafka_settings_resolve_with_hudis_names_and_defaults():
    cfg = parse_config([*BASE, *conf("hoodie.deltastreamer.kafka.source.maxEvents=1000", "security.protocol=SSL",
                                     "key.deserializer=org.apache.kafka.common.serialization.StringDeserializer",
                                     "hoodie.datasource.write.recordkey.field=id")])
    kafka = cfg.kafka
    assert (kafka.topic, kafka.value_format, kafka.auto_offset_reset, kafka.max_events) == ("trips", "json", "latest", 1000)
    assert kafka.fail_on_data_loss and not kafka.commit_offsets  # fail on data loss unless told otherwise
    assert kafka.client == {"bootstrap.servers": "b:9092", "security.protocol": "SSL"}  # not the Java deserializer
    assert "bootstrap.servers" not in cfg.write_options
    assert cfg.write_options["hoodie.datasource.write.recordkey.field"] == "id"


@pytest.mark.parametrize(("extra", "message"), [
    (conf("auto.offset.reset=smallest"), "auto.offset.reset='smallest' is not one of earliest, latest, group"),
    (conf("hoodie.streamer.kafka.source.maxEvents=many"), "maxEvents must be a whole number"),
    (conf("isolation.level=read_committed"), "isolation.level='read_committed' is not supported"),
    (conf("hoodie.streamer.source.kafka.checkpoint.type=timestamp"), "checkpoint.type='timestamp' is not supported"),
    (["--source-class", "AvroKafkaSource"], "AvroKafkaSource needs the records' Avro schema"),
    (["--source-class", "AvroKafkaSource", *conf("hoodie.streamer.schemaprovider.source.schema.file=/s.avsc",
                                                  "hoodie.streamer.source.kafka.value.deserializer.class=Mine")],
     "value.deserializer.class='Mine' is not one of io.confluent"),
])
def test_bad_kafka_settings_are_refused_naming_them(extra, message):
    with pytest.raises(HoodieConfigError, match=message):
        parse_config([*BASE, *extra])


REGISTRY_URL = "http://reg:8081/subjects/trips-value/versions/latest"


def test_a_schema_registry_gives_the_schemas_and_the_writer_schemas_ids_are_looked_up_at_its_root():
    avro = ["--source-class", "org.apache.hudi.utilities.sources.AvroKafkaSource"]
    cfg = parse_config([*BASE, *avro, *conf(f"hoodie.deltastreamer.schemaprovider.registry.url={REGISTRY_URL}")])
    assert (cfg.schema_registry.url, cfg.schema_registry.target_url) == (REGISTRY_URL, REGISTRY_URL)
    assert cfg.kafka.schema_registry == "http://reg:8081" and cfg.source_schema_file is None
    assert "schema.registry.url" not in cfg.kafka.client  # the Java deserializer's setting, not librdkafka's
    cfg = parse_config([*BASE, *avro, "--schemaprovider-class", "org.apache.hudi.utilities.schema.SchemaRegistryProvider",
                        *conf(f"hoodie.streamer.schemaprovider.registry.url={REGISTRY_URL}",
                              "hoodie.streamer.schemaprovider.registry.targetUrl=http://reg:8081/subjects/t/versions/2",
                              "schema.registry.url=http://ids:8081,http://ids2:8081")])
    assert cfg.schema_registry.target_url == "http://reg:8081/subjects/t/versions/2"
    assert cfg.kafka.schema_registry == "http://ids:8081,http://ids2:8081"
    # a schema file and framed values: the ids are looked up only where schema.registry.url says
    cfg = parse_config([*BASE, *avro, *conf("hoodie.streamer.schemaprovider.source.schema.file=/s.avsc")])
    assert (cfg.source_schema_file, cfg.schema_registry, cfg.kafka.schema_registry) == ("/s.avsc", None, None)


@pytest.mark.parametrize(("extra", "message"), [
    (["--schemaprovider-class", "SchemaRegistryProvider"],
     "SchemaRegistryProvider needs --hoodie-conf hoodie.streamer.schemaprovider.registry.url="),
    (["--schemaprovider-class", "FilebasedSchemaProvider"],
     "FilebasedSchemaProvider needs --hoodie-conf hoodie.streamer.schemaprovider.source.schema.file="),
    (["--schemaprovider-class", "JdbcbasedSchemaProvider"],
     "Unknown --schemaprovider-class 'JdbcbasedSchemaProvider'; valid values: FilebasedSchemaProvider, "
     "SchemaRegistryProvider"),
    (conf(f"hoodie.streamer.schemaprovider.registry.url={REGISTRY_URL}",
          "hoodie.streamer.schemaprovider.registry.schemaconverter=com.acme.ProtoToAvro"),
     "schemaconverter names a Java class"),
])
def test_bad_schema_provider_settings_are_refused_naming_them(extra, message):
    with pytest.raises(HoodieConfigError, match=message):
        parse_config([*BASE, "--source-class", "AvroKafkaSource", *extra])


def test_a_kafka_source_needs_its_topic_and_brokers():
    with pytest.raises(HoodieConfigError, match="needs --hoodie-conf hoodie.streamer.source.kafka.topic=<topic>"):
        parse_config(BASE[:6])
    with pytest.raises(HoodieConfigError, match="needs --hoodie-conf bootstrap.servers="):
        parse_config(BASE[:8])
