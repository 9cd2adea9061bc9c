"""Tag, plan and write a set of records: the work of one write, independent of where it runs.

A ``RecordWriter`` holds everything needed (the write context, config, the table as of the
write's start, the average record size) and is picklable, so the same code runs in the driver's
process (local engine) and inside a Spark task that owns one partition's records.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.config.write_config import WriteConfig
from hoodie_datasource.errors import ClusteringUpdateError
from hoodie_datasource.index.index import Index, TagScope, unlocated
from hoodie_datasource.index.key_ranges import FileKeyRange
from hoodie_datasource.index.lookup import IndexCounts
from hoodie_datasource.storage.storage import FileInfo
from hoodie_datasource.table.meta_columns import FILE_ID_COLUMN, LOCATION_PARTITION_COLUMN, PARTITION_PATH_COLUMN
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.commit_metadata import WriteStat
from hoodie_datasource.write import routing
from hoodie_datasource.write.append_handle import PendingLog, encode_log_file, write_log_files
from hoodie_datasource.write.bulk_insert import SAMPLE_ROWS, encoded_record_size
from hoodie_datasource.write.file_group_writer import write_file_group
from hoodie_datasource.write.partitioner import InsertPlan, plan_inserts
from hoodie_datasource.write.stage_timer import StageTimer
from hoodie_datasource.write.targets import APPEND, CREATE, MERGE, WriteContext, WriteTarget

PENDING_LOG_BYTES = 64 << 20  # encoded log files a task holds before it creates them


@dataclass(frozen=True)
class RecordWriter:
    ctx: WriteContext
    config: WriteConfig
    table: Table  # as the write started
    avg_record_size: int
    new_table: bool
    index: Index
    scope: TagScope  # what the index needs of this write to tag its records
    # the table's files by directory, listed by the driver at the start of the write (None: tasks list
    # the partitions they write)
    listed: Mapping[str, tuple[FileInfo, ...]] | None = None
    # nothing tells the bytes a record takes (a new table's first write, no hoodie.copyonwrite.record.size.estimate,
    # no sample measured by the driver): ``route`` measures them on the records it routes, wherever it runs
    measures_record_size: bool = False

    def key_ranges(self, partitions: Iterable[str] | None) -> list[FileKeyRange]:
        """The latest base files in ``partitions`` (all when None), as the index reads them
        (``Index.file_ranges``: their min/max keys, or only their file ids)."""
        if self.new_table:
            return []
        if partitions is None:
            view = self.table.file_system_view()
        else:  # list only the partitions asked for (a task owns one): no walk of the whole table
            view = self.table.file_system_view(list(partitions), self.listed)
        slices = view.latest_file_slices()
        files = self.index.file_ranges(self.ctx.storage, slices)
        if not self.config.is_mor:
            return files
        pending = self._pending_compactions()  # logs written while a compaction is pending are named after it
        return [replace(f, next_log_version=view.next_log_version(
            f.partition, f.file_id, pending.get((f.partition, f.file_id), f.base_instant))) for f in files]

    def _pending_compactions(self) -> dict[tuple[str, str], str]:
        return self.table.timeline.pending_compactions() if self.config.is_mor else {}

    def refuse_clustered_updates(self, tagged: pa.Table) -> pa.Table:
        """``tagged``, when none of its records is of a file group a pending clustering will rewrite; else Hudi's
        ``SparkRejectUpdateStrategy`` (``hoodie.clustering.updates.strategy``'s default) fails the write before
        anything is written."""
        held = self.table.timeline.pending_clustering()
        if not held or not self.config.clustering_rejects_updates:
            return tagged
        located = tagged.filter(pc.is_valid(tagged.column(FILE_ID_COLUMN)))
        if located.num_rows == 0:
            return tagged
        groups = pc.unique(pc.binary_join_element_wise(located.column(PARTITION_PATH_COLUMN),
                                                       located.column(FILE_ID_COLUMN), "\x00")).to_pylist()
        hit = sorted(tuple(g.split("\x00")) for g in groups if tuple(g.split("\x00")) in held)
        if hit:
            names = ", ".join(f"{p or '<root>'}/{f}" for p, f in hit[:5]) + (" ..." if len(hit) > 5 else "")
            instants = ", ".join(sorted({held[g] for g in hit}))
            raise ClusteringUpdateError(
                f"Not allowed to update the file groups {names} of {self.ctx.storage.uri}: pending clustering "
                f"{instants} will rewrite them (hoodie.clustering.updates.strategy=SparkRejectUpdateStrategy). Run "
                "the clustering first, or write with hoodie.clustering.updates.strategy=SparkAllowUpdateStrategy")
        return tagged

    def insert_plan(self, insert_counts: Mapping[str, int], files: list[FileKeyRange]) -> InsertPlan:
        """Inserts fill small files (merge-on-read: only those without log files, and at most
        ``hoodie.merge.small.file.group.candidates.limit`` of them a partition), then new groups."""
        pending = self._pending_compactions()
        clustering = self.table.timeline.pending_clustering()  # Hudi's UpsertPartitioner.filterSmallFilesInClustering
        packable = [] if not self.config.operation.packs_small_files else [
            f for f in files if not (self.config.is_mor and (f.has_logs or (f.partition, f.file_id) in pending))
            and (f.partition, f.file_id) not in clustering]
        sizing = self.config.sizing
        return plan_inserts(insert_counts, packable, self.avg_record_size, sizing, self.ctx.instant,
                            candidates=sizing.small_file_candidates if self.config.is_mor else None)

    def targets(self, files: list[FileKeyRange], plan: InsertPlan) -> dict[tuple[str, str], WriteTarget]:
        """Every file group this write may touch, keyed by (partition, fileId), with how to write it:
        updates rewrite the base file (COW) or append to its log (MOR); a file group that takes
        inserts is rewritten (small-file packing); new file groups are created. A file group being
        compacted takes new log files in the slice the compaction starts."""
        existing_io = APPEND if self.config.is_mor else MERGE
        pending = self._pending_compactions()
        targets = {}
        for f in files:
            base_instant = pending.get((f.partition, f.file_id), f.base_instant)
            logs = tuple(n for n in f.log_files if n.startswith(f".{f.file_id}_{base_instant}.log."))
            targets[(f.partition, f.file_id)] = WriteTarget(f.partition, f.file_id, f.base_file, base_instant,
                                                            existing_io, f.size, f.next_log_version, logs)
        for partition, buckets in plan.by_partition.items():
            for target in buckets.targets:
                io_type = MERGE if target.base_file is not None else CREATE
                targets[(partition, target.file_id)] = replace(target, io_type=io_type)
        return targets

    def tag(self, records: pa.Table) -> tuple[pa.Table, list[FileKeyRange], IndexCounts | None]:
        """Every record's current file (null for an insert), the files of its partitions (of the table: a global
        index), and the index work it took (None when no lookup ran). ``records`` hold every record of their keys;
        a key a global index found in another partition moves or is updated there (``routing.partition_changes``)."""
        partitions = None if self.index.is_global else pc.unique(records.column(PARTITION_PATH_COLUMN)).to_pylist()
        files = self.key_ranges(partitions)
        if not self.index.requires_tagging(self.config.operation):
            return unlocated(records), files, None
        tagged, counts = self.index.tag(records, files, self.scope)
        return self.refuse_clustered_updates(routing.partition_changes(tagged, self.index)), files, counts

    def route(self, tagged: pa.Table, files: list[FileKeyRange]
              ) -> tuple[pa.Table, dict[tuple[str, str], WriteTarget], dict[str, int]]:
        """The workload profile (inserts per partition), the insert plan, and every record's target file id."""
        counts = routing.insert_counts(tagged)
        plan = self._sized_by(tagged).insert_plan(counts, files)
        return routing.route(tagged, plan), self.targets(files, plan), counts

    def _sized_by(self, tagged: pa.Table) -> RecordWriter:
        """This writer, with the bytes a record takes measured on the first ``SAMPLE_ROWS`` of ``tagged`` when it
        ``measures_record_size``: a Spark task owning its partitions sizes its new files by its own records, so no
        job reads the input for a sample first (a read of an input of many small DataFrames costs seconds)."""
        if not self.measures_record_size or tagged.num_rows == 0:
            return self
        sample = tagged.slice(0, SAMPLE_ROWS).drop_columns([FILE_ID_COLUMN, LOCATION_PARTITION_COLUMN])
        size = encoded_record_size(self.ctx, sample, self.config.sizing.max_file_size)
        return replace(self, avg_record_size=max(1, round(size)), measures_record_size=False)

    def write_records(self, records: pa.Table, token: str, task_partition: int, timer: StageTimer) -> list[WriteStat]:
        """Tag, plan and write records that hold every record of their partitions (one task's share of a
        write), timing the stages ``tag``, ``profile`` and ``write`` and counting the index work (``timer``)."""
        tagged, files, counts = self.tag(records)
        timer.lap("tag")
        if counts is not None:
            timer.count(counts.as_dict())
        routed, targets, _ = self.route(tagged, files)
        timer.lap("profile")
        stats = self.write_groups(routed, targets, token, task_partition)
        timer.lap("write")
        return stats

    def write_groups(self, routed: pa.Table, targets: Mapping[tuple[str, str], WriteTarget], token: str,
                     task_partition: int) -> list[WriteStat]:
        """Write every file group ``routed`` records go to, one at a time; log appends (merge-on-read) are
        encoded one at a time and their files created together (``append_handle.write_log_files``), every
        ``PENDING_LOG_BYTES`` of them."""
        if routed.num_rows == 0:
            return []
        part_col = routed.column(PARTITION_PATH_COLUMN).combine_chunks()
        file_col = routed.column(FILE_ID_COLUMN).combine_chunks()
        encoded = pc.dictionary_encode(pc.binary_join_element_wise(part_col, file_col, "\x00"))
        codes = encoded.indices.to_numpy(zero_copy_only=False)
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(len(encoded.dictionary) + 1))
        grouped = routed.take(pa.array(order))  # one take, then a zero-copy slice per file group
        stats: list[WriteStat] = []
        logs: list[PendingLog] = []
        pending_bytes = 0
        for code, joined in enumerate(encoded.dictionary.to_pylist()):
            partition, file_id = joined.split("\x00")
            rows = grouped.slice(bounds[code], bounds[code + 1] - bounds[code])
            target = targets.get((partition, file_id)) or WriteTarget(partition, file_id)
            if target.io_type == APPEND:
                log = encode_log_file(self.ctx, target, rows, token, task_partition)
                if log is not None:
                    logs.append(log)
                    pending_bytes += len(log.content)
                if pending_bytes >= PENDING_LOG_BYTES:
                    stats += write_log_files(self.ctx, logs)
                    logs, pending_bytes = [], 0
                continue
            stat = write_file_group(self.ctx, target, rows, token, task_partition)
            if stat is not None:
                stats.append(stat)
        return stats + write_log_files(self.ctx, logs)
