"""The metadata table's record index (``hoodie.metadata.record.index.enable``) as our writes keep it: built from
the table's file slices (merged, on merge-on-read), then each commit's added keys at their file group and its
removed keys deleted, a key moved by a global index at its new file group, an overwrite's replaced keys deleted;
rolled back with its deltacommit. After every step it holds exactly the table's keys, each where it lives
(``tests.metadata_checks``)."""

from __future__ import annotations

import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.errors import MetadataTableError
from hoodie_datasource.services.metadata_init import estimate_file_group_count
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.table import Table
from tests.metadata_checks import assert_metadata_table_true, assert_record_index_true, record_index
from tests.unit.small_tables import batch, read_pairs

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
        "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}
RLI = {"hoodie.metadata.record.index.enable": "true", "hoodie.metadata.record.index.min.filegroup.count": "3",
       "hoodie.metadata.record.index.max.filegroup.count": "3"}


def checked(path: str) -> None:
    assert_metadata_table_true(path)
    assert_record_index_true(path)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_every_write_keeps_the_record_index_true(tmp_path, table_type):
    path = str(tmp_path / "t")
    opts = {**OPTS, **RLI, "hoodie.datasource.write.table.type": table_type}
    write_local(path, batch([(f"k{i}", 1, "xyz"[i % 3], i) for i in range(12)]), opts)
    checked(path)
    write_local(path, batch([("k1", 2, "y", 100), ("n1", 2, "x", 101)]), opts)
    checked(path)
    write_local(path, batch([("k2", 3, "z", 0), ("k5", 3, "z", 0)]), {**opts, "operation": "delete"})
    checked(path)
    write_local(path, batch([(f"b{i}", 4, "x", i) for i in range(3)]), {**opts, "operation": "bulk_insert"})
    checked(path)
    write_local(path, batch([("k3", 5, "x", 5), ("o1", 5, "x", 6)]), {**opts, "operation": "insert_overwrite"})
    checked(path)  # the overwrite of x replaced its keys but k3 and o1 (k3 moved from x's old groups)
    write_local(path, batch([("zz", 6, "z", 0)]), {**opts, "operation": "delete_partition"})
    checked(path)
    if table_type == "MERGE_ON_READ":
        HoodieTable(path).compact()
        checked(path)
    last = write_local(path, batch([("k4", 7, "y", 7), ("n2", 7, "y", 8)]), opts)
    HoodieTable(path).rollback(last)
    checked(path)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_the_record_index_is_built_from_the_table_as_it_is(tmp_path, table_type):
    """Built on a table written without it: a merge-on-read table's logs (an update, a delete) merged in."""
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.datasource.write.table.type": table_type}
    write_local(path, batch([(f"k{i}", 1, "xy"[i % 2], i) for i in range(8)]), opts)
    write_local(path, batch([("k1", 2, "y", 10)]), opts)
    write_local(path, batch([("k2", 3, "x", 0)]), {**opts, "operation": "delete"})
    write_local(path, batch([("n1", 4, "x", 11)]), {**opts, **RLI})
    checked(path)


def test_a_key_a_partition_local_index_stored_twice_is_built_at_its_latest_slice(tmp_path, caplog):
    """Hudi's record index is global; built over a BLOOM table holding "a" in x and in y, it keeps the later."""
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "x", 2)]), OPTS)
    write_local(path, batch([("a", 2, "y", 3)]), OPTS)
    write_local(path, batch([("c", 3, "x", 4)]), {**OPTS, **RLI})
    assert_metadata_table_true(path)
    indexed = record_index(Table.load(open_storage(path)))
    assert sorted(indexed) == ["a", "b", "c"] and indexed["a"][0] == "y" and indexed["b"][0] == "x"
    assert "1 record keys in more than one partition" in caplog.text
    assert read_pairs(path) == [("a", 1), ("a", 3), ("b", 2), ("c", 4)]


def test_a_key_a_global_index_moves_is_indexed_where_it_went(tmp_path):
    path = str(tmp_path / "t")
    opts = {**OPTS, **RLI, "hoodie.index.type": "GLOBAL_SIMPLE"}
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "y", 2)]), opts)
    write_local(path, batch([("a", 2, "y", 3)]), opts)
    checked(path)
    assert read_pairs(path) == [("a", 3), ("b", 2)]


def test_a_rollback_the_record_index_cannot_follow_is_refused(tmp_path):
    path = str(tmp_path / "t")
    opts = {**OPTS, **RLI, "hoodie.metadata.compact.max.delta.commits": "1"}
    write_local(path, batch([("a", 1, "x", 1)]), opts)
    last = write_local(path, batch([("b", 2, "y", 2)]), opts)
    write_local(path, batch([("c", 3, "x", 3)]).slice(0, 0), opts)  # compacts the metadata table over `last`
    HoodieTable(path).rollback(HoodieTable(path).latest_commit())
    with pytest.raises(MetadataTableError, match="compaction"):
        HoodieTable(path).rollback(last)
    checked(path)
    assert read_pairs(path) == [("a", 1), ("b", 2)]


def test_file_groups_are_estimated_as_hudi_does():
    # HoodieTableMetadataUtil.estimateFileGroupCount with Hudi's defaults: 10 to 10,000 groups of 1 GB
    assert estimate_file_group_count(1000, 48, 10, 10_000, 2.0, 1 << 30) == 10
    assert estimate_file_group_count(500_000_000, 48, 10, 10_000, 2.0, 1 << 30) == 44
    assert estimate_file_group_count(10**12, 48, 10, 10_000, 2.0, 1 << 30) == 10_000
    assert estimate_file_group_count(10**12, 48, 4, 4, 2.0, 1 << 30) == 4
