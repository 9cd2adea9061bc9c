"""Run as a script by test_kafka_stream.py: one ``availableNow`` run of a Structured Streaming query from a
Kafka topic (Spark's Kafka connector) into a hoodie table, a few records a micro-batch, with a SparkSession
of its own (the test kills this process: it cannot be the test's own).

    python -m tests.kafka.stream_child <bootstrap servers> <topic> <table> <checkpoint>
"""

import logging
import os
import sys

os.environ["PYSPARK_PYTHON"] = sys.executable

import hoodie_datasource  # noqa: E402
from tests.conftest import local_builder  # noqa: E402
from tests.kafka.stream_source import kafka_records  # noqa: E402
from tests.spark.streams import OPTS, TIMEOUT_S  # noqa: E402

logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
logging.getLogger("hoodie_datasource.spark.stream_sink").setLevel(logging.INFO)
bootstrap, topic, table, checkpoint = sys.argv[1:5]
spark = local_builder("kafka-stream-child").getOrCreate()
hoodie_datasource.register(spark)
query = (kafka_records(spark, bootstrap, topic, maxOffsetsPerTrigger=10)
         .writeStream.format("hoodie").options(**OPTS).option("hoodie.datasource.write.operation", "insert")
         .option("checkpointLocation", checkpoint).trigger(availableNow=True).start(table))
query.awaitTermination(TIMEOUT_S)
query.stop()
spark.stop()
sys.exit(1 if query.exception() else 0)
