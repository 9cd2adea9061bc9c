"""Compaction: merging a merge-on-read file slice's logs into a new base file.

    schedule  pick file slices with log files (strategy below), write ``T.compaction.requested``
              with the plan (Avro HoodieCompactionPlan: base file + log files per file group)
    execute   ``T.compaction.inflight``; per operation, merge base + the planned log files exactly
              as a snapshot read does and write ``<fileId>_<token>_T.parquet``; complete as
              ``T.commit`` with ``compacted: true`` and operation COMPACT

While a compaction is pending, writers append new log files named after ``T`` (the slice the
compaction starts), so nothing written meanwhile is lost, and readers merge both. A compaction
that died midway is resumed by ``run_pending_compactions`` (its partial files are removed first).

Strategies (``hoodie.compaction.strategy``):
* ``LogFileSizeBasedCompactionStrategy`` (default): slices with the most log bytes first.
* ``DayBasedCompactionStrategy``: the latest partitions first (``hoodie.compaction.daybased.target.partitions``,
  default 10), so the read-optimized view sees recent data within a bound.
* ``UnBoundedCompactionStrategy``: every slice with logs.
``hoodie.compaction.target.io`` (MB, default 500 GB as in Hudi) bounds the log bytes per plan.
"""

from __future__ import annotations

import logging
import posixpath
import time
from contextlib import nullcontext

import pyarrow as pa

from hoodie_datasource import fault_points
from hoodie_datasource.config.services_config import CompactionConfig
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.file_group.merged_reader import MergeRule, read_merged_slice
from hoodie_datasource.metadata.sync import index_tracking, sync_commit
from hoodie_datasource.schema.avro_schema import arrow_to_avro_schema, to_avro_json
from hoodie_datasource.services.service_execution import Guard, run_each, run_planned
from hoodie_datasource.services.service_run import ServiceRun
from hoodie_datasource.storage.storage import join
from hoodie_datasource.table.file_group import BaseFile, FileSlice, LogFile
from hoodie_datasource.table.file_names import UNKNOWN_WRITE_TOKEN, LogFileName, base_file_name
from hoodie_datasource.table.markers import create_marker, delete_marker_dir
from hoodie_datasource.table.meta_columns import FILE_NAME_COLUMN, RECORD_KEY_COLUMN, data_schema_of
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.avro_metadata import COMPACTION_PLAN, encode
from hoodie_datasource.timeline.commit_metadata import CommitMetadata, WriteStat
from hoodie_datasource.timeline.instant import COMPACTION, DELTA_COMMIT, Instant, State
from hoodie_datasource.timeline.instant_time import new_instant_time
from hoodie_datasource.timeline.timeline import Timeline, instant_path
from hoodie_datasource.timeline.transitions import create_requested, transition_to_completed
from hoodie_datasource.write.base_file_writer import footer_metadata, new_filter_for, write_base_file_with_footer
from hoodie_datasource.write.index_entries import base_file_entries

logger = logging.getLogger(__name__)


def delta_commits_since_last_compaction(timeline: Timeline) -> int:
    count = 0
    for instant in reversed(timeline.completed()):
        if timeline.is_compaction(instant):
            break
        if instant.action == DELTA_COMMIT:
            count += 1
    return count


def _pending_writes(timeline: Timeline) -> list[str]:
    """Pending writes; a pending clustering is none (it appends no log, and its file groups are left out)."""
    return [i.timestamp for i in timeline.pending() if i.action in (DELTA_COMMIT, "commit", "replacecommit")
            and timeline.clustering_plan(i) is None]


def _select(slices: list[FileSlice], cfg: CompactionConfig) -> list[FileSlice]:
    with_logs = [s for s in slices if s.log_files]  # a slice of log files only too (Hudi's, no data file)
    if cfg.strategy == "DayBasedCompactionStrategy":
        latest = sorted({s.partition_path for s in with_logs}, reverse=True)[: cfg.target_partitions]
        return [s for s in with_logs if s.partition_path in set(latest)]
    if cfg.strategy == "UnBoundedCompactionStrategy":
        return with_logs
    chosen, budget = [], cfg.target_io_mb * 1024 * 1024
    for s in sorted(with_logs, key=lambda s: -sum(log.size for log in s.log_files)):
        log_bytes = sum(log.size for log in s.log_files)
        if chosen and log_bytes > budget:
            break
        chosen.append(s)
        budget -= log_bytes
    return chosen


