"""Merge-on-read writes and the table services with the local engine (no JVM): log appends,
snapshot vs read-optimized, compaction (also while writes continue), cleaning, archival, rollback."""

from __future__ import annotations

import os

import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.errors import CommitConflictError
from hoodie_datasource.timeline.heartbeat import Heartbeat, last_heartbeat_ms
from hoodie_datasource.timeline.instant import State
from tests.unit.small_tables import batch
from tests.unit.small_tables import read_pairs as rows

MOR = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
       "storage.type": "MERGE_ON_READ", "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}


def log_files(path, partition="x"):
    return sorted(n for n in os.listdir(os.path.join(path, partition)) if ".log." in n)


@pytest.fixture
def mor(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "x", 2), ("c", 1, "y", 3)]), MOR)
    return path


@pytest.mark.parametrize("block_format", ["parquet", "avro"])
def test_updates_and_deletes_go_to_logs(mor, block_format):
    t2 = write_local(mor, batch([("a", 2, "x", 10)]), {**MOR, "hoodie.logfile.data.block.format": block_format})
    write_local(mor, batch([("b", 2, "x", 0)]), {**MOR, "operation": "delete"})
    write_local(mor, batch([("d", 2, "x", 4)]), MOR)
    assert len(log_files(mor)) == 2
    assert rows(mor) == [("a", 10), ("c", 3), ("d", 4)]
    assert rows(mor, query_type="read_optimized") == [("a", 1), ("b", 2), ("c", 3), ("d", 4)]
    assert rows(mor, as_of_instant=t2) == [("a", 10), ("b", 2), ("c", 3)]
    assert rows(mor, query_type="incremental", begin_instant=t2) == [("d", 4)]
    actions = [i.action for i in HoodieTable(mor).instants()]
    assert actions == ["deltacommit"] * 4


def test_a_log_record_replaces_the_base_record_whatever_its_ordering_value(mor):
    # OverwriteWithLatestAvroPayload combines as a copy-on-write upsert does: the later write wins
    write_local(mor, batch([("a", 0, "x", 99)]), MOR)  # an older event than the base record's (ts=1)
    write_local(mor, batch([("b", 1, "x", 20)]), MOR)  # same ts
    assert rows(mor) == [("a", 99), ("b", 20), ("c", 3)]


def test_compaction_folds_logs_into_base_files(mor):
    write_local(mor, batch([("a", 2, "x", 10), ("c", 2, "y", 30)]), MOR)
    before = rows(mor)
    done = HoodieTable(mor).compact()
    assert len(done) == 1
    meta = HoodieTable(mor).commit_metadata(done[0])
    assert meta["compacted"] is True and meta["operationType"] == "COMPACT"
    assert rows(mor) == before == rows(mor, query_type="read_optimized")
    assert os.path.exists(os.path.join(mor, ".hoodie", f"{done[0]}.compaction.requested"))
    assert os.path.exists(os.path.join(mor, ".hoodie", f"{done[0]}.commit"))
    write_local(mor, batch([("a", 3, "x", 100)]), MOR)
    assert rows(mor) == [("a", 100), ("b", 2), ("c", 30)]


def test_writes_during_a_pending_compaction_are_kept(mor):
    write_local(mor, batch([("a", 2, "x", 10)]), MOR)
    table = HoodieTable(mor)
    instant = table.schedule_compaction()
    write_local(mor, batch([("b", 3, "x", 20)]), MOR)  # lands in the slice the compaction starts
    assert rows(mor) == [("a", 10), ("b", 20), ("c", 3)]
    table.run_compaction(instant)
    assert rows(mor) == [("a", 10), ("b", 20), ("c", 3)]
    assert rows(mor, query_type="read_optimized") == [("a", 10), ("b", 2), ("c", 3)]


def _compaction_midway(mor: str) -> tuple[HoodieTable, str, str]:
    """A compaction scheduled and started (inflight) that wrote one (empty) file: the table, the
    compaction's instant and the file's path."""
    write_local(mor, batch([("a", 2, "x", 10)]), MOR)
    table = HoodieTable(mor)
    instant = table.schedule_compaction()
    timeline = table.timeline()
    table.storage.write(timeline.path_of(timeline.find(instant).with_state(State.INFLIGHT)), b"")
    written = os.path.join(mor, "x", f"deadbeef-0_1-0-1_{instant}.parquet")
    open(written, "wb").close()
    return table, instant, written


