"""Two processes racing for one commit on an object store get exactly one winner.

The commit point of a write is the creation of its completed instant file (``Storage.create_once``:
an ``If-None-Match: *`` put on S3). Here two OS processes, each with its own view of the table, are
released together by a ``multiprocessing.Barrier``: first straight at ``transition_to_completed`` of
the same inflight instants, many rounds; then as two whole writers whose clocks give them the same
instant time. Exactly one wins every round, the other fails with CommitConflictError, and the table
holds the winner's bytes and rows only. Each test runs on local disk and on S3 (moto's server).
"""

from __future__ import annotations

import json
import multiprocessing
import queue
from collections.abc import Callable

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.table.markers import marker_dir
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.instant import COMMIT, State
from hoodie_datasource.timeline.instant_time import new_instant_time
from hoodie_datasource.timeline.transitions import create_requested, transition_to_inflight
from tests.storage import commit_workers
from tests.storage.tables import Place, committed_files, data_files, pairs, rows, snapshot

COMPLETE_ROUNDS = 30
WRITE_ROUNDS = 6
CHILD_TIMEOUT_S = 300.0


def run_children(target: Callable[..., None], per_child: list[tuple], timeout_s: float = CHILD_TIMEOUT_S) -> dict:
    """Run ``target(*args, barrier, results)`` in one spawned process per ``args``; return {tag: outcome}."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(len(per_child))
    results = context.Queue()
    children = [context.Process(target=target, args=(*args, barrier, results)) for args in per_child]
    for child in children:
        child.start()
    try:
        found = {}
        for _ in children:
            try:
                tag, outcome = results.get(timeout=timeout_s)
            except queue.Empty:
                raise AssertionError(f"a child gave no result; exit codes {[c.exitcode for c in children]}") from None
            found[tag] = outcome
        for child in children:
            child.join(30)
            assert child.exitcode == 0, f"{child.name} exited with {child.exitcode}"
        return found
    finally:
        for child in children:
            if child.is_alive():
                child.kill()
                child.join()


def test_two_processes_completing_the_same_instants(place: Place) -> None:
    """Each round both processes, with timelines loaded before any round, complete the same inflight
    commit at once: one wins, the other gets CommitConflictError, the completed file is the winner's."""
    write_local(place.uri, rows("base"), place.write_options())
    storage = place.storage()
    table = Table.load(storage)
    instants = []
    for _ in range(COMPLETE_ROUNDS):
        instant_time = new_instant_time(instants[-1] if instants else table.timeline.last_instant_time())
        transition_to_inflight(table, create_requested(table, instant_time, COMMIT))
        instants.append(instant_time)

    found = run_children(commit_workers.complete_rounds,
                         [(place.uri, place.options, instants, tag) for tag in ("A", "B")])

    a, b = found["A"], found["B"]
    assert [o for o in a + b if o not in ("won", "lost")] == []
    for i, instant_time in enumerate(instants):
        assert sorted((a[i], b[i])) == ["lost", "won"], f"round {i}: A {a[i]}, B {b[i]}"
        winner = "A" if a[i] == "won" else "B"
        completed = json.loads(storage.read(f".hoodie/{instant_time}.commit"))
        assert completed == {"writer": winner, "instant": instant_time}
    timeline = Table.load(storage).timeline
    assert [i.timestamp for i in timeline.completed()][1:] == instants
    assert [i for i in timeline.instants if i.timestamp in instants and i.state is not State.COMPLETED] == []


def test_two_writers_on_one_instant_time(place: Place) -> None:
    """Two whole writers (local engine) pick the same instant time and claim it at the same moment, many
    rounds: exactly one commits each round, the other raises CommitConflictError, and the table holds
    exactly the rows of the rounds' winners; no data file outside a completed commit is left behind,
    no instant is pending and no marker is left."""
    write_local(place.uri, rows("base"), place.write_options())
    storage = place.storage()
    last = Table.load(storage).timeline.last_instant_time()
    times = []
    for _ in range(WRITE_ROUNDS):
        times.append(new_instant_time(times[-1] if times else last))
    per_child = [(place.uri, place.write_options(), [(t, rows(f"{tag}{r}")) for r, t in enumerate(times)], tag)
                 for tag in ("A", "B")]

    found = run_children(commit_workers.write_rounds, per_child)

    a, b = found["A"], found["B"]
    expected = pairs(rows("base"))
    for r, (ours, theirs) in enumerate(zip(a, b)):
        assert sorted(o == "committed" for o in (ours, theirs)) == [False, True], f"round {r}: A {ours}, B {theirs}"
        loss = theirs if ours == "committed" else ours
        assert loss.startswith("CommitConflictError"), f"round {r}: {loss}"
        expected += pairs(rows(f"{'A' if ours == 'committed' else 'B'}{r}"))
    assert snapshot(place) == sorted(expected)
    timeline = Table.load(storage).timeline
    assert [i.timestamp for i in timeline.completed()][1:] == times
    assert timeline.pending() == []
    assert data_files(storage) == committed_files(storage)
    assert [storage.list_tree(marker_dir(t)) for t in times] == [[] for _ in times]


def test_markers_are_gone_after_a_commit(place: Place) -> None:
    """Markers are objects on S3: after a commit the instant's marker prefix lists nothing."""
    first = write_local(place.uri, rows("one"), place.write_options())
    second = write_local(place.uri, rows("two", 4), place.write_options())
    storage = place.storage()
    assert storage.list_tree(marker_dir(first)) == [] and storage.list_tree(marker_dir(second)) == []
    assert storage.list_tree(".hoodie/.temp") == []
    assert snapshot(place) == sorted(pairs(rows("one")) + pairs(rows("two", 4)))
