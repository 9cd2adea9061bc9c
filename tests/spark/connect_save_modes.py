"""Run by test_save_modes.py: the hoodie save modes on a Spark Connect writer.

Usage: ``python connect_save_modes.py OUT_JSON WORK_DIR``. Starts an in-process Connect server on
local[2] (Connect cannot share a process with the test suite's classic session), installs the patch
with a handler that records what it receives, and writes the records to OUT_JSON.
"""

import json
import os
import sys

os.environ["PYSPARK_PYTHON"] = sys.executable

from pyspark.errors import PySparkException  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

from hoodie_datasource.spark import save_modes  # noqa: E402

out, work = sys.argv[1], sys.argv[2]
path = os.path.join(work, "t")
spark = (
    SparkSession.builder.remote("local[2]")
    .config("spark.sql.shuffle.partitions", "4")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.session.timeZone", "UTC")
    .getOrCreate()
)
received = []


def record(df, options, mode, path):
    received.append({"df": f"{type(df).__module__}.{type(df).__qualname__}",
                     "rows": sorted([list(r) for r in df.collect()]), "options": options, "mode": mode, "path": path})


save_modes.install(record)
df = spark.createDataFrame([(1, "x"), (2, "y")], "id long, s string")
df.write.format("hoodie").mode("upsert").option("a", "b").save(path)
df.write.mode("Delete").format("HOODIE").options(c=1).save(path)
df.write.option("path", path).save(format="hoodie", mode="insert", partitionBy=["s"])

df.write.format("parquet").mode("overwrite").save(os.path.join(work, "pq"))
df.write.format("parquet").mode("overwrite").save(os.path.join(work, "pq"))
rejected = []
for name, write in [
    ("upsert", lambda p: df.write.format("parquet").mode("upsert").save(p)),
    ("parquet()", lambda p: df.write.mode("insert").parquet(p)),
]:
    target = os.path.join(work, name)
    try:
        write(target)
        rejected.append({"case": name, "condition": None, "message": "no error", "value_error": False,
                         "written": os.path.exists(target)})
    except PySparkException as exc:
        rejected.append({"case": name, "condition": exc.getCondition(), "message": str(exc),
                         "value_error": isinstance(exc, ValueError), "written": os.path.exists(target)})

result = {
    "session": type(spark).__module__,
    "received": received,
    "parquet_overwrite_rows": spark.read.parquet(os.path.join(work, "pq")).count(),
    "rejected": rejected,
}
with open(out, "w") as fh:
    json.dump(result, fh)
spark.stop()