def schedule_compaction(table: Table, cfg: CompactionConfig) -> ServiceRun:
    """Write a compaction plan: its instant time (none when nothing needs compacting), and the table after."""
    if not table.config.is_mor:
        raise HoodieConfigError("Compaction applies to MERGE_ON_READ tables only")
    timeline = table.timeline
    if _pending_writes(timeline):
        logger.info("Not scheduling compaction: writes %s are in flight", _pending_writes(timeline))
        return ServiceRun((), table)
    pending = timeline.pending_compactions().keys() | timeline.pending_clustering().keys()
    candidates = [s for s in table.fs_view.latest_file_slices() if (s.partition_path, s.file_id) not in pending]
    selected = _select(candidates, cfg)
    if not selected:
        return ServiceRun((), table)
    instant_time = new_instant_time(timeline.last_instant_time())
    operations = [
        {
            "baseInstantTime": s.base_instant,
            "deltaFilePaths": [log.name for log in s.log_files],
            "dataFilePath": s.base_file.name if s.base_file else None,
            "fileId": s.file_id,
            "partitionPath": s.partition_path,
            "metrics": {"TOTAL_LOG_FILES": float(len(s.log_files)),
                        "TOTAL_LOG_FILES_SIZE": float(sum(log.size for log in s.log_files))},
            "bootstrapFilePath": None,
        }
        for s in selected
    ]
    requested = create_requested(table, instant_time, COMPACTION, encode(COMPACTION_PLAN, {
        "operations": operations, "extraMetadata": None, "version": 2}))
    # A writer that started before the plan existed appends to the old slice: withdraw the plan.
    # (Writers create their instant before reading pending compactions, so one of the two sees the other.)
    now = table.refresh()
    racing = _pending_writes(now.timeline)
    if racing:
        table.storage.delete(instant_path(table.config, requested))
        logger.info("Withdrew compaction %s: writes %s started meanwhile", instant_time, racing)
        return ServiceRun((), table)
    logger.info("Scheduled compaction %s of %d file groups (%s)", instant_time, len(selected), cfg.strategy)
    return ServiceRun((instant_time,), now)


def execute_compaction(table: Table, instant_time: str, cfg: CompactionConfig, guard: Guard = nullcontext
                       ) -> ServiceRun:
    """Run a scheduled compaction (``services.service_execution.run_planned``: started once, heartbeat while it
    runs, started over when it died midway); its completion happens inside ``guard()`` (the table lock under
    optimistic concurrency control, as Hudi's ``completeCompaction`` takes it). Returns it, and the table as listed
    inside ``guard()`` with the compaction completed."""
    def execute(current: Table, instant: Instant) -> ServiceRun:
        return ServiceRun((instant_time,), current.with_instant(_execute(current, instant, cfg, guard)))

    return run_planned(table, instant_time, "compaction", lambda _, i: i.action == COMPACTION, guard,
                       cfg.heartbeat_interval_ms, cfg.heartbeat_expiry_ms, execute)


def _execute(table: Table, instant: Instant, cfg: CompactionConfig, guard: Guard) -> Instant:
    instant_time = instant.timestamp
    timeline = table.timeline
    plan = timeline.read_plan(instant.with_state(State.REQUESTED))
    schema = table.schema
    data_schema = data_schema_of(schema)
    visible = frozenset(i.timestamp for i in timeline.completed() if i.timestamp < instant_time)
    stats = []
    file_sizes: dict[str, dict[str, int]] = {}  # per partition, listed once for all its operations
    for op in plan.get("operations") or ():
        stat = _compact_one(table, op, instant_time, schema, visible, cfg, file_sizes)
        if stat is not None:
            stats.append(stat)
    name = table.config.name
    extra = {"schema": to_avro_json(arrow_to_avro_schema(data_schema, f"{name}_record", f"hoodie.{name}"))}
    metadata = CommitMetadata("COMPACT", stats, extra, compacted=True)
    with guard():
        sync_commit(table, instant_time, metadata)
        completed = transition_to_completed(table, instant, metadata.to_json())
    delete_marker_dir(table.storage, instant_time)
    logger.info("Compaction %s wrote %d base files", instant_time, len(stats))
    return completed


