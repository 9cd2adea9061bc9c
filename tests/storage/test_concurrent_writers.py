"""Several writer processes on one table under optimistic concurrency control, on local disk and S3
(moto): the storage lock keeps one holder and survives a killed holder, instant times stay unique,
writes of disjoint partitions all commit, writes of the same keys end with one commit and one
``HoodieWriteConflictError`` that leaves nothing behind."""

from __future__ import annotations

import multiprocessing
import signal
import time

import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.heartbeat import HEARTBEAT_FOLDER
from hoodie_datasource.transaction.storage_lock import StorageLockProvider
from tests.server_process import join_or_kill
from tests.storage import occ_workers
from tests.storage.tables import Place, committed_files, data_files, pairs, rows, snapshot

TIMEOUT_S = 180.0
OCC = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control", "hoodie.write.lock.provider": "storage",
       "hoodie.write.lock.wait_time_ms": "20000", "hoodie.write.lock.wait_time_ms_between_retry": "100"}


def run_children(target, args_of: list[tuple]) -> list:
    """Run ``target(*args, barrier, results)`` for each ``args`` in its own spawned child."""
    return run_children_pair(*[(target, args) for args in args_of])


def run_children_pair(*targets: tuple) -> list:
    """Run each ``(target, args)`` as ``target(*args, barrier, results)`` in its own spawned child; return
    what each put on ``results``."""
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(len(targets)), context.Queue()
    children = [context.Process(target=target, args=(*args, barrier, results)) for target, args in targets]
    for child in children:
        child.start()
    try:
        return [results.get(timeout=TIMEOUT_S) for _ in children]
    finally:
        join_or_kill(children)


def test_two_processes_never_lose_an_increment(place: Place) -> None:
    storage = place.storage()
    storage.write(occ_workers.COUNTER, b"0")
    rounds = 12
    outcomes = run_children(occ_workers.increment_rounds, [(place.uri, place.options, rounds)] * 2)
    assert outcomes == ["done", "done"]
    assert int(storage.read(occ_workers.COUNTER)) == 2 * rounds


def test_a_killed_holder_loses_the_lock_when_its_lease_expires(place: Place) -> None:
    context = multiprocessing.get_context("spawn")
    holding = context.Event()
    holder = context.Process(target=occ_workers.hold_lock_until_killed, args=(place.uri, place.options, 3.0, holding))
    holder.start()
    try:
        assert holding.wait(TIMEOUT_S), f"the holder never took the lock ({holder.exitcode})"
        taker = StorageLockProvider(place.storage(), validity_s=3.0, renew_interval_s=1.0)
        assert not taker.try_lock(2.0)  # renewed by the live holder
        holder.kill()
        holder.join(30)
        assert holder.exitcode == -signal.SIGKILL
        killed = time.monotonic()
        assert taker.try_lock(15.0)
        waited = time.monotonic() - killed
        assert waited < 10.0, waited  # about the 3 s lease: not the 300 s default, nor never
        taker.unlock()
    finally:
        if holder.is_alive():
            holder.kill()
            holder.join()


def test_disjoint_partitions_all_commit_with_unique_instant_times(place: Place) -> None:
    options = place.write_options(**OCC)
    write_local(place.uri, rows("seed"), options)
    rounds = 3
    batches = {tag: [rows(f"{tag}{r}").set_column(2, "p", [[f"{tag}"] * 3]) for r in range(rounds)]
               for tag in ("a", "b")}
    outcomes = dict(run_children(occ_workers.write_batches, [(place.uri, options, batches[t], t) for t in ("a", "b")]))
    instants = [instant for outcome in outcomes.values() for state, instant in outcome if state == "committed"]
    assert len(instants) == 2 * rounds, outcomes
    assert len(set(instants)) == len(instants)
    expected = pairs(rows("seed")) + [p for t in batches.values() for b in t for p in pairs(b)]
    assert snapshot(place) == sorted(expected)
    storage = place.storage()
    assert committed_files(storage) == data_files(storage)
    assert storage.list_tree(HEARTBEAT_FOLDER) == []


def test_writes_of_the_same_keys_one_commits_the_other_conflicts(place: Place) -> None:
    options = place.write_options(**OCC)
    write_local(place.uri, rows("key"), options)
    same_keys = {tag: rows("key", ts=2).set_column(3, "v", [[f"{tag}:{i}" for i in range(3)]]) for tag in ("a", "b")}
    # both writes have written their files before either commits (a fault hook meets the other child)
    outcomes = dict(run_children(occ_workers.write_overlapping, [(place.uri, options, same_keys[t], t) for t in ("a", "b")]))
    assert sorted(state for state, _ in outcomes.values()) == ["committed", "conflict"], outcomes
    (winner,) = [tag for tag, (state, _) in outcomes.items() if state == "committed"]
    (loser,) = {"a", "b"} - {winner}
    assert f"conflicts with commit {outcomes[winner][1]}" in outcomes[loser][1]
    assert snapshot(place) == pairs(same_keys[winner])
    storage = place.storage()
    timeline = Table.load(storage).timeline
    assert timeline.pending() == []
    assert committed_files(storage) == data_files(storage)  # the loser's files are gone
    assert storage.list_tree(".hoodie/.temp") == [] and storage.list_tree(HEARTBEAT_FOLDER) == []


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ"])
def test_occ_writes_in_one_process_keep_every_row(place: Place, table_type: str) -> None:
    """The sequential case stays as it was: each OCC write takes and releases the lock."""
    options = place.write_options(**OCC, **{"hoodie.datasource.write.table.type": table_type})
    write_local(place.uri, rows("one"), options)
    write_local(place.uri, rows("two"), options)
    assert snapshot(place) == sorted(pairs(rows("one")) + pairs(rows("two")))


def test_compaction_in_another_process_beside_a_writer(place: Place) -> None:
    """A writer upserts the same keys round after round (log files) while another process compacts the
    table each round. Every round's write either commits or fails with a conflict (a compaction of its
    file groups completed first); the table then holds the last committed round's values, and no file
    outside the completed commits."""
    options = place.write_options(**OCC, **{"hoodie.datasource.write.table.type": "MERGE_ON_READ"})
    write_local(place.uri, rows("k"), options)
    rounds = 6
    batches = [rows("k", ts=r + 2).set_column(3, "v", [[f"r{r}:{i}" for i in range(3)]]) for r in range(rounds)]
    outcomes = dict(run_children_pair(
        (occ_workers.write_batches, (place.uri, options, batches, "writer")),
        (occ_workers.compact_rounds, (place.uri, options, rounds, "compactor")),
    ))
    committed = [r for r, (state, _) in enumerate(outcomes["writer"]) if state == "committed"]
    assert committed, outcomes
    assert all(state in ("committed", "conflict") for state, _ in outcomes["writer"])
    compactions = [c for done in outcomes["compactor"] for c in done]
    assert compactions, outcomes  # the compactor found gaps between the writes
    storage = place.storage()
    timeline = Table.load(storage).timeline
    assert [i for i in timeline.pending()] == []
    assert {c for c in compactions} <= {i.timestamp for i in timeline.instants if i.is_completed}
    assert snapshot(place) == pairs(batches[committed[-1]])
    assert committed_files(storage) == data_files(storage)
