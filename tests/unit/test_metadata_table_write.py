"""The metadata table our writes keep (``files`` partition): built by the first write, then every commit,
deltacommit, replacecommit, compaction, clean and rollback recorded there as a deltacommit of the same instant
time before the data instant completes; its own compaction (``001``), clean (``002``) and archival at each
write's start; the data table's archival bounded by its compaction. After every step its reader lists exactly
the committed files of a storage listing (``tests.metadata_checks``). No JVM: Java's reads of these tables run
with the oracle (``tests/hudi_oracle/test_hudi_reads_our_metadata.py``)."""

from __future__ import annotations

import os

import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.metadata.layout import metadata_storage
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.instant import DELTA_COMMIT, ROLLBACK
from tests.metadata_checks import assert_metadata_table_true
from tests.unit.small_tables import batch, read_pairs

BASE = {"table.name": "t", "recordkey.field": "id", "precombine.field": "ts", "hoodie.clean.automatic": "false",
        "hoodie.archive.automatic": "false"}
PARTITIONED = {"partitionpath.field": "p"}
NON_PARTITIONED = {"partitionpath.field": "",
                   "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator"}
CASES = [("COPY_ON_WRITE", True), ("MERGE_ON_READ", True), ("COPY_ON_WRITE", False), ("MERGE_ON_READ", False)]
IDS = ["cow", "mor", "cow-non_partitioned", "mor-non_partitioned"]


def metadata_table(path: str) -> Table:
    return Table.load(metadata_storage(open_storage(path)))


def deltacommits(path: str) -> list[str]:
    return [i.timestamp for i in metadata_table(path).timeline.completed((DELTA_COMMIT,))]


@pytest.mark.parametrize("table_type,partitioned", CASES, ids=IDS)
def test_every_action_is_recorded_in_the_metadata_table(tmp_path, table_type, partitioned):
    path = str(tmp_path / "t")
    opts = {**BASE, **(PARTITIONED if partitioned else NON_PARTITIONED), "hoodie.datasource.write.table.type": table_type}
    table = HoodieTable(path)

    def step(instant: str | None = None) -> None:
        assert_metadata_table_true(path)
        if instant is not None:  # the metadata table recorded it under the same instant time
            assert instant in deltacommits(path)

    step(write_local(path, batch([("a", 1, "x", 1), ("b", 1, "y", 1), ("c", 1, "z", 1)]), opts))
    step(write_local(path, batch([("a", 2, "x", 2), ("d", 2, "y", 2)]), opts))
    step(write_local(path, batch([("b", 3, "y", 0)]), {**opts, "operation": "delete"}))
    step(write_local(path, batch([("e", 4, "x", 4)]), {**opts, "operation": "insert"}))
    if partitioned:
        step(write_local(path, batch([("f", 5, "z", 5)]), {**opts, "operation": "insert_overwrite"}))
        step(write_local(path, batch([("zz", 6, "y", 6)]), {**opts, "operation": "delete_partition"}))
    if table_type == "MERGE_ON_READ":
        for compacted in table.compact():
            step(compacted)
    last = write_local(path, batch([("g", 7, "x", 7)]), opts)
    step(last)
    for cleaned in [table.clean(**{"hoodie.cleaner.commits.retained": "1"})]:
        assert cleaned is not None
        step(cleaned)
    rollback_time = table.rollback(last)
    step()
    assert [i.action for i in table.refresh().timeline().instants][-1] == ROLLBACK
    # partitioned: the overwrite replaced z (c), the partition delete y (d)
    assert read_pairs(path) == ([("a", 2), ("e", 4), ("f", 5)] if partitioned else [("a", 2), ("c", 1), ("d", 2), ("e", 4)])
    assert rollback_time == [last]
    rollbacks = [i for i in metadata_table(path).timeline.instants if i.action == ROLLBACK]
    assert rollbacks and rollbacks[-1].timestamp.endswith("006"), "the rolled back deltacommit is undone with 006"
    assert last not in deltacommits(path)


def test_a_table_without_one_gets_it_at_its_latest_instant(tmp_path):
    path = str(tmp_path / "t")
    opts = {**BASE, **PARTITIONED}
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "y", 1)]), {**opts, "hoodie.metadata.enable": "false"})
    latest = write_local(path, batch([("a", 2, "x", 2)]), {**opts, "hoodie.metadata.enable": "false"})
    assert not os.path.exists(os.path.join(path, ".hoodie", "metadata"))
    write_local(path, batch([("c", 3, "z", 3)]), opts)
    assert deltacommits(path)[0] == latest + "010", "built at the latest completed instant, suffix 010"
    assert_metadata_table_true(path)
    new = str(tmp_path / "new")
    write_local(new, batch([("a", 1, "x", 1)]), opts)
    assert deltacommits(new)[0] == "00000000000000010", "a new table's is built before its first instant"
    assert_metadata_table_true(new)


