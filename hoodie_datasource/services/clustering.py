"""Clustering: rewriting small file slices into fewer, larger file groups whose records are sorted
(Hudi's replacecommit of operation ``CLUSTER``).

    schedule  the size-based plan (``services.clustering_plan``) as ``T.replacecommit.requested``
              (Avro ``HoodieRequestedReplaceMetadata``, operation type ``CLUSTER``); nothing to cluster, no instant
    execute   ``T.replacecommit.inflight``; each group (``cluster_group``: one task on Spark) reads its slices
              merged (base + logs, as a snapshot reads them), orders the records
              (``services.clustering_layout``) and writes new file groups of about
              ``hoodie.clustering.plan.strategy.target.file.max.bytes``; then, under the table lock, the
              planned slices are checked to be still the latest of their file groups, the metadata table is
              updated and ``T.replacecommit`` completes (``HoodieReplaceCommitMetadata``: the new files, and the
              file groups it replaces in ``partitionToReplaceFileIds``)

Records keep their ``_hoodie_commit_time`` and ``_hoodie_commit_seqno`` (Hudi's clustering preserves commit
metadata): an incremental pull over the clustering instant returns no row, and readers, time travel and the
cleaner treat the replaced file groups as they treat an overwrite's. Under an index kept outside the table (HBase,
``ClusteringConfig.index``: the options' index) the new file groups' keys are put there before the commit point, as
Hudi's clustering updates its index; a clustering run without the HBase index's options leaves HBase naming the
replaced file groups, whose keys an upsert then takes for new.

While a plan is pending, its file groups take no update (``hoodie.clustering.updates.strategy``, checked by the
writers: ``write.record_writer``), no compaction and no second clustering. A clustering that died midway is
started over by the next run (its partial files removed first); one whose slices a write changed meanwhile (an
allowed update, an overwrite) cannot complete and is rolled back (Hudi fails it as a write conflict).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie_datasource import fault_points
from hoodie_datasource.config.services_config import ClusteringConfig
from hoodie_datasource.errors import HoodieWriteConflictError, TimelineError
from hoodie_datasource.file_group.merged_reader import MergeRule, read_merged_slice
from hoodie_datasource.index.registry import index_for
from hoodie_datasource.metadata.sync import index_tracking, sync_commit
from hoodie_datasource.schema.avro_schema import arrow_to_avro_schema, to_avro_json
from hoodie_datasource.services.clustering_layout import layout_order
from hoodie_datasource.services.clustering_plan import clustering_plan, slice_paths
from hoodie_datasource.services.service_execution import Guard, run_each, run_planned
from hoodie_datasource.services.service_run import ServiceRun
from hoodie_datasource.storage.storage import Storage, join
from hoodie_datasource.table.file_group import BaseFile, FileSlice, LogFile
from hoodie_datasource.table.file_names import (
    UNKNOWN_WRITE_TOKEN,
    BaseFileName,
    LogFileName,
    base_file_name,
    new_file_id,
)
from hoodie_datasource.table.markers import create_marker, delete_marker_dir
from hoodie_datasource.table.meta_columns import FILE_NAME_COLUMN, RECORD_KEY_COLUMN, data_schema_of
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.avro_metadata import REQUESTED_REPLACE_METADATA, encode
from hoodie_datasource.timeline.commit_metadata import CommitMetadata, WriteStat
from hoodie_datasource.timeline.instant import REPLACE_COMMIT, Instant
from hoodie_datasource.timeline.instant_time import new_instant_time
from hoodie_datasource.timeline.timeline import CLUSTER_OPERATION, Timeline
from hoodie_datasource.timeline.transitions import create_requested, transition_to_completed
from hoodie_datasource.write.base_file_writer import footer_metadata, new_filter_for, write_base_file_with_footer
from hoodie_datasource.write.index_entries import base_file_entries, record_key_changes
from hoodie_datasource.write.rollback import rollback_pending
from hoodie_datasource.write.targets import WriteContext

logger = logging.getLogger(__name__)

SIZE_SAMPLE_ROWS = 20_000  # rows encoded to learn the bytes a record takes in a clustered file


def commits_since_last_clustering(timeline: Timeline) -> int:
    """Completed commits, deltacommits and replacecommits after the last completed clustering (all of them
    when there is none): what ``hoodie.clustering.inline.max.commits`` counts (``ClusteringPlanActionExecutor``)."""
    count = 0
    for instant in reversed(timeline.completed()):
        if is_clustering_commit(timeline, instant):
            break
        count += 1
    return count


def is_clustering_commit(timeline: Timeline, instant: Instant) -> bool:
    """A completed replacecommit of operation ``CLUSTER``."""
    return instant.action == REPLACE_COMMIT and instant.is_completed and str(
        timeline.read_metadata(instant).get("operationType") or "").upper() == CLUSTER_OPERATION


def pending_clustering_instants(timeline: Timeline) -> list[Instant]:
    """The pending clusterings (requested or inflight), oldest first."""
    return [i for i in timeline.pending() if timeline.clustering_plan(i) is not None]


def schedule_clustering(table: Table, cfg: ClusteringConfig) -> ServiceRun:
    """Write a clustering plan: its instant time (none when nothing is worth clustering), and the table after."""
    timeline = table.timeline
    held = set(timeline.pending_clustering()) | set(timeline.pending_compactions())
    plan = clustering_plan(table, cfg, held)
    if plan is None:
        logger.info("Nothing to cluster in %s", table.uri)
        return ServiceRun((), table)
    instant_time = new_instant_time(timeline.last_instant_time())
    requested = create_requested(table, instant_time, REPLACE_COMMIT, encode(REQUESTED_REPLACE_METADATA, {
        "operationType": CLUSTER_OPERATION, "clusteringPlan": plan, "extraMetadata": None, "version": 1}))
    fault_points.reach(fault_points.AFTER_CLUSTERING_SCHEDULED, storage=table.storage, instant=instant_time)
    groups = plan["inputGroups"]
    logger.info("Scheduled clustering %s of %d file groups in %d groups", instant_time,
                sum(len(g["slices"]) for g in groups), len(groups))
    return ServiceRun((instant_time,), table.with_instant(requested))


@dataclass(frozen=True)
class GroupTask:
    """One clustering group's work (picklable: a Spark task runs it)."""

    storage: Storage
    merge_rule: MergeRule
    schema: pa.Schema  # what the slices read as: meta columns and data columns
    instant: str
    index: int  # the group's place in the plan: names its new file groups
    group: dict[str, Any]  # the plan's HoodieClusteringGroup
    visible: frozenset[str]  # completed writes whose log blocks count
    cfg: ClusteringConfig
    tracking: dict[str, Any]  # what the metadata table's index partitions take of each file (``index_tracking``)
    record_key_fields: tuple[str, ...]

    def run(self, token: str) -> list[WriteStat]:
        return cluster_group(self, token)


