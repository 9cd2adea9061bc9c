"""Run as a script by test_kafka_streamer.py: one streamer round from a Kafka topic over Spark Connect (an
in-process Connect server on local[2]; it cannot share a process with the suite's classic session), the
offset ranges read by the server's Python workers. Prints the round as JSON.

    python -m tests.kafka.connect_streamer <streamer arguments...>
"""

import json
import os
import sys

os.environ["PYSPARK_PYTHON"] = sys.executable

from pyspark.sql import SparkSession  # noqa: E402

from hoodie_datasource.streamer.config import parse_config  # noqa: E402
from hoodie_datasource.streamer.streamer import read_file, run  # noqa: E402

spark = (SparkSession.builder.remote("local[2]").config("spark.sql.shuffle.partitions", "4")
         .config("spark.driver.extraJavaOptions", os.environ.get("HOODIE_TEST_JVM_OPTIONS", "")).getOrCreate())
summary = run(spark, parse_config(sys.argv[1:], read_file=read_file))
print("RESULT " + json.dumps({"rows": summary.rows, "commits": summary.commits, "session": type(spark).__module__}))
spark.stop()
