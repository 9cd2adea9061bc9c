"""Savepoints: a completed commit marked to be kept, so that the table can be restored to it later
(``services.restore``), as Apache Hudi's ``SavepointActionExecutor`` makes them.

A savepoint is filed under the time of the commit it keeps: ``<t>.savepoint.inflight``, then ``<t>.savepoint``
holding Avro ``HoodieSavepointMetadata`` (who, when, a comment, and per partition the base and log files of the
latest file slices as of the commit). From then on the cleaner keeps those files under every policy, archival
stops before the commit (unless ``hoodie.archive.beyond.savepoint``), a rollback of the commit is refused, and a
time-travel read as of the commit finds its files however far the cleaner has run.

Only a completed commit, deltacommit or replacecommit of the active timeline can be savepointed, and only one
the cleaner has not passed yet: at or after the earliest commit the latest clean retained (its plan's, while it
is pending), since the files of an older one may be gone. Deleting a savepoint removes its files from the
timeline (completed first, so it stops counting at once) and the cleaner may then remove the files it held.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from hoodie_datasource import fault_points
from hoodie_datasource.errors import SavepointError
from hoodie_datasource.services.service_run import ServiceRun
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.avro_metadata import SAVEPOINT_METADATA, encode
from hoodie_datasource.timeline.instant import CLEAN, SAVEPOINT, Instant, State
from hoodie_datasource.timeline.timeline import Timeline, instant_path
from hoodie_datasource.timeline.transitions import transition_to_completed

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SavepointInfo:
    """One savepoint: the commit it keeps, who made it and why, when (epoch milliseconds, Hudi's
    ``savepointedAt``), and the partitions it holds files of."""

    instant_time: str
    user: str
    comments: str
    saved_at: int
    partitions: tuple[str, ...]


def show_savepoints(timeline: Timeline) -> list[SavepointInfo]:
    """The table's savepoints, oldest first."""
    infos = []
    for savepoint in timeline.savepoints:
        metadata = timeline.read_metadata(savepoint)
        infos.append(SavepointInfo(savepoint.timestamp, metadata.get("savepointedBy") or "",
                                   metadata.get("comments") or "", int(metadata.get("savepointedAt") or 0),
                                   tuple(sorted(metadata.get("partitionMetadata") or {}))))
    return infos


def _earliest_savepointable(timeline: Timeline) -> str:
    """The earliest commit the latest clean retained (its plan's while it is pending), else the first commit
    (Hudi's ``SavepointActionExecutor``: a savepoint before it could hold files the cleaner removed)."""
    cleans = [i for i in timeline.instants if i.action == CLEAN and i.timestamp not in timeline.archived]
    if cleans:
        last = cleans[-1]
        if last.is_completed:
            return timeline.read_metadata(last).get("earliestCommitToRetain") or ""
        plan = timeline.read_plan(last.with_state(State.REQUESTED))
        return (plan.get("earliestInstantToRetain") or {}).get("timestamp") or ""
    completed = timeline.completed()
    return completed[0].timestamp if completed else ""


def _check_savepointable(table: Table, instant_time: str) -> None:
    timeline = table.timeline
    instant = timeline.find(instant_time)
    commits = ", ".join(i.timestamp for i in timeline.completed()[-5:]) or "none"
    if instant is None or instant.timestamp in timeline.archived:
        raise SavepointError(f"Cannot savepoint {instant_time} of {table.uri}: no such commit on the active timeline "
                             f"(its latest commits: {commits})")
    if not instant.is_completed or instant not in timeline.completed():
        raise SavepointError(f"Cannot savepoint {instant_time} of {table.uri}: it is a {instant.state.value} "
                             f"{instant.action}, not a completed commit, deltacommit or replacecommit")
    if any(s.timestamp == instant_time for s in timeline.savepoints):
        raise SavepointError(f"Cannot savepoint {instant_time} of {table.uri}: it is savepointed already")
    earliest = _earliest_savepointable(timeline)
    if instant_time < earliest:
        raise SavepointError(f"Cannot savepoint {instant_time} of {table.uri}: the cleaner retains commits from "
                             f"{earliest} on, and may have removed files of older ones")


def create_savepoint(table: Table, instant_time: str | None, user: str = "", comments: str = "") -> ServiceRun:
    """Savepoint the commit ``instant_time`` (the latest completed commit when None): its time, and the table
    after."""
    if instant_time is None:
        latest = table.timeline.last_completed_write()
        if latest is None:
            raise SavepointError(f"Cannot savepoint {table.uri}: it has no completed commit")
        instant_time = latest.timestamp
    _check_savepointable(table, instant_time)
    files: dict[str, list[str]] = {}
    for piece in table.fs_view.latest_file_slices(as_of=instant_time):
        files.setdefault(piece.partition_path, []).extend(piece.file_names)
    metadata = {"savepointedBy": user, "savepointedAt": int(time.time() * 1000), "comments": comments,
                "partitionMetadata": {p: {"partitionPath": p, "savepointDataFile": names} for p, names in files.items()},
                "version": 1}
    inflight = Instant(instant_time, SAVEPOINT, State.INFLIGHT)
    table.config.check_writable(table.uri)
    # written, not created once: one a savepoint that died here left is taken over
    table.storage.write(instant_path(table.config, inflight), b"")
    fault_points.reach(fault_points.AFTER_SAVEPOINT_INFLIGHT, storage=table.storage, instant=instant_time)
    transition_to_completed(table, inflight, encode(SAVEPOINT_METADATA, metadata))
    logger.info("Savepointed %s of %s (%d files in %d partitions)", instant_time, table.uri,
                sum(map(len, files.values())), len(files))
    return ServiceRun((instant_time,), table.refresh())


def delete_savepoint(table: Table, instant_time: str) -> Table:
    """Delete the savepoint of ``instant_time`` (Hudi's ``SavepointHelpers.deleteSavepoint``); the table after."""
    if not any(s.timestamp == instant_time for s in table.timeline.savepoints):
        listed = ", ".join(s.timestamp for s in table.timeline.savepoints) or "none"
        raise SavepointError(f"No savepoint {instant_time} in {table.uri}; its savepoints: {listed}")
    table.config.check_writable(table.uri)
    for state in (State.COMPLETED, State.INFLIGHT):
        table.storage.delete(instant_path(table.config, Instant(instant_time, SAVEPOINT, state)))
    logger.info("Deleted the savepoint %s of %s", instant_time, table.uri)
    return table.refresh()
