"""A writer killed with SIGKILL at its commit point leaves the table as it was, and the next write
cleans up after it, on local disk and on S3 alike.

The writer runs in its own process and stops just before creating its completed instant: its data
files, markers, partition metadata and inflight instant exist. Killed there, it never runs its own
rollback. Readers must not see its files (no completed instant names them); the next writer finds the
pending instant and rolls it back (``rollback_failed_writes``: a pending write belongs to a dead writer
once its heartbeat expired), deleting its data files and markers, before writing its own rows. The
same holds when that next writer dies midway through the rollback. A writer that is merely slow keeps
beating and is left alone.
"""

from __future__ import annotations

import multiprocessing
import signal
import time
from collections.abc import Callable

import pyarrow as pa
import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.table.markers import MARKER_SUFFIX, marker_dir
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.heartbeat import HEARTBEAT_FOLDER, is_heartbeat_expired
from hoodie_datasource.timeline.instant import ROLLBACK, Instant, State
from tests.storage import commit_workers
from tests.storage.tables import Place, committed_files, data_files, pairs, rows, snapshot

STOP_TIMEOUT_S = 120.0
TABLE_TYPES = ["COPY_ON_WRITE", "MERGE_ON_READ"]
# updates rows of both earlier commits and inserts one: new slices (COW) or log files (MOR) of their file groups
# a beat a second; taken for dead after 3 s without one (S3's LastModified has one-second precision)
HEARTBEAT = {"hoodie.client.heartbeat.interval_in_ms": "1000", "hoodie.client.heartbeat.tolerable.misses": "3"}
EXPIRY_MS = 3000
DEAD = pa.table({"id": ["first-0", "second-1", "dead-0"], "ts": [2, 2, 2], "p": ["x", "y", "x"], "v": ["dead"] * 3})


def kill_when_stopped(target: Callable[..., None], *args: object) -> None:
    """Run ``target(*args, stopped)`` in a spawned process, wait for it to set ``stopped``, SIGKILL it."""
    context = multiprocessing.get_context("spawn")
    stopped = context.Event()
    child = context.Process(target=target, args=(*args, stopped))
    child.start()
    try:
        assert stopped.wait(STOP_TIMEOUT_S), f"the child never reached its stopping point (exit code {child.exitcode})"
        child.kill()  # SIGKILL: no rollback, no finally, no atexit
        child.join(30)
    finally:
        if child.is_alive():
            child.kill()
            child.join()
    assert child.exitcode == -signal.SIGKILL


def wait_until_expired(place: Place, instant_time: str) -> None:
    """Until the heartbeat of the killed writer's instant is expired (it stopped beating when killed)."""
    deadline = time.monotonic() + 30
    while not is_heartbeat_expired(place.storage(), instant_time, EXPIRY_MS):
        assert time.monotonic() < deadline, f"the heartbeat of {instant_time} is still beating"
        time.sleep(0.25)


def two_commits(place: Place, table_type: str) -> list[tuple[str, str]]:
    """The table before the failed write: two commits; returns its rows."""
    options = place.write_options(**{"hoodie.datasource.write.table.type": table_type})
    write_local(place.uri, rows("first"), options)
    write_local(place.uri, rows("second", 4), options)
    before = snapshot(place)
    assert before == sorted(pairs(rows("first")) + pairs(rows("second", 4)))
    return before


def killed_at_commit_point(place: Place, before: list[tuple[str, str]]) -> tuple[Instant, set[str]]:
    """Kill a write of ``DEAD`` at its commit point; check what it left and that readers see none of it.
    Returns its pending instant and its data files."""
    storage = place.storage()
    committed_before = data_files(storage)
    kill_when_stopped(commit_workers.write_until_commit_point, place.uri, place.write_options(**HEARTBEAT), DEAD)

    timeline = Table.load(storage).timeline
    (pending,) = timeline.pending()
    assert pending.state is State.INFLIGHT
    dead_files = data_files(storage) - committed_before
    assert dead_files  # base files named with its instant (COW), log files of the file groups' slices (MOR)
    markers = [f.path for f in storage.list_tree(marker_dir(pending.timestamp))]
    marked = sorted(m.split(MARKER_SUFFIX)[0][len(marker_dir(pending.timestamp)) + 1:] for m in markers)
    assert marked == sorted(dead_files)
    assert snapshot(place) == before  # its files are on the store, but no completed instant names them
    assert not is_heartbeat_expired(storage, pending.timestamp, 60_000)  # its last beat, just before the kill
    wait_until_expired(place, pending.timestamp)
    return pending, dead_files


