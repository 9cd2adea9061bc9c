"""Optimistic concurrency control through Spark: a DataFrame write and a SQL insert take the storage
lock, beat while pending, and leave no heartbeat or held lock behind."""

from __future__ import annotations

import os

from pyspark.sql import Row

from hoodie_datasource import HoodieTable
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.transaction.storage_lock import StorageLockProvider

OCC = {
    "table.name": "trips", "recordkey.field": "uuid", "partitionpath.field": "city", "precombine.field": "ts",
    "hoodie.write.concurrency.mode": "optimistic_concurrency_control", "hoodie.write.lock.provider": "storage",
}


def test_dataframe_writes_under_occ(spark, table_path):
    def write(rows):
        df = spark.createDataFrame([Row(uuid=u, ts=t, city=c) for u, t, c in rows])
        df.write.format("hoodie").options(**OCC).mode("append").save(table_path)

    write([("a", 1, "sf"), ("b", 1, "nyc")])
    write([("a", 2, "sf"), ("c", 2, "la")])
    got = spark.read.format("hoodie").load(table_path).select("uuid", "ts").orderBy("uuid").collect()
    assert [(r.uuid, r.ts) for r in got] == [("a", 2), ("b", 1), ("c", 2)]
    assert len(HoodieTable(table_path).completed_commits()) == 2
    assert os.listdir(os.path.join(table_path, ".hoodie", ".heartbeat")) == []
    lease = StorageLockProvider(open_storage(table_path), 300, 30).current()
    assert lease is not None and lease.state == "released"  # taken by both writes, released by both
