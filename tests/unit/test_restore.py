"""Restoring a table to a savepoint (``HoodieTable.rollback_to_savepoint``, no JVM): every write, compaction and
clustering after the savepoint rolled back, in any state, on copy-on-write and merge-on-read, with Hudi's
``HoodieRestorePlan`` and ``HoodieRestoreMetadata`` on the timeline and its metadata table (record index and
column statistics too) built again to list exactly the restored files. Java Hudi reading and restoring ours is
tests/hudi_oracle/test_savepoint_oracle.py; kills and failures at each phase, tests/faults."""

from __future__ import annotations

import io
import os

import fastavro
import pyarrow as pa
import pytest
from hudi import HudiTableBuilder

from hoodie_datasource import HoodieTable, fault_points
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.errors import LockTimeoutError, SavepointError
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.metadata_table import ready_partitions
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.heartbeat import write_heartbeat
from hoodie_datasource.timeline.instant_time import new_instant_time
from hoodie_datasource.transaction.storage_lock import StorageLockProvider
from tests.metadata_checks import assert_metadata_table_true
from tests.unit.small_tables import batch
from tests.unit.small_tables import read_pairs as rows

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
        "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}
INDEXES = {"hoodie.metadata.record.index.enable": "true", "hoodie.metadata.index.column.stats.enable": "true",
           "hoodie.index.type": "RECORD_INDEX"}


def timeline_files(path: str) -> list[str]:
    return sorted(n for n in os.listdir(os.path.join(path, ".hoodie")) if n[0].isdigit())


def avro(path: str, name: str) -> dict:
    with open(os.path.join(path, ".hoodie", name), "rb") as f:
        [record] = fastavro.reader(io.BytesIO(f.read()))
    return record


def data_files(path: str) -> set[str]:
    return {os.path.join(p, n) for p in ("x", "y") if os.path.isdir(os.path.join(path, p))
            for n in os.listdir(os.path.join(path, p)) if not n.startswith(".hoodie_partition")}


def hudi_rs_pairs(path: str) -> list[tuple]:
    out = pa.Table.from_batches(HudiTableBuilder.from_base_uri(path).build().read())
    return sorted(zip(out.column("id").to_pylist(), out.column("v").to_pylist()))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"], ids=["cow", "mor"])
def test_a_restore_returns_the_table_to_its_savepoint(tmp_path, table_type):
    """After the savepoint: an upsert, a delete, an overwrite, a clean, and on merge-on-read a compaction done and
    one only planned, and a write that died (pending, no heartbeat). The restore rolls back each write, newest first,
    and leaves the rows, the files and the metadata table of the savepoint; the clean stays."""
    path = str(tmp_path / "t")
    opts = {**OPTS, "storage.type": table_type, **INDEXES}
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "y", 1)]), opts)
    if table_type == "MERGE_ON_READ":  # a slice older than the savepoint's, for the clean to remove
        write_local(path, batch([("a", 1, "x", 1)]), opts)
        HoodieTable(path).compact(**{"hoodie.compact.inline.max.delta.commits": "1"})
    kept = write_local(path, batch([("a", 2, "x", 2), ("c", 2, "y", 2)]), opts)
    HoodieTable(path).create_savepoint(kept)
    expected, files = rows(path), data_files(path)
    later = [write_local(path, batch([("a", 3, "x", 3), ("d", 3, "x", 3)]), opts)]
    if table_type == "MERGE_ON_READ":
        later += HoodieTable(path).compact(**{"hoodie.compact.inline.max.delta.commits": "1"})
    later.append(write_local(path, batch([("b", 4, "y", 4)]), {**opts, "operation": "delete"}))
    later.append(write_local(path, batch([("e", 5, "y", 5)]), {**opts, "operation": "insert_overwrite"}))
    clean = HoodieTable(path).clean(**{"hoodie.cleaner.commits.retained": "1"})
    files &= data_files(path)  # the older slices the clean removed stay removed
    later.append(write_local(path, batch([("a", 6, "x", 6)]), opts))
    if table_type == "MERGE_ON_READ":
        later.append(HoodieTable(path).schedule_compaction(**{"hoodie.compact.inline.max.delta.commits": "1"}))
    dead = new_instant_time(Table.load(path).timeline.last_instant_time())  # a write that died, inflight
    for name in (f"{dead}.commit.requested", f"{dead}.inflight"):
        open(os.path.join(path, ".hoodie", name), "wb").close()
    assert clean is not None and rows(path) != expected

    restore = HoodieTable(path).rollback_to_savepoint(kept, **INDEXES)

    assert rows(path) == expected and hudi_rs_pairs(path) == expected
    assert data_files(path) == files, "exactly the savepoint's files the clean left"
    names = timeline_files(path)
    assert [n for n in names if n.split(".")[0] > restore] == [], "the restore's rollbacks left the timeline"
    assert not [n for n in names if n.startswith(tuple(later)) or n.startswith(dead)]
    assert f"{clean}.clean" in names and f"{kept}.savepoint" in names
    plan = avro(path, f"{restore}.restore.requested")
    rolled_back = [i["commitTime"] for i in plan["instantsToRollback"]]
    assert rolled_back == sorted([*later, dead], reverse=True) and plan["savepointToRestoreTimestamp"] == kept
    assert plan["version"] == 2
    metadata = avro(path, f"{restore}.restore")
    assert metadata["startRestoreTime"] == restore and metadata["instantsToRollback"] == rolled_back
    assert sorted(metadata["hoodieRestoreMetadata"]) == sorted(rolled_back)
    assert all(m["commitsRollback"] == [t] for t, [m] in metadata["hoodieRestoreMetadata"].items())
    assert metadata["restoreInstantInfo"] == plan["instantsToRollback"]
    table = Table.load(path)
    assert set(ready_partitions(table.config)) == {"files", "column_stats", "record_index"}
    assert_metadata_table_true(path)

    write_local(path, batch([("a", 7, "x", 7), ("f", 7, "y", 7)]), opts)  # the record index knows "a" is in x
    assert rows(path) == sorted([*[r for r in expected if r[0] != "a"], ("a", 7), ("f", 7)])
    assert_metadata_table_true(path)


