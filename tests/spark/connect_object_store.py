"""Run as a script by test_object_store_tables.py: an upsert and a snapshot read of an object-store table
over Spark Connect (its own process: Connect cannot share one with the suite's classic session).

Arguments: the table URI and its options as JSON. Prints the rows read as JSON."""

import json
import os
import sys

os.environ["PYSPARK_PYTHON"] = sys.executable

from pyspark.sql import SparkSession  # noqa: E402

import hoodie_datasource  # noqa: E402

path, options = sys.argv[1], json.loads(sys.argv[2])
spark = (SparkSession.builder.remote("local[2]").config("spark.sql.shuffle.partitions", "4")
         .config("spark.driver.extraJavaOptions", os.environ.get("HOODIE_TEST_JVM_OPTIONS", "")).getOrCreate())
hoodie_datasource.register(spark)
schema = "uuid string, ts long, city string, fare double"
opts = {"table.name": "trips", "recordkey.field": "uuid", "partitionpath.field": "city", "precombine.field": "ts",
        **options}
spark.createDataFrame([("a", 1, "sf", 1.0), ("b", 1, "nyc", 2.0)], schema).write.format("hoodie") \
    .options(**opts).mode("upsert").save(path)
spark.createDataFrame([("a", 2, "sf", 5.0)], schema).write.format("hoodie").options(**opts).mode("upsert").save(path)
rows = sorted([r.uuid, r.ts, r.fare] for r in spark.read.format("hoodie").options(**options).load(path).collect())
print("RESULT " + json.dumps({"rows": rows, "session": type(spark).__module__}))
spark.stop()
