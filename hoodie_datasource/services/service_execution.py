"""Running a planned table service (a compaction, a clustering) once, whoever else tries: the start decided under
the table lock, a heartbeat while it runs, and a run that died midway started over cleanly.

While it runs, the service beats a heartbeat of its instant, so that another process, finding it inflight, leaves
it alone instead of deleting its files and starting it over (the approach of Hudi's RFC-79, HUDI-7946: table
service executions heartbeat like writers). Whether it may start is decided inside ``guard()``, on a timeline
listed there: with the table lock, two processes never both run one plan; without it (a single writer), only one
process should run the table services."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TypeVar

from hoodie_datasource.errors import CommitConflictError, TimelineError
from hoodie_datasource.metadata.sync import Guard
from hoodie_datasource.services.service_run import ServiceRun
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.heartbeat import Heartbeat, is_heartbeat_expired
from hoodie_datasource.timeline.instant import Instant, State
from hoodie_datasource.timeline.timeline import Timeline
from hoodie_datasource.timeline.transitions import transition_to_inflight
from hoodie_datasource.write.rollback import delete_instant_data_files

__all__ = ["Guard", "run_each", "run_planned"]  # Guard: what a service holds while it changes the timeline (the table lock)
Result = TypeVar("Result")
logger = logging.getLogger(__name__)


def run_planned(table: Table, instant_time: str, what: str, is_planned: Callable[[Timeline, Instant], bool],
                guard: Guard, heartbeat_interval_ms: int, heartbeat_expiry_ms: int,
                execute: Callable[[Table, Instant], Result]) -> Result:
    """``execute(table, inflight instant)`` of the pending ``what`` (``compaction``, ``clustering``) planned at
    ``instant_time``, the table listed inside ``guard()``; ``CommitConflictError`` when another run completed it or
    is running it (its heartbeat alive), ``TimelineError`` when there is no such plan."""
    storage = table.storage
    heartbeat = None
    try:
        with guard():
            table = table.refresh()
            instant = table.timeline.find(instant_time)
            if instant is None or not is_planned(table.timeline, instant):
                raise TimelineError(f"No pending {what} {instant_time} in {table.uri}")
            if instant.is_completed:
                raise CommitConflictError(f"{what.capitalize()} {instant_time} was completed by another run meanwhile")
            if instant.state is State.INFLIGHT and not is_heartbeat_expired(storage, instant_time, heartbeat_expiry_ms):
                raise CommitConflictError(f"{what.capitalize()} {instant_time} is being run by another process (its "
                                          f"heartbeat is alive); it is resumed only once that heartbeat expired")
            heartbeat = Heartbeat(storage, instant_time, heartbeat_interval_ms).start()
        if instant.state is State.INFLIGHT:  # died midway: start over cleanly
            delete_instant_data_files(table, instant)
        else:
            instant = transition_to_inflight(table, instant)
        return execute(table, instant)
    finally:
        if heartbeat is not None:  # also when leaving the lock failed after the heartbeat started
            heartbeat.stop()


def run_each(table: Table, instant_times: Iterable[str], run_one: Callable[[Table, str], ServiceRun]) -> ServiceRun:
    """``run_one`` of every planned instant in turn, each on the table the one before left, but those another process
    completed or is running (``CommitConflictError``)."""
    done: list[str] = []
    for instant_time in instant_times:
        try:
            run = run_one(table, instant_time)
        except CommitConflictError as exc:
            logger.info("Skipped: %s", exc)
            continue
        done += run.instants
        table = run.table
    return ServiceRun(tuple(done), table)