def test_a_restore_is_refused_before_anything_changes(tmp_path):
    path = str(tmp_path / "t")
    first = write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    second = write_local(path, batch([("a", 2, "x", 2)]), OPTS)
    table = HoodieTable(path)
    table.create_savepoint(first)
    table.create_savepoint(second)
    before = timeline_files(path)
    with pytest.raises(SavepointError, match=f"No savepoint 20200101000000000 in .*savepoints: {first}, {second}"):
        table.rollback_to_savepoint("20200101000000000")
    with pytest.raises(SavepointError, match=f"the later savepoints {second} would be rolled back"):
        table.rollback_to_savepoint(first)
    table.delete_savepoint(second)
    running = write_local(path, batch([("a", 3, "x", 3)]), OPTS)
    os.remove(os.path.join(path, ".hoodie", f"{running}.commit"))  # pending again, its writer beating
    write_heartbeat(table.storage, running)
    with pytest.raises(SavepointError, match=f"the writers of {running} are at work"):
        table.rollback_to_savepoint(first)
    assert timeline_files(path) == [n for n in before if n != f"{second}.savepoint" and n != f"{second}.savepoint.inflight"
                                    ] + [f"{running}.commit.requested", f"{running}.inflight"]
    assert os.path.isdir(os.path.join(path, ".hoodie", "metadata"))


def test_a_restore_that_died_midway_is_finished_by_the_next_restore_rollback_or_write(tmp_path, monkeypatch):
    path = str(tmp_path / "t")
    kept = write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    HoodieTable(path).create_savepoint(kept)
    later = [write_local(path, batch([("a", ts, "x", ts), (f"n{ts}", ts, "y", ts)]), OPTS) for ts in (2, 3, 4)]

    def die(point, **context):
        if context["rolled_back"] == later[-2]:
            raise RuntimeError("killed")

    for finish in ("restore", "rollback", "write"):
        monkeypatch.setattr(fault_points, "_hooks", lambda: {fault_points.MID_RESTORE: die})
        with pytest.raises(RuntimeError, match="killed"):
            HoodieTable(path).rollback_to_savepoint(kept)
        assert rows(path) == [("a", 2), ("n2", 2)], "the two newest are rolled back, the restore is pending"
        assert not os.path.isdir(os.path.join(path, ".hoodie", "metadata"))
        monkeypatch.setattr(fault_points, "_hooks", dict)
        if finish == "restore":
            restore = HoodieTable(path).rollback_to_savepoint(kept)
            assert f"{restore}.restore" in timeline_files(path)
        elif finish == "rollback":
            assert HoodieTable(path).rollback() == []  # no failed write to roll back, the restore finished
        else:
            write_local(path, batch([("w", 9, "y", 9)]), OPTS)  # finishes it under the lock, before its instant
        assert rows(path) == [("a", 1)] + ([("w", 9)] if finish == "write" else [])
        assert not [n for n in timeline_files(path) if "rollback" in n or n.startswith(tuple(later))]
        later = [write_local(path, batch([("a", ts, "x", ts), (f"n{ts}", ts, "y", ts)]), OPTS) for ts in (2, 3, 4)]
    assert_metadata_table_true(path)


def test_a_restore_waits_for_the_table_lock_and_refuses_while_another_writer_holds_it(tmp_path):
    """Under optimistic concurrency control a restore takes the table lock for its whole length: while another
    process holds it, the restore fails before changing anything; once it is released, the restore runs."""
    path = str(tmp_path / "t")
    occ = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control", "hoodie.write.lock.provider": "storage",
           "hoodie.write.lock.wait_time_ms": "100", "hoodie.write.lock.num_retries": "2",
           "hoodie.write.lock.wait_time_ms_between_retry": "50"}
    kept = write_local(path, batch([("a", 1, "x", 1)]), {**OPTS, **occ})
    HoodieTable(path).create_savepoint(kept, **occ)
    write_local(path, batch([("a", 2, "x", 2)]), {**OPTS, **occ})
    before = timeline_files(path)
    holder = StorageLockProvider(open_storage(path), 10.0, 1.0)
    assert holder.try_lock(0)
    try:
        with pytest.raises(LockTimeoutError, match=f"held by {holder.owner}"):
            HoodieTable(path).rollback_to_savepoint(kept, **occ)
        assert timeline_files(path) == before and rows(path) == [("a", 2)]
        assert ready_partitions(Table.load(path).config), "the metadata table is untouched"
    finally:
        holder.unlock()
    HoodieTable(path).rollback_to_savepoint(kept, **occ)
    assert rows(path) == [("a", 1)]
    assert_metadata_table_true(path)


def test_a_restore_builds_no_metadata_table_where_there_was_none(tmp_path):
    path = str(tmp_path / "t")
    off = {**OPTS, "hoodie.metadata.enable": "false"}
    kept = write_local(path, batch([("a", 1, "x", 1)]), off)
    HoodieTable(path).create_savepoint(kept)
    write_local(path, batch([("a", 2, "x", 2)]), off)
    HoodieTable(path).rollback_to_savepoint(kept)
    assert rows(path) == [("a", 1)] and hudi_rs_pairs(path) == [("a", 1)]
    assert not os.path.isdir(os.path.join(path, ".hoodie", "metadata"))
    assert_metadata_table_true(path, expect_ready=False)
