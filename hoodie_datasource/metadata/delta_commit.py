"""One deltacommit of the metadata table: records appended to its file groups as HFile log blocks.

Each touched file group gets a new log file version on its latest slice, holding one HFile data block of the
group's records in key order (Hudi's ``HoodieAppendHandle`` with ``HoodieHFileDataBlock``, where the store
cannot append: ``HoodieLogFormatWriter`` rolls over to a new version). Records are routed to a file group as
Hudi's ``prepRecords`` does: ``files`` has one; the others by ``mapRecordKeyToFileGroupIndex`` over the
partition's file groups in file-id order. Markers first, then the log files, then the completed instant, so a
crash leaves a pending instant that ``discard_pending`` removes file by file.

Every change to the metadata table happens under the data table's lock (or by its single writer), so an
instant found pending there belongs to a writer that died: ``discard_pending`` removes it (its files and
instant files) before anything else is written, as Hudi's metadata writer rolls back failed writes first.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from hoodie_datasource import fault_points
from hoodie_datasource.config.keys import METADATA_ENABLE
from hoodie_datasource.errors import CorruptFileError
from hoodie_datasource.log.delete_block import encode_delete_block
from hoodie_datasource.log.hfile_block import encode_hfile_data_block
from hoodie_datasource.log.log_format import encode_log_file_content
from hoodie_datasource.metadata.keys import file_group_indexes
from hoodie_datasource.metadata.layout import PartitionSlices, latest_slices
from hoodie_datasource.metadata.records import KEY_FIELD, METADATA_RECORD_SCHEMA_JSON, MetadataPartition, encode_records
from hoodie_datasource.storage.storage import join
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.file_names import UNKNOWN_WRITE_TOKEN, LogFileName
from hoodie_datasource.table.instant_rollback import finish_rollback
from hoodie_datasource.table.markers import create_markers, delete_marker_dir, marked_files
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.commit_metadata import CommitMetadata, WriteStat, write_stats_of
from hoodie_datasource.timeline.instant import DELTA_COMMIT, ROLLBACK, Instant
from hoodie_datasource.timeline.transitions import (
    create_requested,
    delete_pending_files,
    transition_to_completed,
    transition_to_inflight,
)

logger = logging.getLogger(__name__)

UPSERT_PREPPED = "UPSERT_PREPPED"  # the operation of every metadata-table deltacommit but a partition's first


@dataclass(frozen=True)
class PartitionRecords:
    """One metadata-table partition's change: ``records`` (``records.RECORDS_SCHEMA``, each key once) upserted,
    and ``deleted`` keys removed (a record-index key whose record was deleted: Hudi writes it as an
    ``EmptyHoodieRecordPayload``, which its append handle puts in a DELETE block)."""

    partition: MetadataPartition
    records: pa.Table
    deleted: pa.Array = field(default_factory=lambda: pa.array([], pa.string()))

    @property
    def keys(self) -> pa.Array:
        return pa.concat_arrays([self.records.column(KEY_FIELD).combine_chunks(), self.deleted])

    def __len__(self) -> int:
        return self.records.num_rows + len(self.deleted)


def discard_pending(mdt: Table) -> Table:
    """Clear every pending instant of the metadata table (a writer died midway): a rollback is finished from
    its plan (its target's files are only found there), any other instant removed: the files its markers
    name, its markers, then its instant files. The table after, listed again when anything was pending."""
    pending = mdt.timeline.pending()
    storage = mdt.storage
    for instant in pending:
        if instant.action == ROLLBACK:
            finish_rollback(mdt, instant)
            continue
        _remove(mdt, instant, marked_files(storage, instant.timestamp))
    return mdt.refresh() if pending else mdt


def _remove(mdt: Table, instant: Instant, files: list[str]) -> None:
    """Delete an instant of the metadata table no reader takes into account: its files, its markers, then its
    instant files (so a crash midway leaves it to be removed again)."""
    storage = mdt.storage
    for path in files:
        storage.delete(path)
    delete_marker_dir(storage, instant.timestamp)
    if instant.is_completed:
        storage.delete(mdt.timeline.path_of(instant))
    delete_pending_files(mdt, instant)
    logger.info("Removed %s %s of the metadata table %s", instant.action, instant.timestamp, storage.uri)


def _routed(keys: pa.Array, slices: PartitionSlices) -> dict[int, np.ndarray]:
    """Positions of ``keys`` per file-group index of ``slices``."""
    if len(slices) == 1:
        return {0: np.arange(len(keys))}
    groups = file_group_indexes(keys, len(slices))
    order = np.argsort(groups, kind="stable")
    bounds = np.flatnonzero(np.diff(groups[order])) + 1
    return {int(groups[part[0]]): part for part in np.split(order, bounds) if len(part)}


def _log_file(file_slice: FileSlice, instant_time: str, records: pa.Table, deleted: pa.Array
              ) -> tuple[str, bytes, WriteStat]:
    """The slice's next log file version: an HFile data block of ``records`` and a DELETE block of ``deleted``
    keys (each block only when it has any)."""
    started = time.monotonic()
    blocks = []
    if records.num_rows:
        keys, values = encode_records(records)
        blocks.append(encode_hfile_data_block(keys, values, instant_time, METADATA_RECORD_SCHEMA_JSON))
    if len(deleted):
        partitions = pa.array(np.full(len(deleted), file_slice.partition_path), pa.string())
        blocks.append(encode_delete_block(deleted, partitions, instant_time,
                                          avro_schema=METADATA_RECORD_SCHEMA_JSON))
    version = max((log.version for log in file_slice.log_files), default=0) + 1
    name = LogFileName(file_slice.file_id, file_slice.base_instant, version, UNKNOWN_WRITE_TOKEN).name()
    content = encode_log_file_content(blocks)
    stat = WriteStat(
        fileId=file_slice.file_id, path=join(file_slice.partition_path, name),
        partitionPath=file_slice.partition_path, prevCommit=file_slice.base_instant,
        numWrites=records.num_rows, numDeletes=len(deleted), numUpdateWrites=records.num_rows,
        totalWriteBytes=len(content), fileSizeInBytes=len(content),
        totalLogRecords=records.num_rows + len(deleted), totalLogBlocks=len(blocks),
        runtimeStats={"totalScanTime": 0, "totalUpsertTime": int((time.monotonic() - started) * 1000),
                      "totalCreateTime": 0},
        logVersion=version, logOffset=0, baseFile=file_slice.base_file.name if file_slice.base_file else "",
        logFiles=[*(log.name for log in file_slice.log_files), name],
    )
    return name, content, stat


def metadata_commit_extra() -> dict[str, str]:
    """The ``extraMetadata`` of every metadata-table commit: the record schema, as Hudi writes it."""
    return {"schema": METADATA_RECORD_SCHEMA_JSON}


def write_delta_commit(mdt: Table, instant_time: str, records: list[PartitionRecords]) -> Table:
    """The deltacommit ``instant_time`` of ``records``; the metadata table after it. A deltacommit of that
    time completed there by an attempt that died before its data instant completed (a compaction, clean or
    rollback run again) is removed first, as Hudi's ``commitInternal`` rolls it back: no reader takes it
    into account until the data instant completes, and this attempt's files may differ (a pending one was
    removed by ``discard_pending`` already)."""
    existing = mdt.timeline.find(instant_time)
    if existing is not None:
        written = [s["path"] for s in write_stats_of(mdt.timeline.read_metadata(existing)) if s.get("path")]
        _remove(mdt, existing, written)
        mdt = mdt.refresh()
    requested = create_requested(mdt, instant_time, DELTA_COMMIT)
    inflight = transition_to_inflight(mdt, requested)
    storage = mdt.storage
    files: list[tuple[str, str, bytes]] = []
    stats: list[WriteStat] = []
    for partition_records in records:
        if not len(partition_records):
            continue
        slices = latest_slices(mdt, partition_records.partition)
        if not len(slices):
            raise CorruptFileError(
                f"The metadata table's partition {slices.partition} at {storage.uri} has no file group; rebuild the "
                f"metadata table (a write with {METADATA_ENABLE.key}=false deletes it)")
        upserts = partition_records.records.num_rows
        for index, positions in sorted(_routed(partition_records.keys, slices).items()):
            name, content, stat = _log_file(
                slices.slices[index], instant_time, partition_records.records.take(positions[positions < upserts]),
                partition_records.deleted.take(positions[positions >= upserts] - upserts))
            files.append((slices.partition, name, content))
            stats.append(stat)
    create_markers(storage, instant_time, [(partition, name, "APPEND") for partition, name, _ in files])
    storage.create_all_once([(join(partition, name), content) for partition, name, content in files])
    fault_points.reach(fault_points.METADATA_BEFORE_COMMIT, storage=storage, instant=instant_time)
    metadata = CommitMetadata(UPSERT_PREPPED, stats, metadata_commit_extra())
    completed = transition_to_completed(mdt, inflight, metadata.to_json())
    delete_marker_dir(storage, instant_time)
    logger.info("Metadata table %s: deltacommit %s of %d log files", storage.uri, instant_time, len(files))
    return mdt.with_instant(completed)

