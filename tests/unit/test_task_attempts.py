"""A write task attempt's last step (``write.task_attempt``) and the driver's second reconciliation: files
of attempts that end after the commit point, or after a rollback, leave nothing in the table; no JVM
(the attempts are the steps a Spark task takes, run in this process in the order that matters)."""

from __future__ import annotations

import os

import pytest

from hoodie_datasource.client import write_client
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.client.write_client import WriteSession, start_write
from hoodie_datasource.errors import StaleTaskAttemptError
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.markers import create_marker, marker_dir
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.commit_metadata import WriteStat
from hoodie_datasource.timeline.instant import Instant, State
from hoodie_datasource.timeline.transitions import (
    create_requested,
    delete_pending_files,
    is_still_pending,
    transition_to_completed,
    transition_to_inflight,
)
from hoodie_datasource.write.rollback import rollback_pending
from hoodie_datasource.write.task_attempt import end_task_attempt
from tests.conftest import table_listing, unzip_table
from tests.unit.small_tables import batch

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}


def started(path: str) -> WriteSession:
    write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    session = start_write(open_storage(path), OPTS, batch([("a", 2, "x", 2)]).schema)
    session.mark_inflight({})
    return session


def attempt_writes(session: WriteSession, attempt: int) -> WriteStat:
    """What a task attempt does before its last step: a marker, then its data file."""
    name = f"f1-0_0-1-{attempt}_{session.instant_time}.parquet"
    create_marker(session.table.storage, session.instant_time, "x", name, "CREATE")
    session.table.storage.write(f"x/{name}", b"a data file")
    return WriteStat(fileId="f1-0", path=f"x/{name}", partitionPath="x")


def leftovers(path: str, session: WriteSession) -> list[str]:
    """The session's data files and markers on disk, and its marker folder if it is empty."""
    folder = marker_dir(session.instant_time)
    files = sorted(p for p in table_listing(path) if session.instant_time in p
                   and (not p.startswith(".hoodie/") or p.startswith(folder)))
    empty = os.path.isdir(os.path.join(path, folder)) and not any(p.startswith(folder) for p in files)
    return files + ([folder] if empty else [])


@pytest.mark.parametrize("zip_name, layout", [("sample_table/cow/v6_nonpartitioned.zip", 1),
                                              ("sample_table/cow/v8_nonpartitioned.zip", 2)])
def test_an_instant_is_pending_until_it_is_completed_or_rolled_back(tmp_path, zip_name, layout):
    storage = open_storage(str(unzip_table(zip_name, tmp_path)))
    table = Table.load(storage)
    timeline = table.timeline
    assert table.config.timeline_layout_version == layout
    assert not is_still_pending(table, timeline.completed()[-1])

    def begin(instant_time: str) -> tuple[Instant, Instant]:
        if layout == 1:
            requested = create_requested(table, instant_time, "commit")
            return requested, transition_to_inflight(table, requested)
        # this library writes no layout-2 instant (``TableConfig.check_writable``): the files Hudi 1.x writes
        requested = Instant(instant_time, "commit", State.REQUESTED)
        for instant in (requested, requested.with_state(State.INFLIGHT)):
            storage.write(timeline.path_of(instant), b"")
        return requested, requested.with_state(State.INFLIGHT)

    requested, inflight = begin("29990101000000000")
    assert is_still_pending(table, requested) and is_still_pending(table, inflight)
    completed = inflight.with_state(State.COMPLETED, "29990101000000001" if layout == 2 else None)
    other = begin("29990101000000002")[1]
    delete_pending_files(table, other)  # what a rollback does last
    if layout == 1:
        transition_to_completed(table, inflight, b"{}")
    else:  # this library does not complete layout-2 instants: the file Hudi 1.x would write
        storage.write(timeline.path_of(completed), b"{}")
    assert not is_still_pending(table, inflight)
    assert not is_still_pending(table, other)
    assert not is_still_pending(table, Instant("29990101000000000", "deltacommit", State.INFLIGHT))


def test_an_attempt_ending_while_its_instant_is_pending_keeps_its_files(tmp_path):
    path = str(tmp_path / "t")
    session = started(path)
    stat = attempt_writes(session, 1)
    assert end_task_attempt(session.table, session.instant, [stat]) == [stat]
    assert leftovers(path, session) == sorted([stat.path, f"{marker_dir(session.instant_time)}/x/"
                                               f"{os.path.basename(stat.path)}.marker.CREATE"])
    session.commit([stat])
    assert leftovers(path, session) == [stat.path]


def test_an_attempt_ending_after_the_commit_removes_its_files_and_markers(tmp_path):
    path = str(tmp_path / "t")
    session = started(path)
    winner = attempt_writes(session, 1)
    assert end_task_attempt(session.table, session.instant, [winner]) == [winner]
    session.commit([winner])
    late = attempt_writes(session, 2)  # the losing attempt wakes up and writes after the commit
    with pytest.raises(StaleTaskAttemptError, match=f"{session.instant_time} .* was completed without"):
        end_task_attempt(session.table, session.instant, [late])
    assert leftovers(path, session) == [winner.path]


def test_an_attempt_ending_after_a_rollback_removes_its_files(tmp_path):
    path = str(tmp_path / "t")
    session = started(path)
    rollback_pending(session.table, session.instant)
    late = attempt_writes(session, 1)
    with pytest.raises(StaleTaskAttemptError, match="rolled back"):
        end_task_attempt(session.table, session.instant, [late])
    assert leftovers(path, session) == []


def test_an_attempt_checking_between_the_reconciliation_and_the_commit_point_is_reconciled_after_it(
        tmp_path, monkeypatch):
    """The race the second reconciliation closes: the losing attempt writes its file after the driver
    listed the markers, and finds the instant pending, as the commit point comes just after."""
    path = str(tmp_path / "t")
    session = started(path)
    winner = attempt_writes(session, 1)
    checked = []

    def late_attempt_then_complete(table, inflight, content):
        late = attempt_writes(session, 2)
        checked.append(end_task_attempt(session.table, session.instant, [late]))
        return transition_to_completed(table, inflight, content)

    monkeypatch.setattr(write_client, "transition_to_completed", late_attempt_then_complete)
    session.commit([winner])
    assert len(checked) == 1, "the late attempt did not run before the commit point"
    assert leftovers(path, session) == [winner.path]


def test_a_rollback_removes_the_files_of_an_attempt_that_checked_before_the_instant_was_gone(
        tmp_path, monkeypatch):
    """A rollback lists the marked files, deletes them and the pending instant files: an attempt whose
    check came in between found the instant pending; its file is removed by the rollback's second pass."""
    from hoodie_datasource.table import instant_rollback

    path = str(tmp_path / "t")
    session = started(path)
    checked = []

    def late_attempt_then_delete(table, instant):
        late = attempt_writes(session, 1)
        checked.append(end_task_attempt(session.table, session.instant, [late]))
        delete_pending_files(table, instant)

    monkeypatch.setattr(instant_rollback, "delete_pending_files", late_attempt_then_delete)
    rollback_pending(session.table, session.instant)
    assert len(checked) == 1
    assert leftovers(path, session) == []
