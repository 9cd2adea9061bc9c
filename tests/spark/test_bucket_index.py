"""The simple bucket index through Spark: bulk inserts, inserts and upserts land in their key's bucket's
file group (partitioned tables write per partition, non-partitioned ones through the one-job DAG), copy-on-write
and merge-on-read; our reader and hudi-rs see the same rows."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest
from pyspark.sql import Row

from hoodie_datasource.index.bucket_id import bucket_id_of_file, bucket_ids
from tests.conftest import require_module

hudi = require_module("hudi")
from hudi import HudiTableBuilder  # noqa: E402

COLS = ["id", "ts", "p", "v"]


def _write(spark, path, rows, table_type, partitioned, operation):
    df = spark.createDataFrame([Row(id=i, ts=t, p=p, v=v) for i, t, p, v in rows])
    options = {"table.name": "bk", "recordkey.field": "id", "precombine.field": "ts", "table.type": table_type,
               "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4", "operation": operation}
    if partitioned:
        options["partitionpath.field"] = "p"
    else:
        options["hoodie.datasource.write.keygenerator.class"] = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
    df.write.format("hoodie").options(**options).mode("append").save(path)


def _file_ids(path):
    return {n[1:39] if n.startswith(".") else n[:38]
            for root, _, names in os.walk(path) if ".hoodie" not in root for n in names
            if ".parquet" in n or ".log." in n}


@pytest.mark.parametrize("table_type,partitioned,load", [("COPY_ON_WRITE", True, "bulk_insert"),
                                                         ("MERGE_ON_READ", False, "insert")])
def test_bucket_index_upserts_through_spark(spark, table_path, table_type, partitioned, load):
    rows = [(f"k{i}", 1, "x" if i % 2 else "y", i) for i in range(40)]
    _write(spark, table_path, rows, table_type, partitioned, load)
    first = _file_ids(table_path)
    assert len(first) == (8 if partitioned else 4)
    _write(spark, table_path, [("k1", 2, "x", 100), ("k2", 2, "y", 200), ("new", 2, "x", 7)], table_type,
           partitioned, "upsert")
    assert _file_ids(table_path) == first  # no new file group: every key's bucket already had one
    got = sorted(tuple(r) for r in spark.read.format("hoodie").load(table_path)
                 .select(*COLS, "_hoodie_file_name", "_hoodie_record_key").collect())
    for *_, file_name, key in got:
        assert bucket_id_of_file(file_name) == bucket_ids(pa.array([key]), ["id"], 4)[0]
    expected = sorted({**{r[0]: r for r in rows}, "k1": ("k1", 2, "x", 100), "k2": ("k2", 2, "y", 200),
                       "new": ("new", 2, "x", 7)}.values())
    assert [tuple(r[:4]) for r in got] == expected
    theirs = pa.Table.from_batches(HudiTableBuilder.from_base_uri(table_path).build().read()).select(COLS)
    assert sorted(tuple(r.values()) for r in theirs.to_pylist()) == expected


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_deletes_without_partitions_drop_keys_of_buckets_without_a_file_group(spark, table_path, table_type):
    rows = [(f"k{i}", 1, "x", i) for i in range(3)]
    _write(spark, table_path, rows, table_type, False, "upsert")
    first = _file_ids(table_path)
    buckets = {int(f[:8]) for f in first}
    stray = next(k for k in (f"z{i}" for i in range(100)) if bucket_ids(pa.array([k]), ["id"], 4)[0] not in buckets)
    _write(spark, table_path, [("k1", 2, "x", 0), (stray, 2, "x", 0)], table_type, False, "delete")
    assert _file_ids(table_path) == first  # the stray delete made no file group of its bucket
    got = sorted(tuple(r) for r in spark.read.format("hoodie").load(table_path).select(*COLS).collect())
    assert got == [("k0", 1, "x", 0), ("k2", 1, "x", 2)]


def test_a_bucket_count_the_table_cannot_take_fails_before_writing(spark, table_path):
    _write(spark, table_path, [(f"k{i}", 1, "x", i) for i in range(20)], "MERGE_ON_READ", False, "upsert")
    before = sorted(os.listdir(table_path))
    df = spark.createDataFrame([Row(id="k1", ts=2, p="x", v=5)])
    options = {"table.name": "bk", "recordkey.field": "id", "precombine.field": "ts", "table.type": "MERGE_ON_READ",
               "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2",
               "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator"}
    with pytest.raises(Exception, match="num.buckets=2"):
        df.write.format("hoodie").options(**options).mode("append").save(table_path)
    assert sorted(os.listdir(table_path)) == before
    assert {tuple(r) for r in spark.read.format("hoodie").load(table_path).select("id", "v").collect()} == \
        {(f"k{i}", i) for i in range(20)}


def test_insert_overwrite_of_a_bucket_table_replaces_the_partitions_it_writes(spark, table_path):
    _write(spark, table_path, [(f"k{i}", 1, "x" if i % 2 else "y", i) for i in range(10)], "MERGE_ON_READ", True,
           "upsert")
    _write(spark, table_path, [("n1", 2, "x", 100), ("n2", 2, "x", 200)], "MERGE_ON_READ", True, "insert_overwrite")
    got = sorted(tuple(r) for r in spark.read.format("hoodie").load(table_path).select(*COLS).collect())
    assert got == sorted([("n1", 2, "x", 100), ("n2", 2, "x", 200)]
                         + [(f"k{i}", 1, "y", i) for i in range(0, 10, 2)])
    for name in {r[0] for r in spark.read.format("hoodie").load(table_path).select("_hoodie_file_name").collect()}:
        assert bucket_id_of_file(name) < 4
