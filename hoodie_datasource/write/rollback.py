"""Rolling back an instant: removing every data file it wrote, then its instant files.

A failed write leaves a requested/inflight instant and maybe some data files, each of which has a
marker. Rollback deletes the marked files (and, in case markers were lost, any base file named
with that instant), then the pending instant files, then files marked meanwhile (by task attempts still
running, see ``write.task_attempt``) and the marker folder. Rolling back the latest
*completed* write first deletes its completed instant file, so readers stop seeing its files at
once, then cleans up the same way.
"""

from __future__ import annotations

import logging
import posixpath
import time
from collections import defaultdict

from hoodie_datasource import fault_points
from hoodie_datasource.errors import CommitConflictError, TimelineError
from hoodie_datasource.storage.storage import Storage, join
from hoodie_datasource.table.file_names import BaseFileName
from hoodie_datasource.table.fs_view import list_table_files
from hoodie_datasource.table.markers import delete_marker_dir, marked_files
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.avro_metadata import ROLLBACK_METADATA, ROLLBACK_PLAN, encode
from hoodie_datasource.timeline.commit_metadata import write_stats_of
from hoodie_datasource.timeline.heartbeat import delete_heartbeat, is_heartbeat_expired
from hoodie_datasource.timeline.instant import ROLLBACK, WRITE_ACTIONS, Instant, State
from hoodie_datasource.timeline.instant_time import new_instant_time
from hoodie_datasource.timeline.transitions import (
    create_requested,
    delete_pending_files,
    transition_to_completed,
    transition_to_inflight,
)

logger = logging.getLogger(__name__)


def instant_data_files(table: Table, instant: Instant, extra: list[str] | None = None) -> list[str]:
    """Relative paths of the data files ``instant`` wrote: marked, listed in ``extra``, or named with it
    (in a partition, or the table root when it is not partitioned), from one listing of the table."""
    storage = table.storage
    partitioned = table.config.is_partitioned
    present = {f.path for files in list_table_files(storage).values() for f in files}
    named = set()
    for path in present:
        parsed = BaseFileName.parse(posixpath.basename(path))
        if parsed is not None and parsed.instant_time == instant.timestamp and bool(posixpath.dirname(path)) == partitioned:
            named.add(path)
    files = set(marked_files(storage, instant.timestamp)) | set(extra or ()) | named
    return sorted(f for f in files if f in present)


def delete_instant_data_files(table: Table, instant: Instant, extra: list[str] | None = None) -> int:
    """Delete every data file ``instant`` wrote (used to restart a failed compaction)."""
    storage = table.storage
    deleted = sum(storage.delete(f) for f in instant_data_files(table, instant, extra))
    delete_marker_dir(storage, instant.timestamp)
    return deleted


def _split(relative: str) -> tuple[str, str]:
    partition, _, name = relative.rpartition("/")
    return partition, name


def _rollback(table: Table, target: Instant, files: list[str]) -> str:
    """Plan (``R.rollback.requested``), execute, complete (``R.rollback``), as Hudi records it."""
    started = time.monotonic()
    by_partition: dict[str, list[str]] = defaultdict(list)
    for relative in files:
        partition, name = _split(relative)
        by_partition[partition].append(name)
    timeline = table.timeline
    rollback_time = new_instant_time(timeline.last_instant_time())
    info = {"commitTime": target.timestamp, "action": target.action}
    plan = {
        "instantToRollback": info,
        "RollbackRequests": [{"partitionPath": p, "fileId": None, "latestBaseInstant": None,
                              "filesToBeDeleted": names, "logBlocksToBeDeleted": None}
                             for p, names in sorted(by_partition.items())],
        "version": 1,
    }
    requested = create_requested(table, rollback_time, ROLLBACK, encode(ROLLBACK_PLAN, plan))
    inflight = transition_to_inflight(table, requested)
    storage = table.storage
    if target.is_completed:
        storage.delete(timeline.path_of(target))  # readers stop seeing the instant here
    partition_metadata = _delete_planned(storage, rollback_time, by_partition, absent_is_deleted=False)
    delete_pending_files(table, target)
    # a task attempt that found the instant still pending wrote its files before the line above, so
    # their markers are listed now; one ending later finds it gone and removes its own (``write.task_attempt``)
    for late in set(marked_files(storage, target.timestamp)) - set(files):
        if storage.delete(late):
            logger.info("Removed %s: written by a task attempt of %s during its rollback", late, target.timestamp)
    delete_marker_dir(storage, target.timestamp)
    _complete(table, inflight, info, partition_metadata, started)
    return rollback_time


def _delete_planned(storage: Storage, rollback_time: str, by_partition: dict[str, list[str]],
                    absent_is_deleted: bool) -> dict[str, dict]:
    """Delete the planned files (names per partition); HoodieRollbackPartitionMetadata per partition. A file
    this call did not find counts as deleted when ``absent_is_deleted``."""
    partition_metadata = {}
    for partition, names in by_partition.items():
        ok = [n for n in names if _delete(storage, rollback_time, join(partition, n)) or absent_is_deleted]
        partition_metadata[partition] = {"partitionPath": partition, "successDeleteFiles": ok,
                                         "failedDeleteFiles": [n for n in names if n not in ok],
                                         "rollbackLogFiles": None, "logFilesFromFailedCommit": None}
    return partition_metadata


