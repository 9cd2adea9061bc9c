"""Cleaning: deleting file slices no reader can need any more.

Policies (``hoodie.cleaner.policy``):
* ``KEEP_LATEST_COMMITS`` (default): keep what the last ``hoodie.cleaner.commits.retained``
  (default 10) completed writes can read: every slice newer than the earliest retained write,
  plus, per file group, the slice that was latest at that write. Time travel and incremental pulls
  within that window keep working.
* ``KEEP_LATEST_FILE_VERSIONS``: keep the latest ``hoodie.cleaner.fileversions.retained`` (default 3)
  slices of each file group.
* ``KEEP_LATEST_BY_HOURS``: as ``KEEP_LATEST_COMMITS``, the earliest retained write being the first of the
  last ``hoodie.cleaner.hours.retained`` (default 24) hours (Hudi's ``CleanPlanner.getEarliestCommitToRetain``),
  or the latest write when none is that recent.

Never removed: the latest slice of a live file group, any slice a pending compaction reads, files
of pending instants, a slice a savepoint holds (its base file or a log file is among the savepoint's
files: a restore to the savepoint needs them; Hudi's ``CleanPlanner.isFileSliceExistInSavepointedFiles``,
replaced file groups included). File groups replaced by an overwrite are removed once the replace is
older than the retained window. Recorded as ``T.clean.requested`` (Avro HoodieCleanerPlan) ->
``T.clean.inflight`` -> ``T.clean`` (Avro HoodieCleanMetadata), and in the metadata table before it
completes (``metadata.sync``).
"""

from __future__ import annotations

import logging
import posixpath
import time
from collections import defaultdict
from datetime import timedelta

from hoodie_datasource import fault_points
from hoodie_datasource.config.services_config import CleanConfig
from hoodie_datasource.metadata.sync import sync_clean
from hoodie_datasource.services.service_run import ServiceRun
from hoodie_datasource.storage.storage import join
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.avro_metadata import CLEAN_METADATA, CLEANER_PLAN, encode
from hoodie_datasource.timeline.instant import CLEAN, WRITE_ACTIONS, Instant, State
from hoodie_datasource.timeline.instant_time import format_instant, new_instant_time, utc_now
from hoodie_datasource.timeline.timeline import Timeline
from hoodie_datasource.timeline.transitions import create_requested, transition_to_completed, transition_to_inflight
from hoodie_datasource.write.rollback import rollback_failed_writes

logger = logging.getLogger(__name__)

# CleanPlanner.SAVEPOINTED_TIMESTAMPS: the plan's and the clean's extraMetadata key listing the savepoints
# the clean kept; Hudi's incremental cleaner rescans the partitions of those deleted since
SAVEPOINTED_TIMESTAMPS = "savepointed_timestamps"
BY_VERSIONS, BY_HOURS = "KEEP_LATEST_FILE_VERSIONS", "KEEP_LATEST_BY_HOURS"


def earliest_retained(timeline: Timeline, cfg: CleanConfig) -> str:
    """The earliest completed write the cleaner retains ("" on a table without one)."""
    completed = timeline.completed()
    if not completed:
        return ""
    if cfg.policy == BY_HOURS:
        window_start = format_instant(utc_now() - timedelta(hours=cfg.hours_retained))
        return next((i.timestamp for i in completed if i.timestamp >= window_start), completed[-1].timestamp)
    return completed[max(0, len(completed) - cfg.commits_retained)].timestamp


def savepointed_files(timeline: Timeline) -> frozenset[str]:
    """The names of the files the table's savepoints hold (``HoodieSavepointMetadata``: per partition, the
    base and log files of the latest slices as of the savepointed commit)."""
    return frozenset(name for savepoint in timeline.savepoints
                     for partition in (timeline.read_metadata(savepoint).get("partitionMetadata") or {}).values()
                     for name in partition.get("savepointDataFile") or ())


def files_to_clean(table: Table, cfg: CleanConfig) -> tuple[dict[str, list[str]], str]:
    """Files to delete per partition, and the earliest instant retained."""
    timeline = table.timeline
    completed = timeline.completed()
    retained_from = earliest_retained(timeline, cfg)
    if not completed or (cfg.policy != BY_VERSIONS and retained_from == completed[0].timestamp):
        # every committed file version and replacement is at or after the first retained write:
        # nothing to delete, and no listing of the table to find that out
        return {}, retained_from
    view = table.fs_view
    pending_compaction = timeline.pending_compactions()
    savepointed = savepointed_files(timeline)
    committed = {i.timestamp for i in completed}
    replaced_at: dict[tuple[str, str], str] = {}
    for instant in timeline.completed(("replacecommit",)):
        for partition, ids in (timeline.read_metadata(instant).get("partitionToReplaceFileIds") or {}).items():
            for fid in ids or ():
                replaced_at[(partition, fid)] = instant.timestamp
    doomed: dict[str, list[str]] = defaultdict(list)
    for group in view.file_groups():
        key = (group.partition_path, group.file_id)
        # the group's committed slices by the instant each starts at: its base file's, or (a slice of log files
        # only, which Hudi writes under an index that indexes log files) the instant its logs are named after
        starts = sorted({b.instant_time for b in group.base_files if b.instant_time in committed}
                        | {log.instant_time for log in group.log_files if log.instant_time in committed})
        if not starts:
            continue
        if key in replaced_at:
            # Hudi's CleanPlanner.getReplacedFilesEligibleToClean: a replaced file group goes once its
            # replacement is out of the retained commits, or at once when versions, not commits, are kept
            if cfg.policy == BY_VERSIONS or replaced_at[key] < retained_from:
                keep = set()
            else:
                continue
        elif cfg.policy == BY_VERSIONS:
            keep = set(starts[-cfg.file_versions_retained:])
        else:
            older = [t for t in starts if t < retained_from]
            keep = {t for t in starts if t >= retained_from}
            if older:
                keep.add(older[-1])
        if key not in replaced_at:
            keep.add(starts[-1])
        if key in pending_compaction:
            continue
        for start in starts:
            if start in keep:
                continue
            # the slice's CDC logs too, as Hudi's CleanPlanner.getCleanFileInfoForSlice does with CDC on
            names = [*(b.name for b in group.base_files if b.instant_time == start),
                     *(log.name for log in (*group.log_files, *group.cdc_log_files) if log.instant_time == start)]
            if savepointed.isdisjoint(names):
                doomed[group.partition_path].extend(names)
    return dict(doomed), retained_from


