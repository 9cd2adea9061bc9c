"""Recording a rollback as Hudi does: ``R.rollback.requested`` (Avro HoodieRollbackPlan: the files to delete per
partition), ``R.rollback.inflight``, the deletes, ``R.rollback`` (Avro HoodieRollbackMetadata); and finishing a
rollback that died midway from its plan.

Of any table: the data table's (``write.rollback`` decides what a failed or undone write leaves to delete) and
the metadata table's (a data rollback undoes the metadata table's deltacommit of the same instant there). A
``before_complete`` step runs after the deletes and before the rollback completes, once per attempt: the
metadata table's record of a data rollback, which must land before the rollback does.
"""

from __future__ import annotations

import logging
import posixpath
import time
from collections import defaultdict
from collections.abc import Callable

from hoodie_datasource import fault_points
from hoodie_datasource.storage.storage import Storage, join
from hoodie_datasource.table.markers import delete_marker_dir, marked_files
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.avro_metadata import ROLLBACK_METADATA, ROLLBACK_PLAN, encode
from hoodie_datasource.timeline.heartbeat import delete_heartbeat
from hoodie_datasource.timeline.instant import COMPACTION, ROLLBACK, Instant, State
from hoodie_datasource.timeline.timeline import Timeline
from hoodie_datasource.timeline.transitions import (
    create_requested,
    delete_pending_files,
    transition_to_completed,
    transition_to_inflight,
)

logger = logging.getLogger(__name__)

# (rollback time, the time of the instant rolled back, the files planned for deletion), before the rollback completes
BeforeComplete = Callable[[str, str, list[str]], None]


def _split(relative: str) -> tuple[str, str]:
    partition, _, name = relative.rpartition("/")
    return partition, name


def rollback_files(table: Table, target: Instant, files: list[str], rollback_time: str,
                   before_complete: BeforeComplete | None = None) -> str:
    """Plan (``R.rollback.requested``), execute, complete (``R.rollback``) the rollback of ``target`` deleting
    ``files`` (relative to the table), as Hudi records it; ``rollback_time`` is R."""
    started = time.monotonic()
    by_partition: dict[str, list[str]] = defaultdict(list)
    for relative in files:
        partition, name = _split(relative)
        by_partition[partition].append(name)
    timeline = table.timeline
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
    _delete_compaction_plan(table, timeline, target.timestamp, target.action)
    # a task attempt that found the instant still pending wrote its files before the line above, so
    # their markers are listed now; one ending later finds it gone and removes its own (``write.task_attempt``)
    for late in set(marked_files(storage, target.timestamp)) - set(files):
        if storage.delete(late):
            logger.info("Removed %s: written by a task attempt of %s during its rollback", late, target.timestamp)
    delete_marker_dir(storage, target.timestamp)
    if before_complete is not None:
        before_complete(rollback_time, target.timestamp, files)
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


def _delete_compaction_plan(table: Table, timeline: Timeline, instant_time: str, action: str) -> None:
    """A compaction's ``T.compaction.requested`` and ``.inflight``, beside the ``T.commit`` it completed as:
    the rollback of the commit removes them too, as Hudi's ``revertToInflight`` of a compaction commit does,
    or the compaction would stand pending again."""
    if action != COMPACTION and timeline.is_compaction(Instant(instant_time, action, State.COMPLETED)):
        delete_pending_files(table, Instant(instant_time, COMPACTION, State.REQUESTED))


def _delete(storage: Storage, rollback_time: str, relative: str) -> bool:
    deleted = storage.delete(relative)
    fault_points.reach(fault_points.MID_ROLLBACK, storage=storage, instant=rollback_time, path=relative)
    return deleted


def finish_rollback(table: Table, instant: Instant, before_complete: BeforeComplete | None = None) -> None:
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
    _delete_compaction_plan(table, timeline, target["commitTime"], target["action"])
    if before_complete is not None:
        before_complete(instant.timestamp, target["commitTime"],
                        [join(p, name) for p, names in by_partition.items() for name in names])
    _complete(table, inflight, target, partition_metadata, started)