def assert_cleaned_up(place: Place, dead: Instant, dead_files: set[str], rollbacks: int = 1) -> None:
    """No trace of the dead write is left: no instant file, data file or marker; its rollback is completed."""
    storage = place.storage()
    timeline = Table.load(storage).timeline
    assert timeline.pending() == []
    assert [i for i in timeline.instants if i.timestamp == dead.timestamp] == []
    done = [i for i in timeline.instants if i.action == ROLLBACK]
    assert len(done) == rollbacks and all(i.is_completed and i.timestamp > dead.timestamp for i in done)
    present = data_files(storage)
    assert not (dead_files & present)  # listed again: every file of the dead write is deleted
    assert present == committed_files(storage)
    assert storage.list_tree(".hoodie/.temp") == []  # its markers, and those of every later write
    assert storage.list_tree(HEARTBEAT_FOLDER) == []  # its heartbeat, and those of every later write


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_writer_killed_at_its_commit_point(place: Place, table_type: str) -> None:
    before = two_commits(place, table_type)
    dead, dead_files = killed_at_commit_point(place, before)

    after = write_local(place.uri, rows("next", 2, ts=3), place.write_options(**HEARTBEAT))

    assert snapshot(place) == sorted(before + pairs(rows("next", 2)))
    assert_cleaned_up(place, dead, dead_files)
    storage = place.storage()
    (rollback,) = [i for i in Table.load(storage).timeline.instants if i.action == ROLLBACK]
    assert rollback.timestamp < after


def test_rollback_killed_midway_is_finished_by_the_next_write(place: Place) -> None:
    """The next writer dies too, while rolling the dead write back (its data files deleted, its markers
    and instant files not yet): the write after it finishes that rollback, then writes its rows."""
    before = two_commits(place, "COPY_ON_WRITE")
    dead, dead_files = killed_at_commit_point(place, before)
    kill_when_stopped(commit_workers.write_until_rollback_midway, place.uri, place.write_options(**HEARTBEAT),
                      rows("never", 2, ts=3))
    storage = place.storage()
    assert not (dead_files & data_files(storage))
    assert storage.list_tree(marker_dir(dead.timestamp)) != []
    assert snapshot(place) == before

    write_local(place.uri, rows("next", 2, ts=4), place.write_options(**HEARTBEAT))

    assert snapshot(place) == sorted(before + pairs(rows("next", 2)))
    assert_cleaned_up(place, dead, dead_files)


def test_a_live_writer_is_not_taken_for_a_dead_one(place: Place) -> None:
    """A writer waits at its commit point while a second writer runs a whole write, then completes.
    Whatever the outcome, every completed commit's files exist and its rows are readable: the second
    writer leaves the first's pending instant alone (its heartbeat beats), and the first, finding that
    the second completed an update of its file groups, fails with a conflict and rolls back only itself."""
    before = two_commits(place, "COPY_ON_WRITE")
    context = multiprocessing.get_context("spawn")
    at_commit_point, go, results = context.Event(), context.Event(), context.Queue()
    slow = context.Process(target=commit_workers.write_paused_at_commit_point,
                           args=(place.uri, place.write_options(**HEARTBEAT), DEAD, at_commit_point, go, results))
    slow.start()
    try:
        assert at_commit_point.wait(STOP_TIMEOUT_S), f"the writer never reached its commit point ({slow.exitcode})"
        time.sleep(EXPIRY_MS / 1000 + 1)  # longer than a heartbeat lasts: only its beats keep it alive
        after = write_local(place.uri, rows("next", 2, ts=3), place.write_options(**HEARTBEAT))
        go.set()
        outcome = results.get(timeout=STOP_TIMEOUT_S)
        slow.join(30)
    finally:
        if slow.is_alive():
            slow.kill()
            slow.join()
    storage = place.storage()
    assert outcome.startswith("HoodieWriteConflictError") and after in outcome, outcome
    assert "optimistic_concurrency_control" in outcome  # single_writer mode names the way to several writers
    assert committed_files(storage) == data_files(storage)  # the loser left no file behind
    timeline = Table.load(storage).timeline
    assert timeline.pending() == []
    (rollback,) = [i for i in timeline.instants if i.action == ROLLBACK]
    assert rollback.timestamp > after  # the slow writer rolled itself back; the second writer left it alone
    assert storage.list_tree(HEARTBEAT_FOLDER) == [] and storage.list_tree(".hoodie/.temp") == []
    assert snapshot(place) == sorted((dict(before) | dict(pairs(rows("next", 2)))).items())
