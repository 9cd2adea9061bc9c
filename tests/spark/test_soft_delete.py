"""Hudi's soft delete through ``format("hoodie")``: a record whose ``_hoodie_is_deleted`` is true deletes
its key (copy-on-write and merge-on-read, before and after compaction); hudi-rs reads the same rows."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hoodie_datasource import HoodieTable

hudi = pytest.importorskip("hudi")
from hudi import HudiTableBuilder  # noqa: E402

OPTS = {"table.name": "sd", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}
SCHEMA = "id string, ts int, p string, v string, _hoodie_is_deleted boolean"


def write(spark, path, rows, **extra):
    options = {**OPTS, **extra}
    spark.createDataFrame(rows, SCHEMA).write.format("hoodie").options(**options).mode("upsert").save(path)
    return HoodieTable(path).latest_commit()


def ours(spark, path, **options):
    reader = spark.read.format("hoodie")
    for key, value in options.items():
        reader = reader.option(key, value)
    return sorted(tuple(r) for r in reader.load(path).select("id", "v", "_hoodie_is_deleted").collect())


def hudi_rs(path):
    data = pa.Table.from_batches(HudiTableBuilder.from_base_uri(path).build().read())
    return sorted(tuple(r.values()) for r in data.select(["id", "v", "_hoodie_is_deleted"]).to_pylist())


def deletes_counted(path, instant):
    metadata = HoodieTable(path).commit_metadata(instant)
    return sum(s.get("numDeletes", 0) for group in metadata["partitionToWriteStats"].values() for s in group)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_soft_deletes_remove_rows(spark, table_path, table_type):
    extra = {"storage.type": table_type}
    write(spark, table_path, [("a", 1, "x", "a1", False), ("b", 1, "x", "b1", None), ("c", 1, "y", "c1", False),
                              ("d", 1, "y", "d1", False)], **extra)
    # b and c soft-deleted, a updated, z (not in the table) soft-deleted: nothing happens to it;
    # d: an update and a soft delete in one batch, the delete has the higher ordering value
    instant = write(spark, table_path, [("a", 2, "x", "a2", False), ("b", 2, "x", "b2", True),
                                        ("c", 2, "y", "c2", True), ("z", 2, "y", "z2", True),
                                        ("d", 3, "y", "d3", True), ("d", 2, "y", "d2", False)], **extra)
    expected = [("a", "a2", False)]
    assert ours(spark, table_path) == expected
    assert deletes_counted(table_path, instant) == 3
    assert hudi_rs(table_path) == expected
    if table_type == "MERGE_ON_READ":
        assert ours(spark, table_path, query="read_optimized") == [
            ("a", "a1", False), ("b", "b1", None), ("c", "c1", False), ("d", "d1", False)]
        HoodieTable(table_path).compact()
        assert ours(spark, table_path) == expected
        assert ours(spark, table_path, query="read_optimized") == expected
        assert hudi_rs(table_path) == expected
    # a soft-deleted key comes back with a later write
    write(spark, table_path, [("b", 4, "x", "b4", False)], **extra)
    assert ours(spark, table_path) == [("a", "a2", False), ("b", "b4", False)]


def test_soft_deletes_in_the_general_write_dag(spark, table_path):
    """A non-partitioned table (and GLOBAL_BLOOM) writes through the general DAG, not the per-partition job."""
    extra = {"partitionpath.field": "", "index.type": "GLOBAL_BLOOM"}
    write(spark, table_path, [("a", 1, "x", "a1", False), ("b", 1, "x", "b1", False)], **extra)
    instant = write(spark, table_path, [("b", 2, "x", "b2", True), ("n", 3, "x", "n3", True),
                                        ("n", 2, "x", "n2", False), ("m", 2, "x", "m2", True)], **extra)
    assert ours(spark, table_path) == [("a", "a1", False)]
    assert deletes_counted(table_path, instant) == 1
    assert hudi_rs(table_path) == [("a", "a1", False)]
