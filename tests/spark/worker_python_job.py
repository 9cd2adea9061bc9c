"""Run as a script by test_worker_python.py: a small write and read in a new local session, started the
way a user starts a job (``.venv/bin/python job.py``, no PYSPARK_PYTHON). Prints the rows read, or the
error the write raised (its class and message), as JSON.

Arguments: the table path, and optionally an interpreter to set as ``spark.pyspark.python``."""

import json
import sys

from pyspark.sql import SparkSession

import hoodie_datasource
from hoodie_datasource.errors import HoodieError

path = sys.argv[1]
builder = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
if len(sys.argv) > 2:
    builder = builder.config("spark.pyspark.python", sys.argv[2])
spark = builder.getOrCreate()
hoodie_datasource.register(spark)
opts = {"table.name": "trips", "recordkey.field": "uuid", "partitionpath.field": "city", "precombine.field": "ts"}
try:
    spark.createDataFrame([("a", 1, "sf", 1.0), ("b", 1, "nyc", 2.0)], "uuid string, ts long, city string, fare double") \
        .write.format("hoodie").options(**opts).mode("upsert").save(path)
    rows = sorted([r.uuid, r.fare] for r in spark.read.format("hoodie").load(path).collect())
    print("RESULT " + json.dumps({"rows": rows, "worker": spark.sparkContext.pythonExec}))
except HoodieError as exc:
    print("RESULT " + json.dumps({"error": type(exc).__name__, "message": str(exc)}))
spark.stop()
