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


def test_a_kafka_source_needs_its_topic_and_brokers():
    with pytest.raises(HoodieConfigError, match="needs --hoodie-conf hoodie.streamer.source.kafka.topic=<topic>"):
        parse_config(BASE[:6])
    with pytest.raises(HoodieConfigError, match="needs --hoodie-conf bootstrap.servers="):
        parse_config(BASE[:8])
