"""Run as a script by test_spark_connect.py: an ``availableNow`` file stream into a hoodie table over
Spark Connect (an in-process Connect server on local[2]; the sink runs in the server's foreachBatch
worker), printing the commits' checkpoints and the table's rows as JSON.

    python -m tests.spark.connect_streaming <work folder>
"""

import json
import os
import sys

os.environ["PYSPARK_PYTHON"] = sys.executable

from pyspark.sql import SparkSession  # noqa: E402

import hoodie_datasource  # noqa: E402
from tests.spark.streams import batches, land, rows, run_to_end  # noqa: E402

work = sys.argv[1]
source, table, checkpoint = f"{work}/in", f"{work}/table", f"{work}/ckpt"
spark = SparkSession.builder.remote("local[2]").config("spark.sql.shuffle.partitions", "2").getOrCreate()
hoodie_datasource.register(spark)
land(source, "f0", rows(("a", 1, "sf", 1.0), ("b", 1, "nyc", 2.0)), 0)
land(source, "f1", rows(("a", 2, "sf", 5.0)), 1)
query = run_to_end(spark, source, table, checkpoint, **{"storage.type": "MERGE_ON_READ"})
result = {
    "session": type(spark).__module__,
    "error": str(query.exception()) if query.exception() else None,
    "batches": batches(table),
    "rows": sorted([r.uuid, r.ts, r.fare] for r in spark.read.format("hoodie").load(table).collect()),
}
print("RESULT " + json.dumps(result))
spark.stop()
