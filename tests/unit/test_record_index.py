"""``hoodie.index.type=RECORD_INDEX`` (Apache Hudi's ``SparkMetadataTableRecordIndex``) through the local engine:
every write operation on copy-on-write and merge-on-read tables tags its keys in the metadata table's record index
(no base-file footer read), against a model of the table; a key moving partition both ways of
``hoodie.record.index.update.partition.path``; a failed write's record-index entries never seen; the fallback to
GLOBAL_SIMPLE while the table has no ready record index, as Hudi's."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hoodie_datasource import HoodieTable, fault_points, hoodie_table
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.index import base_file_cache
from hoodie_datasource.index.lookup_index import GlobalSimpleIndex
from hoodie_datasource.index.record_index import RecordIndex
from hoodie_datasource.read.key_lookup import KeyLookup
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.table.table import Table
from tests.counting_storage import FileReadLog
from tests.metadata_checks import assert_record_index_true
from tests.unit.small_tables import batch

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
        "hoodie.index.type": "RECORD_INDEX", "hoodie.metadata.record.index.enable": "true",
        "hoodie.metadata.record.index.min.filegroup.count": "3",
        "hoodie.metadata.record.index.max.filegroup.count": "3", "hoodie.parquet.small.file.limit": "0"}


def snapshot(path: str) -> dict[str, tuple[str, str, int]]:
    """key -> (stored partition path, partition field, v); a key stored twice fails."""
    t = read_table(path, ReadConfig())
    rows = list(zip(*(t.column(c).to_pylist() for c in ("id", "_hoodie_partition_path", "p", "v"))))
    keys = [r[0] for r in rows]
    assert len(keys) == len(set(keys)), f"a key stored twice: {sorted(keys)}"
    return {k: (stored, p, v) for k, stored, p, v in rows}


@pytest.fixture
def lookups(monkeypatch):
    """How many keys the record index looked up; a base file's footer read for its key range fails the test."""
    seen = []
    real = RecordIndex._locations

    def counted(self, keys, files):
        found = real(self, keys, files)
        seen.append(len(keys))
        return found

    def no_footer(*args, **kwargs):
        raise AssertionError("RECORD_INDEX read a base file's footer for its key range")
    monkeypatch.setattr(RecordIndex, "_locations", counted)
    monkeypatch.setattr(base_file_cache, "key_range", no_footer)
    return seen


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_every_write_operation_tags_through_the_record_index(tmp_path, lookups, table_type):
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.datasource.write.table.type": table_type}
    model: dict[str, tuple[str, str, int]] = {}

    def write(rows, operation="upsert", **extra):
        write_local(path, batch(rows), {**opts, "hoodie.datasource.write.operation": operation, **extra})
        assert snapshot(path) == model, operation
        assert_record_index_true(path)

    model.update({f"k{i}": ("xyz"[i % 3], "xyz"[i % 3], i) for i in range(12)})
    write([(f"k{i}", 1, "xyz"[i % 3], i) for i in range(12)], "insert")
    assert not lookups, "an insert is not tagged"
    model.update({"k1": ("y", "y", 100), "k2": ("z", "z", 101), "n1": ("x", "x", 102)})
    write([("k1", 2, "y", 100), ("k2", 2, "z", 101), ("n1", 2, "x", 102)])
    assert lookups == [3]
    for key in ("k3", "k5", "nope"):
        model.pop(key, None)
    write([("k3", 3, "x", 0), ("k5", 3, "z", 0), ("nope", 3, "x", 0)], "delete")
    # a key written with another partition: updated where it is stored (Hudi's default), its fields as given
    model["k4"] = ("y", "x", 104)
    write([("k4", 4, "x", 104)])
    # ... or moved there, deleted in its old partition
    model["k6"] = ("y", "y", 106)
    write([("k6", 5, "y", 106)], **{"hoodie.record.index.update.partition.path": "true"})
    model["k4"] = ("z", "z", 107)
    write([("k4", 6, "z", 107)], **{"hoodie.record.index.update.partition.path": "true"})
    model.update({f"b{i}": ("x", "x", i) for i in range(3)})
    write([(f"b{i}", 7, "x", i) for i in range(3)], "bulk_insert")
    for key in [k for k, (stored, _, _) in model.items() if stored == "y"]:
        del model[key]
    model.update({"o1": ("y", "y", 1), "o2": ("y", "y", 2)})
    write([("o1", 8, "y", 1), ("o2", 8, "y", 2)], "insert_overwrite")
    model.update({"o1": ("y", "y", 3), "k0": ("x", "x", 4)})
    write([("o1", 9, "y", 3), ("k0", 9, "x", 4)])
    if table_type == "MERGE_ON_READ":
        HoodieTable(path).compact()
        model["o2"] = ("y", "y", 5)
        write([("o2", 10, "y", 5)])


