"""A write/read round trip over Spark Connect (a scenario of ``connect_scenarios.py``, for test_spark_connect.py)."""

from __future__ import annotations

import hoodie_datasource
from hoodie_datasource.table.metadata_table import ready_partitions


def run(spark, work: str) -> dict:
    path = f"{work}/t"
    hoodie_datasource.register(spark)
    schema = "uuid string, ts long, city string, fare double"
    opts = {"table.name": "trips", "recordkey.field": "uuid", "partitionpath.field": "city", "precombine.field": "ts"}
    spark.createDataFrame([("a", 1, "sf", 1.0), ("b", 1, "nyc", 2.0)], schema).write.format("hoodie") \
        .options(**opts).mode("upsert").save(path)
    spark.createDataFrame([("a", 2, "sf", 5.0)], schema).write.format("hoodie").options(**opts) \
        .mode("append").option("hoodie.datasource.write.operation", "upsert").save(path)
    spark.createDataFrame([("b", 3, "nyc", 0.0)], schema).write.mode("delete").format("hoodie").options(**opts) \
        .save(path)
    first = hoodie_datasource.HoodieTable(path).completed_commits()[0]
    # under the record index, a second upsert's records are routed to their lookup tasks by Spark SQL (reflect)
    ri_path, ri_opts = f"{work}/ri", {**opts, "hoodie.index.type": "RECORD_INDEX",
                                      "hoodie.metadata.record.index.enable": "true"}
    ready = []  # the record index is ready before the second upsert: its tagging goes through it
    for rows in ([("a", 1, "sf", 1.0), ("b", 1, "nyc", 2.0)], [("a", 2, "sf", 5.0), ("c", 2, "la", 3.0)]):
        spark.createDataFrame(rows, schema).write.format("hoodie").options(**ri_opts).mode("upsert").save(ri_path)
        ready.append("record_index" in ready_partitions(hoodie_datasource.HoodieTable(ri_path).table.config))
    return {
        "record_index_ready": ready,
        "record_index": sorted([r.uuid, r.fare] for r in spark.read.format("hoodie").load(ri_path).collect()),
        "snapshot": sorted([r.uuid, r.fare] for r in spark.read.format("hoodie").load(path).collect()),
        "incremental": sorted(r.uuid for r in spark.read.format("hoodie").option("query", "incremental")
                              .option("begin.instant", first).load(path).collect()),
        "filtered": [r.uuid for r in spark.read.format("hoodie").load(path).filter("city = 'sf'").collect()],
        "session": type(spark).__module__,
    }
