"""``hoodie.index.type=HBASE`` through Spark on a real HBase (tests/hbase_server.py): upserts, deletes and a key
moving partition both ways of ``hoodie.hbase.index.update.partition.path``, on copy-on-write and merge-on-read
tables, against a model; after each write HBase holds exactly the table's keys, each at its file group, partition
and the commit that placed it. A failed write's entries are ignored (its instant is not completed), or undone with
``hoodie.index.hbase.rollback.sync``; a gateway that is down or frozen (it accepts, answers nothing) fails the write
with ``HBaseIndexUnavailableError`` naming the quorum within the timeout, and the table keeps its rows."""

from __future__ import annotations

import itertools
import time

import pytest
from pyspark.sql import Row

from hoodie_datasource import HoodieTable, fault_points
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.errors import HBaseIndexUnavailableError, HoodieError, HoodieIndexError
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.table import Table
from tests.unit.test_record_index import snapshot

pytestmark = [pytest.mark.spark, pytest.mark.hbase]

BASE = {"table.name": "hb", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
        "hoodie.parquet.small.file.limit": "0", "hoodie.index.hbase.get.batch.size": "50",
        "hoodie.index.hbase.put.batch.size": "10000"}
_tables = itertools.count()


def _options(hbase, **more: str) -> dict[str, str]:
    return {**BASE, **hbase.index_options(hbase.create_table(f"hoodie_index_{next(_tables)}")), **more}


def _write(spark, path: str, opts: dict[str, str], rows, operation: str = "upsert", **extra: str) -> None:
    df = spark.createDataFrame([Row(id=i, ts=t, p=p, v=v) for i, t, p, v in rows])
    df.write.format("hoodie").options(**opts, **extra).option("hoodie.datasource.write.operation", operation) \
        .mode("append").save(path)


def hbase_entries(hbase, table: str) -> dict[str, tuple[str, str, str]]:
    """key -> (partition_path, file_name, commit_ts), as the HBase table holds them."""
    connection = hbase.connection()
    try:
        return {row.decode(): (cells[b"_s:partition_path"].decode(), cells[b"_s:file_name"].decode(),
                               cells[b"_s:commit_ts"].decode()) for row, cells in connection.table(table).scan()}
    finally:
        connection.close()


def assert_hbase_true(hbase, table: str, path: str) -> None:
    """HBase holds exactly the table's keys, each at the partition and file group holding it, placed by a
    completed commit."""
    t = read_table(path, ReadConfig())
    stored = {k: (p, f.split("_")[0]) for k, p, f in zip(*(t.column(c).to_pylist() for c in (
        "id", "_hoodie_partition_path", "_hoodie_file_name")))}
    entries = hbase_entries(hbase, table)
    assert {k: e[:2] for k, e in entries.items()} == stored
    completed = {i.timestamp for i in Table.load(open_storage(path)).timeline.completed()}
    assert {e[2] for e in entries.values()} <= completed


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_spark_writes_tag_through_hbase(spark, tmp_path, hbase, table_type):
    path = str(tmp_path / "t")
    opts = _options(hbase, **{"hoodie.datasource.write.table.type": table_type})
    table = opts["hoodie.index.hbase.table"]
    _write(spark, path, opts, [(f"k{i:03d}", 1, "xyz"[i % 3], i) for i in range(300)], "bulk_insert")
    model = {f"k{i:03d}": ("xyz"[i % 3], "xyz"[i % 3], i) for i in range(300)}
    assert_hbase_true(hbase, table, path)
    _write(spark, path, opts, [(f"k{i:03d}", 2, "xyz"[i % 3], -i) for i in range(0, 300, 7)] + [("n1", 2, "x", 1)])
    model.update({f"k{i:03d}": ("xyz"[i % 3], "xyz"[i % 3], -i) for i in range(0, 300, 7)} | {"n1": ("x", "x", 1)})
    assert snapshot(path) == model
    assert_hbase_true(hbase, table, path)
    _write(spark, path, opts, [("k001", 3, "x", 0), ("k002", 3, "y", 0), ("gone", 3, "x", 0)], "delete")
    del model["k001"], model["k002"]
    _write(spark, path, opts, [("k004", 4, "z", 44)])  # stored in y: updated there (Hudi's default)
    model["k004"] = ("y", "z", 44)
    _write(spark, path, opts, [("k005", 5, "x", 55)], **{"hoodie.hbase.index.update.partition.path": "true"})
    model["k005"] = ("x", "x", 55)  # moved from z
    assert snapshot(path) == model
    assert_hbase_true(hbase, table, path)
    _write(spark, path, opts, [("k001", 6, "y", 1)])  # deleted, now new again
    model["k001"] = ("y", "y", 1)
    assert snapshot(path) == model
    assert_hbase_true(hbase, table, path)