class _Fail(Exception):
    pass


def _look_then_fail(point, storage, instant):
    """At the metadata table's completed deltacommit of a data instant still pending: its keys are not found."""
    table = Table.load(_look_then_fail.path)
    located = KeyLookup.of(table, OPTS).read_keys(pa.table({"id": ["k0", "new"]}))
    _look_then_fail.seen = sorted(located.column("id").to_pylist())
    raise _Fail(instant)


def test_a_failed_writes_record_index_entries_are_never_seen(tmp_path, monkeypatch):
    path = _look_then_fail.path = str(tmp_path / "t")
    write_local(path, batch([("k0", 1, "x", 1)]), OPTS)
    write_local(path, batch([("k1", 2, "y", 2)]), OPTS)
    monkeypatch.setenv(fault_points.ENV_VAR, f"{fault_points.METADATA_AFTER_COMMIT}={__name__}:_look_then_fail")
    fault_points._hooks.cache_clear()
    try:
        with pytest.raises(_Fail):
            write_local(path, batch([("new", 3, "x", 3), ("k0", 3, "y", 3)]),
                        {**OPTS, "hoodie.record.index.update.partition.path": "true"})
    finally:
        monkeypatch.delenv(fault_points.ENV_VAR)
        fault_points._hooks.cache_clear()
    assert _look_then_fail.seen == ["k0"], "the pending write's entries (new, k0 moved) were seen"
    assert snapshot(path) == {"k0": ("x", "x", 1), "k1": ("y", "y", 2)}
    write_local(path, batch([("new", 4, "y", 4), ("k0", 4, "y", 5)]),
                {**OPTS, "hoodie.record.index.update.partition.path": "true"})
    assert snapshot(path) == {"k0": ("y", "y", 5), "k1": ("y", "y", 2), "new": ("y", "y", 4)}
    assert_record_index_true(path)


def test_without_a_ready_record_index_tagging_is_global_simples(tmp_path, caplog):
    """``hoodie.metadata.record.index.enable=false`` (the default): Hudi 0.15 keeps no record index for the index
    type's sake, and ``SparkMetadataTableRecordIndex.tagLocation`` falls back to GLOBAL_SIMPLE, its own
    ``hoodie.simple.index.update.partition.path`` (default true: a key moves) applying."""
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.metadata.record.index.enable": "false"}
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "y", 2)]), opts)
    assert isinstance(KeyLookup.of(Table.load(path), opts).index, GlobalSimpleIndex)
    write_local(path, batch([("a", 2, "y", 3)]), opts)
    assert "falls back to GLOBAL_SIMPLE" in caplog.text
    assert snapshot(path) == {"a": ("y", "y", 3), "b": ("y", "y", 2)}
    write_local(path, batch([("a", 3, "x", 4)]), OPTS)  # builds the record index, then tags through it
    assert isinstance(KeyLookup.of(Table.load(path), OPTS).index, RecordIndex)
    assert snapshot(path) == {"a": ("y", "x", 4), "b": ("y", "y", 2)}, "updated where it is, not moved"
    assert_record_index_true(path)


def test_ten_keys_read_only_the_data_file_groups_the_record_index_names(tmp_path, monkeypatch):
    """``HoodieTable.read_keys`` of 10 keys on a RECORD_INDEX table of 24 file groups: the data files read are those
    of the groups holding the keys (at most 10): no base file is read to find them."""
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.datasource.write.operation": "insert"}
    for shift in range(12):  # twelve base files a partition
        write_local(path, batch([(f"k{i:03d}", 1, "xy"[i // 12 % 2], i) for i in range(shift, 240, 12)]), opts)
    stored = HoodieTable(path).scan()
    group_of = dict(zip(stored.column("id").to_pylist(), stored.column("_hoodie_file_name").to_pylist()))
    assert len({name.split("_")[0] for name in group_of.values()}) == 24
    keys = [f"k{i:03d}" for i in range(0, 240, 23)][:10]
    storage = FileReadLog(path, str(tmp_path / "reads.log"))
    monkeypatch.setattr(hoodie_table, "open_storage", lambda uri, options: storage)
    table = HoodieTable(path)
    assert table.table.schema.names  # the handle's own reads (its schema, from the latest base file's footer)
    storage.file_groups_read()
    got = table.read_keys(pa.table({"id": keys}), **OPTS)
    assert sorted(got.column("id").to_pylist()) == keys
    read = storage.file_groups_read()
    assert {file_id for _, file_id in read} == {group_of[k].split("_")[0] for k in keys} and len(read) <= 10
