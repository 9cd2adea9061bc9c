"""Rolling back an instant: removing every data file it wrote, then its instant files.

A failed write leaves a requested/inflight instant and maybe some data files, each of which has a
marker. Rollback deletes the marked files (and, in case markers were lost, any base file named
with that instant), then the pending instant files, then files marked meanwhile (by task attempts still
running, see ``write.task_attempt``) and the marker folder. Rolling back the latest
*completed* write first deletes its completed instant file, so readers stop seeing its files at
once, then cleans up the same way. The rollback is recorded in the metadata table before it completes
(``metadata.sync.sync_rollback``), as each of Hudi's is. How a rollback is planned and recorded is
``table.instant_rollback``'s. A write's index kept outside the table (HBase) undoes the instant's entries first
(``Index.rollback_commit``, Hudi's ``rollBackIndex``): when that fails the instant stays pending, for a later
rollback.
"""

from __future__ import annotations

import logging
import posixpath

from hoodie_datasource.errors import CommitConflictError, TimelineError
from hoodie_datasource.index.index import Index
from hoodie_datasource.metadata.sync import Guard, check_rollback, sync_rollback
from hoodie_datasource.table.file_names import BaseFileName
from hoodie_datasource.table.fs_view import list_table_files
from hoodie_datasource.table.instant_rollback import finish_rollback, rollback_files
from hoodie_datasource.table.markers import delete_marker_dir, marked_files
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.commit_metadata import write_stats_of
from hoodie_datasource.timeline.heartbeat import delete_heartbeat, is_heartbeat_expired
from hoodie_datasource.timeline.instant import ROLLBACK, WRITE_ACTIONS, Instant
from hoodie_datasource.timeline.instant_time import new_instant_time

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


def _rollback(table: Table, target: Instant, files: list[str], guard: Guard | None = None,
              index: Index | None = None) -> str:
    """Roll ``target`` back deleting ``files``, at a new instant time, recorded in the metadata table too
    (under ``guard``, the table lock, when the caller does not hold it), after ``index`` undid its entries."""
    if index is not None:
        index.rollback_commit(target.timestamp)
    rollback_time = new_instant_time(table.timeline.last_instant_time())
    return rollback_files(table, target, files, rollback_time,
                          lambda *change: sync_rollback(table, *change, guard=guard))


def rollback_pending(table: Table, instant: Instant, guard: Guard | None = None, index: Index | None = None) -> str:
    if instant.is_completed:
        raise TimelineError(f"Instant {instant.timestamp} is completed; use rollback_completed")
    return _rollback(table, instant, instant_data_files(table, instant), guard, index)


def rollback_failed_writes(table: Table, heartbeat_expiry_ms: int, index: Index | None = None) -> list[str]:
    """Roll back every failed write: a pending write instant (not a clustering) whose writer's heartbeat is older
    than ``heartbeat_expiry_ms`` (or absent), after finishing any rollback that itself died midway. A pending
    write with a live heartbeat belongs to a writer still at work and is left alone, under either
    failed-writes policy. ``index``: the index of the write about to start, which undoes its entries of each.
    Returns the instants rolled back."""
    rolled = []
    for instant in table.timeline.pending():
        if instant.action == ROLLBACK:
            try:
                finish_rollback(table, instant, lambda *change: sync_rollback(table, *change))
            except CommitConflictError:  # its own writer (an abort in progress) or another one finished it
                logger.info("Rollback %s was finished by another writer meanwhile", instant.timestamp)
    if any(i.action == ROLLBACK for i in table.timeline.pending()):
        table = table.refresh()
    for instant in table.timeline.pending():
        # a pending clustering is its executor's to start over (Hudi's getInflightTimelineExcludeCompactionAndClustering)
        if instant.action not in WRITE_ACTIONS or table.timeline.clustering_plan(instant) is not None:
            continue
        if not is_heartbeat_expired(table.storage, instant.timestamp, heartbeat_expiry_ms):
            logger.info("Pending %s %s has a live heartbeat: its writer is at work", instant.action, instant.timestamp)
            continue
        rollback_pending(table, instant, index=index)
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
    check_rollback(table, instant_time)
    stats = list(write_stats_of(timeline.read_metadata(latest)))
    written = [s["path"] for s in stats if s.get("path")] + [p for s in stats for p in s.get("cdcStats") or ()]
    return _rollback(table, latest, instant_data_files(table, latest, written))