def test_the_metadata_table_compacts_cleans_and_archives_itself(tmp_path):
    path = str(tmp_path / "t")
    # the metadata table's cleaner keeps 1.2 times the data table's file versions: 2
    opts = {**BASE, **PARTITIONED, "hoodie.metadata.compact.max.delta.commits": "3",
            "hoodie.clean.automatic": "true", "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
            "hoodie.cleaner.fileversions.retained": "1",
            "hoodie.archive.automatic": "true", "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}
    for i in range(14):
        write_local(path, batch([("a", i, "x", i), (f"n{i}", i, "y", i)]), opts)
        assert_metadata_table_true(path)
    mdt = metadata_table(path)
    compactions = [i.timestamp for i in mdt.timeline.completed() if mdt.timeline.is_compaction(i)]
    cleans = [i.timestamp for i in mdt.timeline.completed(("clean",))]
    assert compactions and all(t.endswith("001") for t in compactions)
    assert cleans and all(t.endswith("002") for t in cleans)
    assert mdt.timeline.archived, "the metadata table archived its own instants"
    data = Table.load(open_storage(path)).timeline
    assert data.archived and max(data.archived) < compactions[-1], "data archival stops at the compaction"
    assert read_pairs(path) == sorted([("a", 13)] + [(f"n{i}", i) for i in range(14)])


def test_archival_waits_for_the_metadata_table_to_compact(tmp_path):
    path = str(tmp_path / "t")
    opts = {**BASE, **PARTITIONED}
    for i in range(6):
        write_local(path, batch([("a", i, "x", i)]), opts)
    services = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}
    assert HoodieTable(path).archive(**services) == [], "no compaction of the metadata table yet"
    write_local(path, batch([("a", 9, "x", 9)]), {**opts, "hoodie.metadata.compact.max.delta.commits": "1"})
    assert HoodieTable(path).archive(**services)
    assert_metadata_table_true(path)


def test_rolling_back_a_commit_the_metadata_table_compacted_records_its_files_as_deleted(tmp_path):
    path = str(tmp_path / "t")
    opts = {**BASE, **PARTITIONED, "hoodie.metadata.compact.max.delta.commits": "1"}
    write_local(path, batch([("a", 1, "x", 1)]), opts)
    last = write_local(path, batch([("b", 2, "y", 2)]), opts)
    write_local(path, batch([("a", 3, "x", 3)]), {**opts, "operation": "insert"})  # compacts `last` first
    HoodieTable(path).rollback(HoodieTable(path).latest_commit())
    mdt = metadata_table(path)
    assert any(mdt.timeline.is_compaction(i) and i.timestamp > last for i in mdt.timeline.completed())
    HoodieTable(path).rollback(last)
    assert_metadata_table_true(path)
    assert read_pairs(path) == [("a", 1)]


def test_a_pending_instant_of_the_metadata_table_is_removed_by_its_next_writer(tmp_path):
    path = str(tmp_path / "t")
    opts = {**BASE, **PARTITIONED}
    write_local(path, batch([("a", 1, "x", 1)]), opts)
    storage = metadata_storage(open_storage(path))
    storage.write(".hoodie/29990101000000000.deltacommit.requested", b"")
    storage.write(".hoodie/.temp/29990101000000000/files/.files-0000-0_00000000000000010.log.9_1-0-1.marker.APPEND", b"")
    storage.write("files/.files-0000-0_00000000000000010.log.9_1-0-1", b"left by a writer that died")
    write_local(path, batch([("b", 2, "y", 2)]), opts)
    assert not storage.exists("files/.files-0000-0_00000000000000010.log.9_1-0-1")
    assert metadata_table(path).timeline.find("29990101000000000") is None
    assert_metadata_table_true(path)


def test_a_pending_compaction_of_the_metadata_table_is_removed_and_done_again(tmp_path):
    path = str(tmp_path / "t")
    opts = {**BASE, **PARTITIONED, "hoodie.metadata.compact.max.delta.commits": "4"}
    for i in range(3):  # deltacommits: the files partition's first, and one per write
        write_local(path, batch([("a", i, "x", i)]), opts)
    latest = deltacommits(path)[-1]
    storage = metadata_storage(open_storage(path))
    storage.write(f".hoodie/{latest}001.compaction.requested", b"")
    write_local(path, batch([("b", 9, "y", 9)]), opts)
    mdt = metadata_table(path)
    compaction = mdt.timeline.find(latest + "001")
    assert compaction is not None and compaction.is_completed and mdt.timeline.is_compaction(compaction)
    assert_metadata_table_true(path)
