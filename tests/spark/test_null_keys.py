"""Null partition-path and precombine values through ``format("hoodie")``, as Apache Hudi treats them:
a null partition value goes to ``__HIVE_DEFAULT_PARTITION__`` (KeyGenUtils) and reads back as null; a
null precombine value fails a write that combines records (HoodieCreateRecordUtils) and changes nothing."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

from hoodie_datasource import HoodieTable

hudi = pytest.importorskip("hudi")
from hudi import HudiTableBuilder  # noqa: E402

OPTS = {"table.name": "nk", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}
SCHEMA = "id string, ts int, p string, v double"


def write(spark, path, rows, **extra):
    spark.createDataFrame(rows, SCHEMA).write.format("hoodie").options(**OPTS, **extra).mode("upsert").save(path)


def ours(spark, path):
    return sorted((tuple(r) for r in spark.read.format("hoodie").load(path).select("id", "ts", "p", "v").collect()),
                  key=lambda r: r[0])


def test_null_partition_value(spark, table_path):
    write(spark, table_path, [("a", 1, None, 1.0), ("b", 1, "x", 2.0)], hive_style_partitioning="true")
    assert os.path.isdir(os.path.join(table_path, "p=__HIVE_DEFAULT_PARTITION__"))
    assert ours(spark, table_path) == [("a", 1, None, 1.0), ("b", 1, "x", 2.0)]
    # the key is found again in that partition: an update, not a second row
    write(spark, table_path, [("a", 2, None, 1.5)], hive_style_partitioning="true")
    expected = [("a", 2, None, 1.5), ("b", 1, "x", 2.0)]
    assert ours(spark, table_path) == expected
    data = pa.Table.from_batches(HudiTableBuilder.from_base_uri(table_path).build().read())
    assert sorted((tuple(r.values()) for r in data.select(["id", "ts", "p", "v"]).to_pylist()),
                  key=lambda r: r[0]) == expected


def test_null_precombine_value_fails_the_upsert(spark, table_path):
    write(spark, table_path, [("a", 1, "x", 1.0)])
    before = HoodieTable(table_path).completed_commits()
    with pytest.raises(Exception, match="Precombine field 'ts' is null in 1 record"):
        write(spark, table_path, [("a", None, "x", 9.0), ("b", 2, "x", 2.0)])
    assert HoodieTable(table_path).completed_commits() == before
    assert ours(spark, table_path) == [("a", 1, "x", 1.0)]
    data_files = [n for _, _, files in os.walk(table_path) for n in files if n.endswith(".parquet")]
    assert len(data_files) == 1  # the failed write left no file behind
