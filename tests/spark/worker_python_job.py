"""Run as a script by test_worker_python.py: a small write and read in a new local session, started the
way a user starts a job (``.venv/bin/python job.py``, no PYSPARK_PYTHON), once with no interpreter chosen
and once with ``spark.pyspark.python`` set to the interpreter given: two sessions one after the other, one
JVM start for both (each SparkContext chooses its workers' interpreter anew, when it starts). Prints
``RESULT <case> <json>`` for each: the rows read, or the error the write raised (its class and message).

Arguments: the folder of the tables, and the interpreter to set as ``spark.pyspark.python``."""

import json
import os
import sys

from pyspark.sql import SparkSession

import hoodie_datasource
from hoodie_datasource.errors import HoodieError

work, chosen = sys.argv[1], sys.argv[2]
opts = {"table.name": "trips", "recordkey.field": "uuid", "partitionpath.field": "city", "precombine.field": "ts"}
for case, interpreter in (("none_chosen", None), ("chosen", chosen)):
    builder = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
    if interpreter is not None:
        builder = builder.config("spark.pyspark.python", interpreter)
    spark = builder.getOrCreate()
    hoodie_datasource.register(spark)
    path = os.path.join(work, case)
    try:
        spark.createDataFrame([("a", 1, "sf", 1.0), ("b", 1, "nyc", 2.0)],
                              "uuid string, ts long, city string, fare double") \
            .write.format("hoodie").options(**opts).mode("upsert").save(path)
        rows = sorted([r.uuid, r.fare] for r in spark.read.format("hoodie").load(path).collect())
        print(f"RESULT {case} " + json.dumps({"rows": rows, "worker": spark.sparkContext.pythonExec}), flush=True)
    except HoodieError as exc:
        print(f"RESULT {case} " + json.dumps({"error": type(exc).__name__, "message": str(exc)}), flush=True)
    spark.stop()
