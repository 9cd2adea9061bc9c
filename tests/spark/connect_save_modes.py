"""The hoodie save modes on a Spark Connect writer (a scenario of ``connect_scenarios.py``, for test_save_modes.py):
installs the patch with a handler that records what it receives. It replaces the handler ``register`` installs,
so it runs after the scenarios that write hoodie tables."""

from __future__ import annotations

import os

from pyspark.errors import PySparkException

from hoodie_datasource.spark import save_modes


def run(spark, work: str) -> dict:
    path = os.path.join(work, "t")
    received = []

    def record(df, options, mode, path):
        received.append({"df": f"{type(df).__module__}.{type(df).__qualname__}",
                         "rows": sorted([list(r) for r in df.collect()]), "options": options, "mode": mode,
                         "path": path})

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
    return {
        "session": type(spark).__module__,
        "received": received,
        "parquet_overwrite_rows": spark.read.parquet(os.path.join(work, "pq")).count(),
        "rejected": rejected,
    }