def test_a_clustering_moves_the_keys_in_hbase_too(spark, tmp_path, hbase):
    """A clustering rewrites file groups into new ones: with the HBase index's options it puts the keys at their new
    groups before it completes (as Hudi's clustering updates its index), so the next upsert updates them there."""
    path = str(tmp_path / "t")
    opts = _options(hbase, **{"hoodie.datasource.write.table.type": "MERGE_ON_READ"})
    table = opts["hoodie.index.hbase.table"]
    for n in range(3):  # three small file groups a partition
        _write(spark, path, opts, [(f"k{n}{i}", 1, "xy"[i % 2], i) for i in range(10)], "bulk_insert")
    _write(spark, path, opts, [("k01", 2, "y", -1)])  # a log block too
    before = snapshot(path)
    assert HoodieTable(path).cluster(**opts)
    assert snapshot(path) == before
    assert_hbase_true(hbase, table, path)
    _write(spark, path, opts, [("k01", 3, "y", 101), ("k12", 3, "x", 102), ("n1", 3, "x", 103)])
    assert snapshot(path) == {**before, "k01": ("y", "y", 101), "k12": ("x", "x", 102), "n1": ("x", "x", 103)}
    assert_hbase_true(hbase, table, path)


def _failing_before_commit(monkeypatch):
    def fail(point, **context):
        raise RuntimeError(f"injected at {point}")
    monkeypatch.setattr(fault_points, "_hooks", lambda: {fault_points.BEFORE_COMMIT: fail})


@pytest.mark.parametrize("rollback_sync", [False, True])
def test_a_failed_writes_entries_are_ignored_or_undone(spark, tmp_path, hbase, monkeypatch, rollback_sync):
    """A write that failed after updating HBase (its data files written, its instant rolled back): without
    rollback.sync its entries stay but name an instant that never completed, so the keys are new again (written
    once); with it, the moved key's entry is its old one again and the new keys' entries are gone."""
    path = str(tmp_path / "t")
    opts = _options(hbase, **{"hoodie.index.hbase.rollback.sync": str(rollback_sync).lower(),
                              "hoodie.hbase.index.update.partition.path": "true"})
    table = opts["hoodie.index.hbase.table"]
    _write(spark, path, opts, [(f"k{i}", 1, "xy"[i % 2], i) for i in range(20)])
    before, entries = snapshot(path), hbase_entries(hbase, table)
    with monkeypatch.context() as patched:
        _failing_before_commit(patched)
        with pytest.raises(Exception, match="injected at before_commit"):
            _write(spark, path, opts, [("n1", 2, "x", 1), ("n2", 2, "y", 2), ("k0", 2, "y", 100)])
    assert snapshot(path) == before
    after = hbase_entries(hbase, table)
    if rollback_sync:
        assert after == entries
    else:
        assert {"n1", "n2"} <= set(after) and after["k0"][0] == "y"  # the failed write's, ignored
    _write(spark, path, opts, [("n1", 3, "x", 1), ("n2", 3, "y", 2), ("k0", 3, "y", 100)])
    assert snapshot(path) == {**before, "n1": ("x", "x", 1), "n2": ("y", "y", 2), "k0": ("y", "y", 100)}
    assert_hbase_true(hbase, table, path)


def test_a_gateway_down_or_frozen_fails_the_write_naming_the_quorum(spark, tmp_path, hbase):
    path = str(tmp_path / "t")
    opts = _options(hbase, **{"hoodie.index.hbase.zk.connection_timeout_ms": "3000"})
    _write(spark, path, opts, [(f"k{i}", 1, "x", i) for i in range(10)])
    before = snapshot(path)
    quorum = f"HBase quorum 127.0.0.1:{hbase.zk_port}"
    hbase.stop_thrift()
    try:
        with pytest.raises(HBaseIndexUnavailableError, match=quorum):
            _write(spark, path, opts, [("k1", 2, "x", -1), ("n1", 2, "x", 1)])
    finally:
        hbase.start_thrift()
    assert snapshot(path) == before
    hbase.freeze_gateway()
    started = time.monotonic()
    try:
        with pytest.raises(HBaseIndexUnavailableError, match=f"{quorum}.*within 3000 ms"):
            _write(spark, path, opts, [("k1", 2, "x", -1), ("n1", 2, "x", 1)])
    finally:
        hbase.thaw_gateway()
    assert time.monotonic() - started < 30
    assert snapshot(path) == before
    _write(spark, path, opts, [("k1", 2, "x", -1), ("n1", 2, "x", 1)])
    assert snapshot(path) == {**before, "k1": ("x", "x", -1), "n1": ("x", "x", 1)}


def test_a_missing_table_or_option_is_named(spark, tmp_path, hbase):
    path = str(tmp_path / "t")
    rows = [("k1", 1, "x", 1)]
    with pytest.raises(HoodieError, match="hoodie.index.hbase.table"):
        _write(spark, path, {**BASE, "hoodie.index.type": "HBASE", "hoodie.index.hbase.zkquorum": "127.0.0.1",
                             "hoodie.index.hbase.zkport": "2181"}, rows)
    opts = {**BASE, **hbase.index_options("no_such_table")}
    with pytest.raises(HoodieIndexError, match="has no table 'no_such_table'.*create it with column family '_s'"):
        _write(spark, path, opts, rows, "bulk_insert")  # nothing to look up, but HBase learns the keys
    assert snapshot(path) == {}
