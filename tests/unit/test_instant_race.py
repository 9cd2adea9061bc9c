"""Two OS processes run the same scheduled compaction and collide at its commit point: exactly one
completes the instant, the other fails with CommitConflictError, the completed instant is never
overwritten, and the table reads exactly (both views, and hudi-rs) with every file the commit names.

The processes meet at two points through files in a signal folder: the first run waits just before
completing the instant; the second run starts then (so it finds the compaction inflight, as a second
run of a scheduled compaction would) and waits at the same point; both are then let go together.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import time

import pyarrow as pa

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from tests.conftest import require_module
from tests.unit.small_tables import batch
from tests.unit.small_tables import read_pairs as read

MOR = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
       "storage.type": "MERGE_ON_READ"}


def _wait_for(path: str, deadline_s: float = 120.0) -> None:
    """Until ``path`` exists (the deadline only guards against a hang; it asserts nothing about speed)."""
    stop = time.monotonic() + deadline_s
    while not os.path.exists(path):
        if time.monotonic() > stop:
            raise TimeoutError(f"{path} never appeared")
        time.sleep(0.02)


def _touch(path: str) -> None:
    open(path, "w").close()


def run_compaction(path: str, instant: str, signals: str, name: str, stale: bool = False) -> str:
    """One run of compaction ``instant`` in its own process; it says ``<name>.ready`` at the commit
    point and completes only when ``go`` appears. ``stale``: the run lists the timeline, says
    ``<name>.loaded`` and goes on only at ``first.done`` (it acts on a timeline read before the other
    run completed). Returns "completed" or the error's class and message."""
    from hoodie_datasource import hoodie_table
    from hoodie_datasource.services import compaction

    complete = compaction.transition_to_completed
    if stale:
        load = hoodie_table.HoodieTable.refresh

        def load_then_wait(self):
            loaded = load(self)
            _touch(os.path.join(signals, f"{name}.loaded"))
            _wait_for(os.path.join(signals, "first.done"))
            return loaded

        hoodie_table.HoodieTable.refresh = load_then_wait

    def complete_together(table, inflight, content):
        _touch(os.path.join(signals, f"{name}.ready"))
        _wait_for(os.path.join(signals, "go"))
        return complete(table, inflight, content)

    compaction.transition_to_completed = complete_together
    try:
        HoodieTable(path).run_compaction(instant)
        return "completed"
    except Exception as exc:  # the outcome is what the test checks
        _touch(os.path.join(signals, f"{name}.ready"))  # never leave the other run waiting
        return f"{type(exc).__name__}: {exc}"


EXPECTED = [("a", 10), ("b", 20), ("c", 30)]


def _scheduled(tmp_path) -> tuple[str, str, str]:
    """A MOR table with log files in both partitions and a scheduled compaction; its signal folder."""
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "x", 2), ("c", 1, "y", 3)]), MOR)
    write_local(path, batch([("a", 2, "x", 10), ("c", 2, "y", 30)]), MOR)
    write_local(path, batch([("b", 3, "x", 20)]), MOR)
    assert read(path) == EXPECTED
    instant = HoodieTable(path).schedule_compaction()
    assert instant is not None
    signals = str(tmp_path / "signals")
    os.makedirs(signals)
    return path, instant, signals


def _compacted_files(path: str, instant: str) -> dict[str, int]:
    """The files the completed compaction names, with their inodes (a rewrite changes the inode)."""
    metadata = HoodieTable(path).commit_metadata(instant)
    named = [s["path"] for stats in metadata["partitionToWriteStats"].values() for s in stats]
    assert named and all(os.path.exists(os.path.join(path, p)) for p in named), named
    return {p: os.stat(os.path.join(path, p)).st_ino for p in named}


def _assert_compacted_exactly(path: str, instant: str) -> None:
    table = HoodieTable(path)
    completed = [i for i in table.instants() if i.timestamp == instant]
    assert [(i.action, i.state.name) for i in completed] == [("commit", "COMPLETED")]
    named = _compacted_files(path, instant)
    assert read(path) == EXPECTED
    assert read(path, query_type="read_optimized") == EXPECTED  # the compacted base files hold every row
    hudi = require_module("hudi")
    rs = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(path).build().read())
    assert sorted(zip(rs.column("id").to_pylist(), rs.column("v").to_pylist())) == EXPECTED
    # one base file per compacted file group: nothing duplicated
    bases = [n for d in ("x", "y") for n in os.listdir(os.path.join(path, d)) if n.endswith(f"_{instant}.parquet")]
    assert len(bases) == len(named)


def test_two_processes_completing_one_compaction(tmp_path):
    path, instant, signals = _scheduled(tmp_path)
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as pool:
        first = pool.submit(run_compaction, path, instant, signals, "first")
        _wait_for(os.path.join(signals, "first.ready"))  # inflight, at its commit point
        second = pool.submit(run_compaction, path, instant, signals, "second")
        _wait_for(os.path.join(signals, "second.ready"))
        _touch(os.path.join(signals, "go"))
        outcomes = [first.result(), second.result()]

    assert sorted(o.split(":", 1)[0] for o in outcomes) == ["CommitConflictError", "completed"], outcomes
    _assert_compacted_exactly(path, instant)


def test_a_run_acting_on_a_stale_timeline_leaves_the_completed_compaction_alone(tmp_path):
    """The second run reads the timeline while the first is inflight (so the compaction looks like one
    that died midway, whose files a restart deletes), and acts only after the first completed: it must
    fail without deleting or rewriting a file of the completed instant."""
    path, instant, signals = _scheduled(tmp_path)
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as pool:
        first = pool.submit(run_compaction, path, instant, signals, "first")
        _wait_for(os.path.join(signals, "first.ready"))  # inflight, at its commit point
        second = pool.submit(run_compaction, path, instant, signals, "second", True)
        _wait_for(os.path.join(signals, "second.loaded"))  # it saw the compaction inflight
        _touch(os.path.join(signals, "go"))
        assert first.result() == "completed"
        files = _compacted_files(path, instant)
        _touch(os.path.join(signals, "first.done"))
        outcome = second.result()
    assert outcome.split(":", 1)[0] in ("CommitConflictError", "TimelineError"), outcome
    assert instant in outcome  # the error names the instant another run completed
    assert _compacted_files(path, instant) == files  # not deleted, not rewritten
    _assert_compacted_exactly(path, instant)