def test_compaction_that_died_midway_is_resumed(mor):
    table, instant, stray = _compaction_midway(mor)  # and died
    assert rows(mor) == [("a", 10), ("b", 2), ("c", 3)]  # still readable
    assert table.compact() == [instant]
    assert not os.path.exists(stray)
    assert rows(mor) == [("a", 10), ("b", 2), ("c", 3)]


def test_a_compaction_another_process_is_running_is_left_alone_until_its_heartbeat_expires(mor):
    table, instant, partial = _compaction_midway(mor)
    storage = table.storage
    running = Heartbeat(storage, instant, 1000).start()  # its compactor is alive
    try:
        assert table.compact() == []  # neither restarted nor scheduled again
        with pytest.raises(CommitConflictError, match="being run by another process"):
            table.run_compaction(instant)
        assert os.path.exists(partial), "the running compaction's file was deleted"
        assert not table.timeline().find(instant).is_completed
    finally:
        running.stop(delete=False)  # it died: its heartbeat stops
    beat = os.path.join(mor, ".hoodie", ".heartbeat", instant)
    aged = last_heartbeat_ms(storage, instant) / 1000 - 600
    os.utime(beat, (aged, aged))  # ten minutes ago: expired (Hudi's default expiry is two minutes)
    assert table.compact() == [instant]
    assert not os.path.exists(partial)
    assert not os.path.exists(beat)
    assert rows(mor) == [("a", 10), ("b", 2), ("c", 3)]


