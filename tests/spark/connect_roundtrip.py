"""Run as a script by test_spark_connect.py: a write/read round trip over Spark Connect.

Spark Connect cannot share a process with the classic session of the test suite, so this runs in
its own process (an in-process Connect server on local[2]) and prints the result as JSON."""

import json
import os
import sys

os.environ["PYSPARK_PYTHON"] = sys.executable

from pyspark.sql import SparkSession  # noqa: E402

import hoodie_datasource  # noqa: E402

path = sys.argv[1]
spark = SparkSession.builder.remote("local[2]").config("spark.sql.shuffle.partitions", "4").getOrCreate()
hoodie_datasource.register(spark)
schema = "uuid string, ts long, city string, fare double"
opts = {"table.name": "trips", "recordkey.field": "uuid", "partitionpath.field": "city", "precombine.field": "ts"}
spark.createDataFrame([("a", 1, "sf", 1.0), ("b", 1, "nyc", 2.0)], schema).write.format("hoodie") \
    .options(**opts).mode("upsert").save(path)
spark.createDataFrame([("a", 2, "sf", 5.0)], schema).write.format("hoodie").options(**opts) \
    .mode("append").option("hoodie.datasource.write.operation", "upsert").save(path)
spark.createDataFrame([("b", 3, "nyc", 0.0)], schema).write.mode("delete").format("hoodie").options(**opts).save(path)
first = hoodie_datasource.HoodieTable(path).completed_commits()[0]
result = {
    "snapshot": sorted([r.uuid, r.fare] for r in spark.read.format("hoodie").load(path).collect()),
    "incremental": sorted(r.uuid for r in spark.read.format("hoodie").option("query", "incremental")
                          .option("begin.instant", first).load(path).collect()),
    "filtered": [r.uuid for r in spark.read.format("hoodie").load(path).filter("city = 'sf'").collect()],
    "session": type(spark).__module__,
}
print("RESULT " + json.dumps(result))
spark.stop()
