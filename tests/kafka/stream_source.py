"""A Kafka topic of JSON trips as a streaming DataFrame (Spark's Kafka connector, ``format("kafka")``), in
the streaming tests' trip schema (``tests.spark.streams.SCHEMA``)."""

from __future__ import annotations

from pyspark.sql import functions as F

from tests.spark.streams import SCHEMA


def kafka_records(spark, bootstrap: str, topic: str, **options):
    raw = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
           .option("startingOffsets", "earliest").options(**{k: str(v) for k, v in options.items()}).load())
    return raw.select(F.from_json(F.col("value").cast("string"), SCHEMA).alias("r")).select("r.*")
