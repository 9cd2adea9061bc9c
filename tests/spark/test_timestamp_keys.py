"""Timestamp-based and custom key generators through ``format("hoodie")``: a Spark write files every record
under the partition path the local engine gives it (whose paths are Java Hudi's:
``tests/hudi_oracle/test_keygen_oracle.py``), though one path holds many values of the partition column (the
write cannot shuffle by the column's values and shuffles by the computed path), and reads back every row once."""

from __future__ import annotations

import pyarrow as pa

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.table_reader import read_table

P = "hoodie.keygen.timebased."
CUSTOM = {"hoodie.table.name": "events", "hoodie.datasource.write.recordkey.field": "id",
          "hoodie.datasource.write.precombine.field": "seq",
          "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator",
          "hoodie.datasource.write.partitionpath.field": "region:SIMPLE,ms:TIMESTAMP",
          P + "timestamp.type": "EPOCHMILLISECONDS", P + "output.dateformat": "yyyy/MM/dd",
          P + "output.timezone": "America/Los_Angeles", "hoodie.datasource.write.hive_style_partitioning": "true"}
TIMESTAMP = {"hoodie.table.name": "events", "hoodie.datasource.write.recordkey.field": "id",
             "hoodie.datasource.write.precombine.field": "seq",
             "hoodie.datasource.write.keygenerator.type": "TIMESTAMP", "hoodie.datasource.write.partitionpath.field":
             "ts", P + "timestamp.type": "SCALAR", P + "timestamp.scalar.time.unit": "MICROSECONDS",
             P + "output.dateformat": "yyyy-MM"}


def rows(n: int, seq: int) -> pa.Table:
    ms = [None if i % 17 == 0 else 1_600_000_000_000 + i * 7_654_321_987 for i in range(n)]
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "region": [["eu", "us", None][i % 3] for i in range(n)],
        "ms": pa.array(ms, pa.int64()),
        "ts": pa.array([None if m is None else m * 1000 for m in ms], pa.timestamp("us", "UTC")),
        "seq": pa.array([seq] * n, pa.int64()),
    })


def keys_and_paths(path: str) -> list[tuple[str, str]]:
    table = read_table(path, ReadConfig())
    return sorted(zip(table.column("_hoodie_record_key").to_pylist(),
                      table.column("_hoodie_partition_path").to_pylist()))


def test_spark_writes_file_records_as_the_local_engine(spark, tmp_path):
    data = rows(300, 1)
    for options, operation in ((CUSTOM, "upsert"), (TIMESTAMP, "bulk_insert")):
        ours, local = str(tmp_path / f"spark_{operation}"), str(tmp_path / f"local_{operation}")
        spark.createDataFrame(data.to_pandas()).repartition(3).write.format("hoodie").options(**options) \
            .mode(operation).save(ours)
        write_local(local, data, {**options, "hoodie.datasource.write.operation": operation})
        expected = keys_and_paths(local)
        assert len(expected) == 300 and len({p for _, p in expected}) > 20
        assert keys_and_paths(ours) == expected
        # an upsert of half the keys keeps one record per key, in its partition
        again = rows(300, 2).slice(150)
        spark.createDataFrame(again.to_pandas()).write.format("hoodie").options(**options).mode("upsert").save(ours)
        read = spark.read.format("hoodie").load(ours).select("id", "seq").collect()
        assert sorted((r.id, r.seq) for r in read) == [(i, 1 if i < 150 else 2) for i in range(300)]
        assert keys_and_paths(ours) == expected