def _complete(table: Table, inflight: Instant, target: dict[str, str], partition_metadata: dict[str, dict],
              started: float) -> None:
    """Complete the rollback ``inflight`` of ``target`` (HoodieInstantInfo) with its HoodieRollbackMetadata."""
    metadata = {
        "startRollbackTime": inflight.timestamp, "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "totalFilesDeleted": sum(len(m["successDeleteFiles"]) for m in partition_metadata.values()),
        "commitsRollback": [target["commitTime"]], "partitionMetadata": partition_metadata, "version": 1,
        "instantsRollback": [target],
    }
    transition_to_completed(table, inflight, encode(ROLLBACK_METADATA, metadata))
    logger.info("Rolled back %s %s as rollback %s (%d files removed)", target["action"], target["commitTime"],
                inflight.timestamp, metadata["totalFilesDeleted"])


def _delete(storage: Storage, rollback_time: str, relative: str) -> bool:
    deleted = storage.delete(relative)
    fault_points.reach(fault_points.MID_ROLLBACK, storage=storage, instant=rollback_time, path=relative)
    return deleted


def rollback_pending(table: Table, instant: Instant) -> str:
    if instant.is_completed:
        raise TimelineError(f"Instant {instant.timestamp} is completed; use rollback_completed")
    return _rollback(table, instant, instant_data_files(table, instant))


def _finish_pending_rollback(table: Table, instant: Instant) -> None:
    """A rollback that died midway: execute its plan again, delete the target's markers and instant files,
    then complete it. Its metadata lists every planned file as deleted, also one the first attempt removed,
    as Hudi's ``BaseRollbackHelper`` counts a file already gone (a plan Hudi wrote names full paths)."""
    started = time.monotonic()
    timeline, storage = table.timeline, table.storage
    plan = timeline.read_plan(instant.with_state(State.REQUESTED))
    by_partition: dict[str, list[str]] = defaultdict(list)
    for request in plan.get("RollbackRequests") or ():
        by_partition[request["partitionPath"]] += [posixpath.basename(f) for f in request.get("filesToBeDeleted") or ()]
    inflight = instant if instant.state is State.INFLIGHT else transition_to_inflight(table, instant)
    partition_metadata = _delete_planned(storage, instant.timestamp, by_partition, absent_is_deleted=True)
    target = plan["instantToRollback"]
    delete_marker_dir(storage, target["commitTime"])
    delete_heartbeat(storage, target["commitTime"])
    for state in (State.COMPLETED, State.INFLIGHT, State.REQUESTED):
        action = target["action"]
        storage.delete(timeline.path_of(Instant(target["commitTime"], action, state)))
    _complete(table, inflight, target, partition_metadata, started)


def rollback_failed_writes(table: Table, heartbeat_expiry_ms: int) -> list[str]:
    """Roll back every failed write: a pending write instant whose writer's heartbeat is older than
    ``heartbeat_expiry_ms`` (or absent), after finishing any rollback that itself died midway. A pending
    write with a live heartbeat belongs to a writer still at work and is left alone, under either
    failed-writes policy. Returns the instants rolled back."""
    rolled = []
    for instant in table.timeline.pending():
        if instant.action == ROLLBACK:
            try:
                _finish_pending_rollback(table, instant)
            except CommitConflictError:  # its own writer (an abort in progress) or another one finished it
                logger.info("Rollback %s was finished by another writer meanwhile", instant.timestamp)
    if any(i.action == ROLLBACK for i in table.timeline.pending()):
        table = table.refresh()
    for instant in table.timeline.pending():
        if instant.action not in WRITE_ACTIONS:
            continue
        if not is_heartbeat_expired(table.storage, instant.timestamp, heartbeat_expiry_ms):
            logger.info("Pending %s %s has a live heartbeat: its writer is at work", instant.action, instant.timestamp)
            continue
        rollback_pending(table, instant)
        delete_heartbeat(table.storage, instant.timestamp)
        table = table.refresh()
        rolled.append(instant.timestamp)
    return rolled


def rollback_completed(table: Table, instant_time: str) -> str:
    """Undo the latest completed write; older ones cannot be rolled back out of order, nor a savepointed
    one (its files are what a restore to the savepoint returns to)."""
    timeline = table.timeline
    latest = timeline.last_completed_write()
    if latest is None or latest.timestamp != instant_time:
        raise TimelineError(
            f"Only the latest completed write can be rolled back; latest is "
            f"{latest.timestamp if latest else 'none'}, asked for {instant_time}"
        )
    if any(s.timestamp == instant_time for s in timeline.savepoints):
        # Hudi's BaseRollbackActionExecutor.validateSavepointRollbacks
        raise TimelineError(f"Cannot roll back {instant_time} of {table.uri}: it is savepointed; delete the "
                            f"savepoint first (Apache Hudi's CALL delete_savepoint)")
    stats = list(write_stats_of(timeline.read_metadata(latest)))
    written = [s["path"] for s in stats if s.get("path")] + [p for s in stats for p in s.get("cdcStats") or ()]
    return _rollback(table, latest, instant_data_files(table, latest, written))