def test_inline_compaction_after_n_delta_commits(mor):
    opts = {**MOR, "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "3"}
    write_local(mor, batch([("a", 2, "x", 10)]), opts)
    assert not any(HoodieTable(mor).timeline().is_compaction(i) for i in HoodieTable(mor).instants())
    write_local(mor, batch([("a", 3, "x", 11)]), opts)
    assert any(HoodieTable(mor).timeline().is_compaction(i) for i in HoodieTable(mor).instants())
    assert rows(mor, query_type="read_optimized") == [("a", 11), ("b", 2), ("c", 3)]


def test_rollback_of_a_delta_commit_removes_its_log(mor):
    t2 = write_local(mor, batch([("a", 2, "x", 10)]), MOR)
    assert log_files(mor)
    HoodieTable(mor).rollback(t2)
    assert log_files(mor) == []
    assert rows(mor) == [("a", 1), ("b", 2), ("c", 3)]


def test_cleaning_keeps_the_retained_window(tmp_path):
    path = str(tmp_path / "cow")
    opts = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "hoodie.clean.automatic": "false",
            "hoodie.archive.automatic": "false"}
    instants = [write_local(path, batch([("a", i, "x", i)]), opts) for i in range(5)]
    assert len([n for n in os.listdir(os.path.join(path, "x")) if n.endswith(".parquet")]) == 5
    assert HoodieTable(path).clean(**{"hoodie.cleaner.commits.retained": "2"}) is not None
    assert len([n for n in os.listdir(os.path.join(path, "x")) if n.endswith(".parquet")]) == 3
    assert rows(path, as_of_instant=instants[3]) == [("a", 3)]  # inside the window: still readable
    assert rows(path) == [("a", 4)]
    assert HoodieTable(path).clean(**{"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                      "hoodie.cleaner.fileversions.retained": "1"}) is not None
    assert [n for n in os.listdir(os.path.join(path, "x")) if n.endswith(".parquet")] == [
        n for n in os.listdir(os.path.join(path, "x")) if n.endswith(f"{instants[4]}.parquet")]
    assert any(i.action == "clean" for i in HoodieTable(path).instants())


def test_automatic_cleaning_and_archival(tmp_path):
    path = str(tmp_path / "cow")
    opts = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p",
            "hoodie.cleaner.commits.retained": "2", "hoodie.keep.min.commits": "3", "hoodie.keep.max.commits": "4"}
    instants = [write_local(path, batch([("a", i, "x", i)]), opts) for i in range(7)]
    active = [n for n in os.listdir(os.path.join(path, ".hoodie")) if n.endswith(".commit")]
    archived = HoodieTable(path).timeline().archived & set(instants)
    assert 0 < len(archived) and len(active) <= 4 and len(active) + len(archived) == 7
    # Hudi's archive log, one version per archival run (timeline.archive_log)
    assert all(n.startswith(".commits_.archive.") for n in os.listdir(os.path.join(path, ".hoodie", "archived")))
    assert HoodieTable(path).completed_commits() == instants  # archived instants are still ours to read
    assert rows(path) == [("a", 6)]
    assert len([n for n in os.listdir(os.path.join(path, "x")) if n.endswith(".parquet")]) <= 3


def test_a_replacecommit_stays_active_until_a_clean_removed_what_it_replaced(tmp_path):
    """Archival keeps a replacecommit on the active timeline while the file groups it replaced exist: a
    reader (hudi-rs too) learns from it which groups to skip, and archived early those rows would be read
    twice. Once a clean removed them (under either policy), it is archived like any other instant."""
    from hudi import HudiTableBuilder

    path = str(tmp_path / "cow")
    opts = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "hoodie.clean.automatic": "false",
            "hoodie.archive.automatic": "false", "hoodie.metadata.compact.max.delta.commits": "1"}
    services = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1"}
    write_local(path, batch([("a", 1, "x", 1)]), opts)
    replace = write_local(path, batch([("a", 2, "x", 2)]), {**opts, "operation": "insert_overwrite"})
    for i in range(3, 7):
        write_local(path, batch([("b", i, "y", i)]), opts)
    HoodieTable(path).archive(**services)
    assert replace in [i.timestamp for i in HoodieTable(path).timeline().instants if i.timestamp not in
                       HoodieTable(path).timeline().archived]
    hudi_rs = pa_rows(HudiTableBuilder.from_base_uri(path).build().read())
    assert hudi_rs == rows(path) == [("a", 2), ("b", 6)]
    HoodieTable(path).clean(**{"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                               "hoodie.cleaner.fileversions.retained": "1"})
    assert HoodieTable(path).timeline().replaced_file_ids() and len(os.listdir(os.path.join(path, "x"))) == 2
    HoodieTable(path).clean(**services)
    HoodieTable(path).archive(**services)
    assert replace in HoodieTable(path).timeline().archived
    assert pa_rows(HudiTableBuilder.from_base_uri(path).build().read()) == rows(path) == [("a", 2), ("b", 6)]


def pa_rows(batches) -> list[tuple]:
    import pyarrow as pa

    data = pa.Table.from_batches(batches)
    return sorted(zip(data.column("id").to_pylist(), data.column("v").to_pylist()))


def test_compaction_is_not_scheduled_while_a_write_is_in_flight(mor):
    from hoodie_datasource.client.write_client import start_write

    write_local(mor, batch([("a", 2, "x", 10)]), MOR)
    session = start_write(HoodieTable(mor).storage, MOR, batch([("a", 3, "x", 11)]).schema)
    assert HoodieTable(mor).schedule_compaction() is None
    session.abort()
    assert HoodieTable(mor).schedule_compaction() is not None


def test_a_truncated_log_block_is_skipped_and_the_rest_stays_readable(mor, caplog):
    write_local(mor, batch([("a", 2, "x", 10)]), MOR)
    log = os.path.join(mor, "x", log_files(mor)[0])
    with open(log, "rb") as handle:
        good = handle.read()
    with open(log, "ab") as handle:
        handle.write(good[: len(good) // 2])  # a writer died mid-append
    with caplog.at_level("WARNING"):
        assert rows(mor) == [("a", 10), ("b", 2), ("c", 3)]
    assert "Corrupt log block" in caplog.text


def _compact_until_told(path: str, signals: str) -> int:
    """Try to compact until one compaction completed (or the writer leaves ``stop`` in ``signals``),
    then leave ``compacted`` there: the writer waits for it before its second half of writes.

    It stops after the first compaction: compacting on while the writer writes exposes two races this
    test is not about (see the issue-16 report: instant times two processes pick in the same
    millisecond, and a plan withdrawn after a writer read it)."""
    done = 0
    while not done and not os.path.exists(os.path.join(signals, "stop")):
        done += len(HoodieTable(path).compact())
    open(os.path.join(signals, "compacted"), "w").close()
    return done


def _wait_for(path: str, compactor) -> None:
    """Until ``path`` exists; the compactor dying fails the test (a hang guard, not a timing check)."""
    import time

    while not os.path.exists(path):
        if compactor.done():
            compactor.result()  # raises what the compactor raised
            raise AssertionError(f"the compactor stopped before {path} appeared")
        time.sleep(0.05)


def test_compaction_from_another_process_while_writes_continue(mor, tmp_path):
    """A compactor in another process compacts while writes land: half of 12 writes before its
    compaction completed, half after (an event, not a time, decides), and every row survives."""
    import concurrent.futures
    import multiprocessing

    expected = {"a": 1, "b": 2, "c": 3}
    signals = str(tmp_path / "signals")
    os.makedirs(signals)
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        compactor = pool.submit(_compact_until_told, mor, signals)
        try:
            for i in range(12):
                if i == 6:
                    _wait_for(os.path.join(signals, "compacted"), compactor)
                key = "ab"[i % 2]
                write_local(mor, batch([(key, 10 + i, "x", 100 + i), (f"n{i}", 1, "y", i)]), MOR)
                expected[key] = 100 + i
                expected[f"n{i}"] = i
        finally:  # the compactor stops whatever happened here
            open(os.path.join(signals, "stop"), "w").close()
        compactions = compactor.result()
    assert compactions >= 1
    assert rows(mor) == sorted(expected.items())
    HoodieTable(mor).compact()
    assert rows(mor) == sorted(expected.items()) == rows(mor, query_type="read_optimized")


def test_a_write_that_picked_its_time_before_a_plan_was_scheduled_starts_again_after_it(mor, monkeypatch, caplog):
    """The race the test above can lose: a compactor in another process schedules between the writer's choice of
    instant time and its requested file, so neither listing showed the other; the write withdraws its instant."""
    from hoodie_datasource.client import write_client

    caplog.set_level("INFO", logger=write_client.__name__)
    write_local(mor, batch([("a", 2, "x", 10)]), MOR)  # a log to compact
    create, planned = write_client.create_requested, []

    def schedule_first(table, instant_time, action, *args):
        if not planned:
            planned.append(HoodieTable(mor).schedule_compaction())
        return create(table, instant_time, action, *args)

    monkeypatch.setattr(write_client, "create_requested", schedule_first)
    written = write_local(mor, batch([("b", 3, "x", 20)]), MOR)
    assert planned[0] is not None and written > planned[0] and "scheduled meanwhile" in caplog.text
    timeline = HoodieTable(mor).timeline()
    assert [i.timestamp for i in timeline.instants if i.timestamp > planned[0]] == [written]  # no withdrawn trace
    assert rows(mor) == [("a", 10), ("b", 20), ("c", 3)]
    HoodieTable(mor).compact()
    assert rows(mor) == [("a", 10), ("b", 20), ("c", 3)] == rows(mor, query_type="read_optimized")


def test_rollbacks_are_recorded_on_the_timeline_and_finished_if_they_died(mor):
    t2 = write_local(mor, batch([("a", 2, "x", 10)]), MOR)
    rollback_time = HoodieTable(mor).rollback(t2)[0]
    timeline = HoodieTable(mor).timeline()
    rollbacks = [i for i in timeline.instants if i.action == "rollback"]
    assert [r.state for r in rollbacks] == [State.COMPLETED]
    metadata = timeline.read_metadata(rollbacks[0])
    assert metadata["commitsRollback"] == [t2] and metadata["totalFilesDeleted"] == 1
    assert rollback_time == t2

    # a rollback that died after its plan: the next writer finishes it
    from hoodie_datasource.timeline.avro_metadata import ROLLBACK_PLAN, encode
    from hoodie_datasource.timeline.transitions import create_requested
    from hoodie_datasource.write.rollback import instant_data_files

    t3 = write_local(mor, batch([("b", 3, "x", 20)]), MOR)
    table = HoodieTable(mor).table
    files = instant_data_files(table, table.timeline.find(t3), [s["path"] for s in
                                                           HoodieTable(mor).commit_metadata(t3)
                                                           ["partitionToWriteStats"]["x"]])
    plan = {"instantToRollback": {"commitTime": t3, "action": "deltacommit"},
            "RollbackRequests": [{"partitionPath": "x", "fileId": None, "latestBaseInstant": None,
                                  "filesToBeDeleted": [f.split("/")[-1] for f in files],
                                  "logBlocksToBeDeleted": None}], "version": 1}
    create_requested(table, str(int(t3) + 1), "rollback", encode(ROLLBACK_PLAN, plan))
    write_local(mor, batch([("c", 4, "y", 30)]), MOR)
    assert rows(mor) == [("a", 1), ("b", 2), ("c", 30)]
    assert not HoodieTable(mor).timeline().pending()
    # its metadata says what the plan deleted, as Hudi's BaseRollbackHelper records a rollback run again
    timeline = HoodieTable(mor).timeline()
    finished = timeline.read_metadata(timeline.find(str(int(t3) + 1)))
    assert finished["commitsRollback"] == [t3] and finished["totalFilesDeleted"] == len(files) > 0
    assert sorted(finished["partitionMetadata"]["x"]["successDeleteFiles"]) == sorted(
        f.split("/")[-1] for f in files)