def _compact_one(table: Table, op: dict, instant_time: str, schema: pa.Schema, visible: frozenset[str],
                 cfg: CompactionConfig, file_sizes: dict[str, dict[str, int]]) -> WriteStat | None:
    """The base file of ``op``'s slice merged; none when a slice of log files only merges to no record (Hudi's
    ``HoodieCompactor.compact`` writes nothing then: the group keeps its logs, which read as empty)."""
    started = time.monotonic()
    storage = table.storage
    partition = op.get("partitionPath") or ""
    if partition not in file_sizes:  # from the metadata table when it is on: Hudi's compactor lists no partition
        file_sizes[partition] = {f.name: f.size for f in table.listed_files([partition])[partition]}
    sizes = file_sizes[partition]
    logs = []
    for name in map(posixpath.basename, op.get("deltaFilePaths") or ()):
        if name not in sizes:
            raise FileNotFoundError(f"Log file {storage.uri_of(join(partition, name))} of compaction {instant_time} "
                                    "is missing")
        parsed = LogFileName.parse(name)
        logs.append(LogFile(name, parsed.file_id, parsed.instant_time, parsed.version, parsed.write_token,
                            sizes[name]))
    base_name = op.get("dataFilePath")
    base = BaseFile(posixpath.basename(base_name), op["fileId"], op["baseInstantTime"], 0) if base_name else None
    file_slice = FileSlice(partition, op["fileId"], op["baseInstantTime"], base, tuple(logs))
    merged = read_merged_slice(storage, file_slice, schema, visible, MergeRule.of(table.config))
    if base is None and merged.num_rows == 0:
        return None
    file_name = base_file_name(op["fileId"], UNKNOWN_WRITE_TOKEN, instant_time)
    if FILE_NAME_COLUMN in merged.column_names:
        merged = merged.set_column(merged.schema.get_field_index(FILE_NAME_COLUMN), FILE_NAME_COLUMN,
                                   pa.repeat(pa.scalar(file_name, pa.string()), merged.num_rows))
    keys = merged.column(RECORD_KEY_COLUMN)
    footer = footer_metadata(keys, new_filter_for(cfg.index, keys))
    create_marker(storage, instant_time, partition, file_name, "CREATE")
    tracking = index_tracking(table.config, cfg.metadata)
    written = write_base_file_with_footer(storage, join(partition, file_name), merged, footer, cfg.compression,
                                          table.config.record_key_fields,
                                          read_footer=tracking["column_stats_columns"] is not None)
    size = written.size
    fault_points.reach(fault_points.MID_COMPACTION, storage=storage, instant=instant_time,
                       path=join(partition, file_name))
    return WriteStat(
        fileId=op["fileId"],
        path=join(partition, file_name),
        partitionPath=partition,
        prevCommit=op["baseInstantTime"],
        numWrites=merged.num_rows,
        numUpdateWrites=merged.num_rows,
        totalWriteBytes=size,
        fileSizeInBytes=size,
        totalLogFilesCompacted=len(logs),
        totalLogSizeCompacted=sum(log.size for log in logs),
        totalUpdatedRecordsCompacted=merged.num_rows,
        **base_file_entries(written, schema, footer, tracking["column_stats_columns"], tracking["tracks_bloom_filters"]),
        runtimeStats={"totalScanTime": 0, "totalUpsertTime": int((time.monotonic() - started) * 1000),
                      "totalCreateTime": 0},
    )


def run_pending_compactions(table: Table, cfg: CompactionConfig, guard: Guard = nullcontext) -> ServiceRun:
    """Run every pending compaction but those another process is running (inflight, heartbeat alive)."""
    pending = [i.timestamp for i in table.timeline.instants if i.action == COMPACTION and not i.is_completed]
    return run_each(table, pending, lambda current, instant_time: execute_compaction(current, instant_time, cfg, guard))
