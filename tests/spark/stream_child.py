"""Run as a script by test_streaming_replay.py: one ``availableNow`` run of a file stream into a hoodie
table, with a SparkSession of its own (the test kills this process: it cannot be the test's own).

    python -m tests.spark.stream_child <source folder> <table> <checkpoint>
"""

import logging
import os
import sys

os.environ["PYSPARK_PYTHON"] = sys.executable

from pyspark.sql import SparkSession  # noqa: E402

import hoodie_datasource  # noqa: E402
from tests.spark.streams import run_to_end  # noqa: E402

logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
logging.getLogger("hoodie_datasource.spark.stream_sink").setLevel(logging.INFO)
source, table, checkpoint = sys.argv[1:4]
spark = (SparkSession.builder.master("local[2]").config("spark.sql.shuffle.partitions", "2")
         .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC")
         .config("spark.driver.extraJavaOptions", os.environ.get("HOODIE_TEST_JVM_OPTIONS", "")).getOrCreate())
hoodie_datasource.register(spark)
query = run_to_end(spark, source, table, checkpoint, operation="insert")
spark.stop()
sys.exit(1 if query.exception() else 0)