def clean(table: Table, cfg: CleanConfig, instant_time: str | None = None) -> ServiceRun:
    """Plan and run a clean: its instant time (none when there is nothing to delete; ``instant_time`` when
    given, else a new one), and the table after.
    Under the LAZY failed-writes policy, failed writes (heartbeat expired) are rolled back first, as Hudi's
    ``BaseHoodieTableServiceClient.clean`` does; so are pending cleans finished first: a cleaner that died
    midway left its plan, which is executed again (deleting a file twice is harmless) and completed."""
    started = time.monotonic()
    if cfg.rolls_back_failed_writes and any(i.action in WRITE_ACTIONS for i in table.timeline.pending()):
        if rollback_failed_writes(table, cfg.heartbeat_expiry_ms):
            table = table.refresh()
    pending = [i for i in table.timeline.pending() if i.action == CLEAN]
    for instant in pending:
        _execute(table, instant, table.timeline.read_plan(instant.with_state(State.REQUESTED)), time.monotonic())
    if pending:
        table = table.refresh()
    doomed, retained_from = files_to_clean(table, cfg)
    if not any(doomed.values()):
        return ServiceRun((), table)
    by_versions = cfg.policy == BY_VERSIONS
    storage, timeline = table.storage, table.timeline
    instant_time = instant_time or new_instant_time(timeline.last_instant_time())
    last = timeline.last_completed_write()
    plan = {
        # Hudi plans no earliest instant under KEEP_LATEST_FILE_VERSIONS (CleanPlanner.getEarliestCommitToRetain)
        "earliestInstantToRetain": None if by_versions else {"timestamp": retained_from, "action": "commit",
                                                             "state": "COMPLETED"},
        "lastCompletedCommitTimestamp": last.timestamp if last else None,
        "policy": cfg.policy,
        "filesToBeDeletedPerPartition": None,
        "version": 2,
        "filePathsToBeDeletedPerPartition": {
            p: [{"filePath": storage.uri_of(join(p, n)), "isBootstrapBaseFile": False} for n in names]
            for p, names in doomed.items()
        },
        "partitionsToBeDeleted": None,
        "extraMetadata": _extra_metadata(table),
    }
    requested = create_requested(table, instant_time, CLEAN, encode(CLEANER_PLAN, plan))
    completed, total = _execute(table, requested, plan, started)
    logger.info("Clean %s removed %d files (retaining from %s)", instant_time, total, retained_from)
    return ServiceRun((instant_time,), table.with_instant(completed))


def _extra_metadata(table: Table) -> dict[str, str]:
    """Hudi's ``CleanPlanActionExecutor.prepareExtraMetadata``: the savepoints' times, on a partitioned table."""
    savepoints = table.timeline.savepoints
    if not savepoints or not table.config.is_partitioned:
        return {}
    return {SAVEPOINTED_TIMESTAMPS: ",".join(s.timestamp for s in savepoints)}


def _execute(table: Table, instant: Instant, plan: dict, started: float) -> tuple[Instant, int]:
    """Delete the files ``plan`` lists and complete the clean ``instant`` (requested or inflight); returns
    the completed clean and the files deleted."""
    storage = table.storage
    # the inflight file holds the plan too, as Hudi's CleanActionExecutor writes it (its archiver reads it there)
    inflight = (instant if instant.state is State.INFLIGHT
                else transition_to_inflight(table, instant, encode(CLEANER_PLAN, plan)))
    partition_metadata = {}
    total = 0
    # version 2 plans list paths; version 1 plans (older Hudi) list file names
    planned = {p: [posixpath.basename(e["filePath"]) for e in entries]
               for p, entries in (plan.get("filePathsToBeDeletedPerPartition") or {}).items()}
    for partition, names in (planned or plan.get("filesToBeDeletedPerPartition") or {}).items():
        ok = []
        for name in names:
            if storage.delete(join(partition, name)):
                ok.append(name)
            fault_points.reach(fault_points.MID_CLEAN, storage=storage, instant=instant.timestamp,
                               path=join(partition, name))
        total += len(ok)
        partition_metadata[partition] = {
            "partitionPath": partition, "policy": plan["policy"], "deletePathPatterns": names,
            "successDeleteFiles": ok, "failedDeleteFiles": [n for n in names if n not in ok],
            "isPartitionDeleted": False,
        }
    retained = plan.get("earliestInstantToRetain") or {}
    metadata = {
        "startCleanTime": instant.timestamp, "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "totalFilesDeleted": total, "earliestCommitToRetain": retained.get("timestamp") or "",
        "lastCompletedCommitTimestamp": plan.get("lastCompletedCommitTimestamp"),
        "partitionMetadata": partition_metadata, "version": 2, "extraMetadata": plan.get("extraMetadata"),
    }
    sync_clean(table, instant.timestamp, metadata)
    return transition_to_completed(table, inflight, encode(CLEAN_METADATA, metadata)), total