def _plan_slice(info: dict[str, Any]) -> FileSlice:
    partition, paths = slice_paths(info)
    names = [p.rsplit("/", 1)[-1] for p in paths]
    base, logs = None, []
    for name in names:
        parsed = BaseFileName.parse(name)
        if parsed is not None:
            base = BaseFile(name, info["fileId"], parsed.instant_time, 0)
            continue
        log = LogFileName.parse(name)
        if log is None:
            raise TimelineError(f"Clustering plan names {name!r}, neither a base nor a log file of file group "
                                f"{info['fileId']}")
        logs.append(LogFile(name, log.file_id, log.instant_time, log.version, log.write_token, 0))
    base_instant = base.instant_time if base is not None else (logs[0].instant_time if logs else "")
    return FileSlice(partition, info["fileId"], base_instant, base, tuple(logs))


def _bytes_per_row(records: pa.Table, compression: str) -> float:
    """The bytes a record of ``records`` (in the order they are written) takes in a parquet file."""
    sample = records.slice(0, SIZE_SAMPLE_ROWS)
    sink = pa.BufferOutputStream()
    pq.write_table(sample, sink, compression=compression)
    return max(1.0, sink.getvalue().size / max(sample.num_rows, 1))


def cluster_group(task: GroupTask, token: str) -> list[WriteStat]:
    """Read the group's slices, order their records, write them into new file groups of about the target size."""
    started = time.monotonic()
    slices = [_plan_slice(info) for info in task.group.get("slices") or ()]
    partition = slices[0].partition_path if slices else ""
    parts = [read_merged_slice(task.storage, s, task.schema, task.visible, task.merge_rule) for s in slices]
    records = pa.concat_tables(parts) if parts else task.schema.empty_table()
    cfg = task.cfg
    records = records.take(pa.array(layout_order(records, cfg.sort_columns, cfg.layout_strategy,
                                                 cfg.curve_build_method, cfg.curve_sample_size)))
    stats: list[WriteStat] = []
    if records.num_rows == 0:  # every record deleted by the logs: the groups are replaced by nothing
        return stats
    per_row = _bytes_per_row(records, cfg.compression)
    footer = 0  # a file's footer entries (its bloom filter): the bytes a file takes whatever its rows
    at = 0
    while at < records.num_rows:
        rows = max(1, int(max(cfg.target_file_max_bytes - footer, cfg.target_file_max_bytes // 2) / per_row))
        if records.num_rows - at < rows * 1.2:  # no sliver of a last file: the rest goes into this one
            rows = records.num_rows - at
        stat, footer = _write_file(task, partition, records.slice(at, rows), len(stats), token, started)
        stats.append(stat)
        at += rows
        per_row = max(1.0, (stat.fileSizeInBytes - footer) / rows)  # the file written tells the size better
    return stats


def _write_file(task: GroupTask, partition: str, records: pa.Table, number: int, token: str,
                started: float) -> tuple[WriteStat, int]:
    """The write stat of a new file group holding ``records``, and the bytes of its footer entries."""
    file_id = new_file_id(task.instant, partition, task.index * 1_000_000 + number)
    file_name = base_file_name(file_id, token, task.instant)
    if FILE_NAME_COLUMN in records.column_names:
        records = records.set_column(records.schema.get_field_index(FILE_NAME_COLUMN), FILE_NAME_COLUMN,
                                     pa.repeat(pa.scalar(file_name, pa.string()), records.num_rows))
    keys = records.column(RECORD_KEY_COLUMN)
    footer = footer_metadata(keys, new_filter_for(task.cfg.index, keys))
    path = join(partition, file_name)
    create_marker(task.storage, task.instant, partition, file_name, "CREATE")
    column_stats = task.tracking["column_stats_columns"]
    written = write_base_file_with_footer(task.storage, path, records, footer, task.cfg.compression,
                                          task.record_key_fields, read_footer=column_stats is not None)
    fault_points.reach(fault_points.MID_CLUSTERING, storage=task.storage, instant=task.instant, path=path)
    key_ctx = WriteContext(task.storage, task.instant, records.schema, task.cfg.index, task.cfg.compression, None,
                           False, False, tracks_record_keys=task.tracking["tracks_record_keys"])
    return WriteStat(
        fileId=file_id, path=path, partitionPath=partition, prevCommit="null",
        numWrites=records.num_rows, numInserts=records.num_rows,
        totalWriteBytes=written.size, fileSizeInBytes=written.size,
        record_keys=record_key_changes(key_ctx, keys),
        **base_file_entries(written, task.schema, footer, column_stats, task.tracking["tracks_bloom_filters"]),
        runtimeStats={"totalScanTime": 0, "totalUpsertTime": 0,
                      "totalCreateTime": int((time.monotonic() - started) * 1000)},
    ), sum(len(v) for v in footer.values())


# runs the groups' tasks and returns every write stat: in this process by default, or on Spark
GroupRunner = Callable[[Sequence[GroupTask]], list[WriteStat]]


def run_here(tasks: Sequence[GroupTask]) -> list[WriteStat]:
    """Every group in this process, one after the other (the local engine)."""
    return [stat for task in tasks for stat in task.run(UNKNOWN_WRITE_TOKEN)]


def execute_clustering(table: Table, instant_time: str, cfg: ClusteringConfig, guard: Guard = nullcontext,
                       runner: GroupRunner = run_here) -> ServiceRun:
    """Run a scheduled clustering (``services.service_execution.run_planned``: started once, heartbeat while it
    runs, started over when it died midway); its completion happens inside ``guard()`` (the table lock under
    optimistic concurrency control). Returns it, and the table as listed there with the clustering completed."""
    def execute(current: Table, instant: Instant) -> ServiceRun:
        return ServiceRun((instant_time,), _execute(current, instant, cfg, guard, runner))

    return run_planned(table, instant_time, "clustering", lambda t, i: t.clustering_plan(i) is not None, guard,
                       cfg.heartbeat_interval_ms, cfg.heartbeat_expiry_ms, execute)


def _execute(table: Table, instant: Instant, cfg: ClusteringConfig, guard: Guard, runner: GroupRunner) -> Table:
    instant_time = instant.timestamp
    timeline = table.timeline
    plan = timeline.clustering_plan(instant) or {}
    schema = table.schema
    visible = frozenset(i.timestamp for i in timeline.completed() if i.timestamp < instant_time)
    index = index_for(cfg.index)
    tracking = index_tracking(table.config, cfg.metadata)
    # an index kept outside the table (HBase) learns the new file groups' keys, as Hudi's clustering updates it
    tracking["tracks_record_keys"] = tracking["tracks_record_keys"] or index.tracks_written_keys
    tasks = [GroupTask(table.storage, MergeRule.of(table.config), schema, instant_time, n, group, visible, cfg,
                       tracking, table.config.record_key_fields)
             for n, group in enumerate(plan.get("inputGroups") or ())]
    stats = runner(tasks)
    replaced: dict[str, list[str]] = {}
    for group in plan.get("inputGroups") or ():
        for info in group.get("slices") or ():
            replaced.setdefault(info.get("partitionPath") or "", []).append(info["fileId"])
    name = table.config.name
    data_schema = data_schema_of(schema)
    extra = {"schema": to_avro_json(arrow_to_avro_schema(data_schema, f"{name}_record", f"hoodie.{name}"))}
    metadata = CommitMetadata(CLUSTER_OPERATION, sorted(stats, key=lambda s: (s.partitionPath, s.fileId)), extra,
                              replaced_file_ids={p: sorted(ids) for p, ids in sorted(replaced.items())})
    if index.tracks_written_keys:  # before the commit point, as a write's (``updateIndex`` of the clustering)
        index.update_location(stats, instant_time)
    fault_points.reach(fault_points.BEFORE_COMMIT, storage=table.storage, instant=instant_time)
    with guard():
        now = table.refresh()
        changed = _changed_slices(now, plan)
        if changed:
            rollback_pending(now, instant)
            raise HoodieWriteConflictError(
                f"Clustering {instant_time} of {table.uri} was rolled back: writes changed file groups it planned "
                f"to rewrite since it was scheduled ({', '.join(changed[:5])}{' ...' if len(changed) > 5 else ''})")
        sync_commit(now, instant_time, metadata)
        completed = transition_to_completed(table, instant, metadata.to_json())
    delete_marker_dir(table.storage, instant_time)
    logger.info("Clustering %s rewrote %d file groups into %d files", instant_time,
                sum(len(ids) for ids in replaced.values()), len(stats))
    return now.with_instant(completed)


def _changed_slices(table: Table, plan: dict[str, Any]) -> list[str]:
    """The planned file groups whose latest slice is no longer the one planned (a write updated them, an
    overwrite replaced them): the clustering would lose those changes (Hudi's conflict check fails it)."""
    planned = {}
    for group in plan.get("inputGroups") or ():
        for info in group.get("slices") or ():
            partition, paths = slice_paths(info)
            planned[(partition, info["fileId"])] = sorted(p.rsplit("/", 1)[-1] for p in paths)
    partitions = sorted({p for p, _ in planned})
    latest = {(s.partition_path, s.file_id): sorted(s.file_names)
              for s in table.file_system_view(partitions).latest_file_slices(partitions=partitions,
                                                                             file_ids=set(planned))}
    return sorted(f"{p or '<root>'}/{f}" for (p, f), names in planned.items() if latest.get((p, f)) != names)


def run_pending_clustering(table: Table, cfg: ClusteringConfig, guard: Guard = nullcontext,
                           runner: GroupRunner = run_here) -> ServiceRun:
    """Run every pending clustering but those another process is running (inflight, heartbeat alive)."""
    return run_each(table, [i.timestamp for i in pending_clustering_instants(table.timeline)],
                    lambda current, instant_time: execute_clustering(current, instant_time, cfg, guard, runner))


@dataclass(frozen=True)
class ClusteringPlanInfo:
    """A pending clustering, as ``HoodieTable.pending_clustering`` and ``CALL show_clustering`` show it."""

    instant_time: str
    input_groups: int
    input_files: int  # base and log files the plan reads
    input_bytes: int  # their bytes, as listed now
    partitions: tuple[str, ...]
    state: str  # REQUESTED or INFLIGHT


def pending_clustering_info(table: Table) -> list[ClusteringPlanInfo]:
    """Every pending clustering of ``table``, oldest first (one listing of the partitions they cluster)."""
    found = [(i, table.timeline.clustering_plan(i) or {}) for i in pending_clustering_instants(table.timeline)]
    paths = {i.timestamp: [slice_paths(info) for g in plan.get("inputGroups") or () for info in g.get("slices") or ()]
             for i, plan in found}
    partitions = sorted({p for planned in paths.values() for p, _ in planned})
    sizes = {f.path: f.size for files in table.listed_files(partitions).values() for f in files} if partitions else {}
    return [ClusteringPlanInfo(
        instant.timestamp, len(plan.get("inputGroups") or ()), sum(len(files) for _, files in paths[instant.timestamp]),
        sum(sizes.get(f, 0) for _, files in paths[instant.timestamp] for f in files),
        tuple(sorted({p for p, _ in paths[instant.timestamp]})), instant.state.name) for instant, plan in found]
