"""Restore: the table rolled back to a savepoint, as Apache Hudi's ``BaseHoodieWriteClient.restoreToSavepoint``
does it.

``R.restore.requested`` holds the plan (Avro ``HoodieRestorePlan``, ``RestorePlanActionExecutor``): every write,
compaction and clustering after the savepoint, in any state, newest first, pending clusterings ahead of the
rest. ``R.restore.inflight`` follows, then each planned instant is rolled back as a rollback of its own (at a
time after R, newest first, so each is the latest write when its turn comes), and ``R.restore`` completes with
Avro ``HoodieRestoreMetadata`` holding each instant's rollback metadata. Last, the rollbacks the restore made
are removed from the timeline (``BaseRestoreActionExecutor.finishRestore``): the restore stands for them.
Cleans and rollbacks after the savepoint stay; a clean never removed the savepoint's files.

Refused before anything changes: a savepoint that does not exist, a later savepoint (its commit would be rolled
back: ``BaseRollbackActionExecutor.validateSavepointRollbacks``), a commit after the savepoint that was archived
(``hoodie.archive.beyond.savepoint``, which Hudi's restore refuses outright), and a write or compaction after the
savepoint whose writer is still at work (its heartbeat beats). Under optimistic concurrency control the caller
holds the table lock throughout.

The metadata table is deleted first and built again from storage after the restore, its index partitions too (Hudi's
``restoreToSavepoint`` deletes it when the savepoint is older than its first compaction or timeline, and restores it
in place otherwise; we always delete it: the metadata table's cleaner may have removed its file slices as of the
savepoint, and a listing of the restored table is exactly what it must hold).

A restore that died midway is finished by the next restore (of the same savepoint, as Hudi's
``scheduleAndGetRestorePlan`` resumes it; of another, before that one starts), by the next rollback and by the next
write before it starts (under the table lock, as it rolls back failed writes): a rollback the restore left pending
is finished from its plan, the instants of the plan still on the timeline are rolled back, the restore completes.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Iterable
from typing import Any

from hoodie_datasource import fault_points
from hoodie_datasource.config.metadata_config import MetadataConfig
from hoodie_datasource.errors import SavepointError
from hoodie_datasource.metadata.records import MetadataPartition
from hoodie_datasource.services.metadata_lifecycle import build_metadata_table
from hoodie_datasource.services.service_run import ServiceRun
from hoodie_datasource.table.instant_rollback import finish_rollback
from hoodie_datasource.table.metadata_table import drop_metadata_table, ready_partitions
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.avro_metadata import RESTORE_METADATA, RESTORE_PLAN, encode
from hoodie_datasource.timeline.heartbeat import is_heartbeat_expired
from hoodie_datasource.timeline.instant import (
    CLUSTERING,
    COMPACTION,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    RESTORE,
    ROLLBACK,
    WRITE_ACTIONS,
    Instant,
    State,
)
from hoodie_datasource.timeline.instant_time import new_instant_time
from hoodie_datasource.timeline.timeline import Timeline, instant_path
from hoodie_datasource.timeline.transitions import create_requested, transition_to_completed, transition_to_inflight
from hoodie_datasource.write.rollback import rollback_completed, rollback_pending

logger = logging.getLogger(__name__)

RESTORE_PLAN_VERSION = 2  # RestorePlanActionExecutor.LATEST_RESTORE_PLAN_VERSION
_RESTORED_ACTIONS = WRITE_ACTIONS | {COMPACTION, LOG_COMPACTION, CLUSTERING}  # Hudi's write timeline


def _is_pending_clustering(timeline: Timeline, instant: Instant) -> bool:
    """A pending replacecommit whose plan is a clustering (``ClusteringUtils.isPendingClusteringInstant``), not
    an insert_overwrite."""
    if instant.is_completed or instant.action not in (REPLACE_COMMIT, CLUSTERING):
        return False
    try:
        plan = timeline.read_plan(instant.with_state(State.REQUESTED))
    except FileNotFoundError:
        return False
    return plan.get("operationType") == "CLUSTER" or instant.action == CLUSTERING


def plan_restore(timeline: Timeline, savepoint_time: str) -> dict[str, Any]:
    """The ``HoodieRestorePlan`` of a restore to ``savepoint_time``: the instants to roll back, newest first."""
    later = [i for i in reversed(timeline.instants) if i.timestamp > savepoint_time and i.action in _RESTORED_ACTIONS
             and i.timestamp not in timeline.archived]
    clusterings = [i for i in later if _is_pending_clustering(timeline, i)]
    ordered = clusterings + [i for i in later if i not in clusterings]
    return {"instantsToRollback": [{"commitTime": i.timestamp, "action": i.action} for i in ordered],
            "version": RESTORE_PLAN_VERSION, "savepointToRestoreTimestamp": savepoint_time}


def check_restorable(table: Table, savepoint_time: str, heartbeat_expiry_ms: int, beyond_savepoint: bool) -> None:
    """Refuse a restore to ``savepoint_time`` that cannot be done whole (the module's docstring says which)."""
    timeline, uri = table.timeline, table.uri
    savepoints = [s.timestamp for s in timeline.savepoints]
    if savepoint_time not in savepoints:
        raise SavepointError(f"No savepoint {savepoint_time} in {uri}; its savepoints: {', '.join(savepoints) or 'none'}")
    if beyond_savepoint:
        raise SavepointError(f"Cannot restore {uri} with hoodie.archive.beyond.savepoint=true: commits after "
                             f"a savepoint may be archived (Apache Hudi refuses it too)")
    later = [s for s in savepoints if s > savepoint_time]
    if later:
        raise SavepointError(f"Cannot restore {uri} to {savepoint_time}: the later savepoints {', '.join(later)} "
                             f"would be rolled back; delete them first (CALL delete_savepoint)")
    archived = sorted(t for t in timeline.archived if t > savepoint_time)
    if archived:
        raise SavepointError(f"Cannot restore {uri} to {savepoint_time}: commits after it are archived "
                             f"({', '.join(archived[:5])}), so they cannot be rolled back")
    running = [i.timestamp for i in timeline.pending() if i.timestamp > savepoint_time
               and i.action in _RESTORED_ACTIONS
               and not is_heartbeat_expired(table.storage, i.timestamp, heartbeat_expiry_ms)]
    if running:
        raise SavepointError(f"Cannot restore {uri} to {savepoint_time}: the writers of {', '.join(running)} are at "
                             f"work (their heartbeats beat); stop them, or wait until their heartbeats expire")


def restore_to_savepoint(table: Table, savepoint_time: str, heartbeat_expiry_ms: int, metadata: MetadataConfig,
                         beyond_savepoint: bool = False) -> ServiceRun:
    """Restore the table to the savepoint ``savepoint_time``: the restore instant and the table after. A pending
    restore to the same savepoint is finished instead; one to another first. A metadata table there before is built
    again after (when ``metadata`` enables it and no older instant is pending; else the next write builds it) with
    the partitions that were ready and those ``metadata`` switches on."""
    table.config.check_writable(table.uri)
    ready = ready_partitions(table.config)
    metadata = _keeping(metadata, ready) if ready else dataclasses.replace(metadata, enabled=False)
    for pending in _pending_restores(table.timeline):
        plan = table.timeline.read_plan(pending.with_state(State.REQUESTED))
        table = _execute(table, pending, plan)
        if plan.get("savepointToRestoreTimestamp") == savepoint_time:
            return ServiceRun((pending.timestamp,), _with_metadata_table(table, metadata))
    check_restorable(table, savepoint_time, heartbeat_expiry_ms, beyond_savepoint)
    table = _without_metadata_table(table)
    plan = plan_restore(table.timeline, savepoint_time)
    restore_time = new_instant_time(table.timeline.last_instant_time())
    requested = create_requested(table, restore_time, RESTORE, encode(RESTORE_PLAN, plan))
    fault_points.reach(fault_points.AFTER_RESTORE_REQUESTED, storage=table.storage, instant=restore_time)
    table = _execute(table.refresh(), requested, plan)
    return ServiceRun((restore_time,), _with_metadata_table(table, metadata))


def _keeping(cfg: MetadataConfig, ready: Iterable[str]) -> MetadataConfig:
    """``cfg`` with the index partitions of ``ready`` switched on too."""
    ready = set(ready)
    return dataclasses.replace(cfg, column_stats=cfg.column_stats or MetadataPartition.COLUMN_STATS.path in ready,
                               bloom_filters=cfg.bloom_filters or MetadataPartition.BLOOM_FILTERS.path in ready,
                               record_index=cfg.record_index or MetadataPartition.RECORD_INDEX.path in ready)


def _with_metadata_table(table: Table, cfg: MetadataConfig) -> Table:
    if not cfg.enabled or table.timeline.pending():
        return table  # the next write builds it (an older write still pending could not be told from committed)
    return build_metadata_table(table, cfg)


def finish_pending_restores(table: Table) -> Table:
    """Finish every restore that died midway (the table after, listed again when there was one)."""
    for pending in _pending_restores(table.timeline):
        table = _execute(table, pending, table.timeline.read_plan(pending.with_state(State.REQUESTED)))
    return table


def _pending_restores(timeline: Timeline) -> list[Instant]:
    return [i for i in timeline.pending() if i.action == RESTORE]


def _without_metadata_table(table: Table) -> Table:
    config = drop_metadata_table(table.storage, table.config, table.timeline.metadata_folder,
                                 "a restore deletes it first; it is built again from storage once the restore is done",
                                 logging.INFO)
    return table if config is table.config else Table.load(table.storage, config=config)


def _execute(table: Table, instant: Instant, plan: dict[str, Any]) -> Table:
    """Roll back what of ``plan`` is still on the timeline and complete the restore ``instant`` (requested or
    inflight); the table after."""
    started = time.monotonic()
    restore_time = instant.timestamp
    table = _without_metadata_table(table)
    inflight = instant if instant.state is State.INFLIGHT else transition_to_inflight(table, instant)
    for rollback in table.timeline.pending():  # one the restore left midway: only its plan names its files
        if rollback.action == ROLLBACK and rollback.timestamp > restore_time:
            finish_rollback(table, rollback)
            table = table.refresh()
    infos = plan.get("instantsToRollback") or []
    for info in infos:
        target = table.timeline.find(info["commitTime"])
        if target is None or target.timestamp in table.timeline.archived:
            logger.info("Restore %s: %s was rolled back by an earlier attempt", restore_time, info["commitTime"])
            continue
        if target.is_completed:
            rollback_completed(table, target.timestamp)
        else:
            rollback_pending(table, target)
        table = table.refresh()
        fault_points.reach(fault_points.MID_RESTORE, storage=table.storage, instant=restore_time,
                           rolled_back=target.timestamp)
    rollbacks = _rollbacks_of(table.timeline, restore_time, {i["commitTime"] for i in infos})
    metadata = {
        "startRestoreTime": restore_time, "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "instantsToRollback": [i["commitTime"] for i in infos],
        "hoodieRestoreMetadata": {target: [table.timeline.read_metadata(r)] for target, r in rollbacks.items()
                                  if r.is_completed},
        "version": 1, "restoreInstantInfo": infos,
    }
    transition_to_completed(table, inflight, encode(RESTORE_METADATA, metadata))
    for rollback in rollbacks.values():  # the restore stands for them (finishRestore)
        for state in (State.COMPLETED, State.INFLIGHT, State.REQUESTED):
            table.storage.delete(instant_path(table.config, rollback.with_state(state)))
    logger.info("Restored %s to the savepoint %s (restore %s): %d instants rolled back", table.uri,
                plan.get("savepointToRestoreTimestamp"), restore_time, len(infos))
    return table.refresh()


def _rollbacks_of(timeline: Timeline, restore_time: str, targets: set[str]) -> dict[str, Instant]:
    """The rollbacks after ``restore_time`` of the instants ``targets``, by the instant each rolled back."""
    found = {}
    for instant in timeline.instants:
        if instant.action != ROLLBACK or instant.timestamp <= restore_time:
            continue
        plan = timeline.read_plan(instant.with_state(State.REQUESTED))
        target = plan["instantToRollback"]["commitTime"]
        if target in targets:
            found[target] = instant
    return found
