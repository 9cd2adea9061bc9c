"""Keeping the metadata table true: each data instant's change recorded there as a deltacommit of the same
instant time, before the data instant completes (Hudi's ``HoodieBackedTableMetadataWriter.update`` and
``updateFromWriteStatuses``, called by its write client under the table lock before ``saveAsComplete``).

Readers take a metadata-table deltacommit into account only once the data instant of its time completed
(``HoodieTableMetadataUtil.getValidInstantTimestamps``): a writer dying between the two leaves a deltacommit
no reader uses, which the data instant's rollback undoes (``write.rollback``).

Which partitions a change goes to is what ``hoodie.properties`` listed as ready when the change started (the
table's config, read under the table lock). No other writer can have built a partition since: a partition is
built only while no data instant is pending, and this change's is. One dropped since (by a writer with its
option off) makes the change fail before its commit point (its metadata-table files are gone), never commit
unrecorded.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource import fault_points
from hoodie_datasource.config.metadata_config import MetadataConfig
from hoodie_datasource.config.table_config import TableConfig
from hoodie_datasource.errors import CorruptFileError, LockError, MetadataTableError, TableNotFoundError
from hoodie_datasource.metadata.delta_commit import PartitionRecords, discard_pending, write_delta_commit
from hoodie_datasource.metadata.file_changes import FileChanges, of_clean, of_commit, of_deleted
from hoodie_datasource.metadata.indexed_columns import indexed_columns
from hoodie_datasource.metadata.instant_times import rollback_time
from hoodie_datasource.metadata.layout import latest_compaction, metadata_storage
from hoodie_datasource.metadata.reader import TIMELINE_TIMEZONE_KEY, MetadataTableReader
from hoodie_datasource.metadata.records import (
    MetadataPartition,
    bloom_filter_records,
    column_stats_records,
    files_records,
    partition_list_record,
    record_index_records,
    wrap_values,
)
from hoodie_datasource.storage.parquet import read_parquet
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.instant_rollback import rollback_files
from hoodie_datasource.table.meta_columns import RECORD_KEY_COLUMN
from hoodie_datasource.table.metadata_table import PARTITIONS_KEY, ready_partitions
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.commit_metadata import CommitMetadata, write_stats_of
from hoodie_datasource.timeline.instant import DELTA_COMMIT
from hoodie_datasource.timeline.written_keys import written_keys

logger = logging.getLogger(__name__)

_EMPTY_STATS = pa.table({"partition": pa.array([], pa.string()), "file_name": pa.array([], pa.string()),
                         "column_name": pa.array([], pa.string()), "min_value": wrap_values(pa.array([], pa.null())),
                         "max_value": wrap_values(pa.array([], pa.null())), "value_count": pa.array([], pa.int64()),
                         "null_count": pa.array([], pa.int64()), "total_size": pa.array([], pa.int64()),
                         "total_uncompressed_size": pa.array([], pa.int64()), "is_deleted": pa.array([], pa.bool_())})

Guard = Callable[[], AbstractContextManager[object]]  # the table lock, for a caller that does not hold it


def ready_metadata_partitions(config: TableConfig) -> list[MetadataPartition]:
    """The metadata table's partitions ``hoodie.properties`` lists as ready, in ``MetadataPartition`` order."""
    ready = set(ready_partitions(config))
    return [p for p in MetadataPartition if p.path in ready]


def index_tracking(config: TableConfig, cfg: MetadataConfig) -> dict[str, Any]:
    """What the write tasks of a table (``config``: its ready partitions) collect for the metadata table's index
    partitions (``write.targets.WriteContext``): the record keys, the column statistics of ``cfg``'s columns
    (every one when it names none), the bloom filters."""
    ready = ready_metadata_partitions(config)
    return {"tracks_record_keys": MetadataPartition.RECORD_INDEX in ready,
            "column_stats_columns": cfg.column_stats_columns if MetadataPartition.COLUMN_STATS in ready else None,
            "tracks_bloom_filters": MetadataPartition.BLOOM_FILTERS in ready}


def open_metadata_table(storage: Storage) -> Table:
    """The metadata table of the data table at ``storage``, its pending instants removed (a writer that died
    midway left them: every writer of it holds the data table's lock)."""
    try:
        mdt = Table.load(metadata_storage(storage))
    except TableNotFoundError:
        raise CorruptFileError(
            f"{storage.uri} lists metadata-table partitions in {PARTITIONS_KEY} but has no metadata table "
            f"(.hoodie/metadata/.hoodie/hoodie.properties); clear {PARTITIONS_KEY} or write with "
            f"hoodie.metadata.enable=false once to delete what is left of it") from None
    return discard_pending(mdt)


def files_partition_records(changes: FileChanges, lists_partitions: bool = False) -> PartitionRecords:
    """The ``files`` partition's records of ``changes``: a files record per partition changed, and the
    partition list record with the partitions written (a commit's always has it: ``lists_partitions``) or
    deleted whole."""
    names, partitions, sizes, deleted = [], [], [], []
    for partition, change in changes.partitions.items():
        for name, size in change.added.items():
            partitions.append(partition)
            names.append(name)
            sizes.append(size)
            deleted.append(False)
        for name in change.deleted:
            if name not in change.added:
                partitions.append(partition)
                names.append(name)
                sizes.append(0)
                deleted.append(True)
    parts = []
    if lists_partitions:
        parts.append(partition_list_record(list(changes.written)))
    if changes.deleted_partitions:
        parts.append(partition_list_record(list(changes.deleted_partitions), deleted=True))
    if names:
        parts.append(files_records(pa.table({"partition": pa.array(partitions, pa.string()),
                                             "file_name": pa.array(names, pa.string()),
                                             "size": pa.array(np.array(sizes, np.int64)),
                                             "is_deleted": pa.array(deleted, pa.bool_())})))
    records = pa.concat_tables(parts) if parts else partition_list_record([]).slice(0, 0)
    return PartitionRecords(MetadataPartition.FILES, records)


def _replaced_keys(table: Table, replaced: Mapping[str, Iterable[str]]) -> pa.Table:
    """``key`` of every record in the latest base files of the ``replaced`` file groups (partition -> file
    ids), as Hudi reads them for the record index (``getRecordIndexReplacedRecords``: base files only), that the
    record index places in one of those groups. Hudi deletes every such key: on a merge-on-read table a key a log
    block deleted from a replaced group's base file may live in another partition since (moved by a global index),
    and Hudi's record index then loses it, so that its next upsert stores it twice."""
    wanted = {(p, f) for p, ids in replaced.items() for f in ids}
    keys = [pa.array([], pa.string())]
    view = table.file_system_view(sorted({p for p, _ in wanted}))
    for file_slice in view.latest_file_slices(partitions=sorted({p for p, _ in wanted}), file_ids=wanted):
        if file_slice.base_file is not None:
            stored = read_parquet(table.storage, file_slice.base_relative_path, columns=[RECORD_KEY_COLUMN])
            keys.append(stored.column(0).combine_chunks().cast(pa.string()))
    located = MetadataTableReader(table).record_locations(pa.concat_arrays(keys))
    groups = pc.binary_join_element_wise(located.column("partition"), located.column("file_id"), "\x00")
    replaced_groups = pa.array(sorted(f"{p}\x00{f}" for p, f in wanted), pa.string())
    return located.filter(pc.is_in(groups, value_set=replaced_groups)).select(["key"])


def record_index_partition_records(table: Table, instant_time: str, metadata: CommitMetadata) -> PartitionRecords:
    """The ``record_index`` change of a commit (Hudi's ``getRecordIndexUpserts`` and ``...AdditionalUpserts``):
    each key a file added goes to its file group at this instant; each key a file removed is deleted; an
    overwrite's replaced file groups lose the keys it did not write again. A key removed and added in one
    commit (moved to another partition under a global index) is where it was added."""
    replaced = [_replaced_keys(table, metadata.replaced_file_ids).column("key").combine_chunks()] \
        if metadata.replaced_file_ids else []
    inserts, deletes = written_keys(metadata.write_stats, replaced)
    timezone = dict(table.config.raw).get(TIMELINE_TIMEZONE_KEY, "LOCAL")
    records = record_index_records(inserts.column("key").combine_chunks(), inserts.column("partition").combine_chunks(),
                                   inserts.column("file_id").combine_chunks(),
                                   pa.array([instant_time] * inserts.num_rows, pa.string()), timezone)
    return PartitionRecords(MetadataPartition.RECORD_INDEX, records, deletes)


def _stats_of(partition: str, file_name: str, stats: pa.Table, deleted: bool) -> pa.Table:
    n = stats.num_rows
    return stats.append_column("partition", pa.array([partition] * n, pa.string())).append_column(
        "file_name", pa.array([file_name] * n, pa.string())).append_column("is_deleted", pa.array([deleted] * n))


def _column_stats_records(parts: list[pa.Table]) -> PartitionRecords:
    if not parts:
        return PartitionRecords(MetadataPartition.COLUMN_STATS, column_stats_records(_EMPTY_STATS))
    return PartitionRecords(MetadataPartition.COLUMN_STATS, column_stats_records(pa.concat_tables(parts)))


def column_stats_of(files: Iterable[tuple[str, str, pa.Table]]) -> PartitionRecords:
    """The ``column_stats`` records of (partition, file name, ``write.column_stats`` table) of files."""
    return _column_stats_records([_stats_of(p, n, stats, False) for p, n, stats in files])


def column_stats_partition_records(metadata: CommitMetadata) -> PartitionRecords:
    """The ``column_stats`` records of the files a commit wrote (their write stats' ``column_stats``)."""
    return column_stats_of((s.partitionPath, posixpath.basename(s.path), s.column_stats)
                           for s in metadata.write_stats if s.column_stats is not None and s.path)


def _base_files(changes: FileChanges) -> list[tuple[str, str]]:
    """(partition, name) of the parquet base files ``changes`` deletes: those Hudi's clean records in the index
    partitions (``convertMetadataToColumnStatsRecords``, ``...BloomFilterRecords`` of a clean)."""
    return [(p, n) for p, names in changes.deleted_files.items() for n in names if n.endswith(".parquet")]


def deleted_column_stats(table: Table, changes: FileChanges) -> PartitionRecords:
    """Deleted ``column_stats`` records of every indexed column of the base files ``changes`` deletes (Hudi's
    stubs: ``HoodieColumnRangeMetadata.stub``, ``isDeleted``)."""
    names = [f.name for f in indexed_columns(table.schema, ())]
    nulls = pa.nulls(len(names), pa.null())
    stub = pa.table({"column_name": pa.array(names, pa.string()), "value_count": pa.array([0] * len(names)),
                     "null_count": pa.array([0] * len(names)), "total_size": pa.array([0] * len(names)),
                     "total_uncompressed_size": pa.array([0] * len(names)), "min_value": wrap_values(nulls),
                     "max_value": wrap_values(nulls)})
    return _column_stats_records([_stats_of(p, n, stub, True) for p, n in _base_files(changes)])


def _bloom_records(instant_time: str, files: list[tuple[str, str, str, bytes]], deleted: bool) -> pa.Table:
    """``bloom_filters`` records of (partition, file name, type code, serialized filter) rows."""
    parts = []
    for code in sorted({f[2] for f in files}):  # one type code per call
        rows = [f for f in files if f[2] == code]
        parts.append(bloom_filter_records(pa.array([f[0] for f in rows], pa.string()), pa.array([f[1] for f in rows]),
                                          instant_time, code, pa.array([f[3] for f in rows], pa.binary()),
                                          pa.array([deleted] * len(rows))))
    return pa.concat_tables(parts) if parts else bloom_filter_records(
        pa.array([], pa.string()), pa.array([], pa.string()), instant_time, "", pa.array([], pa.binary()),
        pa.array([], pa.bool_()))


def bloom_filters_of(instant_time: str, files: list[tuple[str, str, str, bytes]]) -> PartitionRecords:
    """The ``bloom_filters`` records of (partition, file name, type code, serialized filter) of base files."""
    return PartitionRecords(MetadataPartition.BLOOM_FILTERS, _bloom_records(instant_time, files, False))


def bloom_filter_partition_records(instant_time: str, metadata: CommitMetadata) -> PartitionRecords:
    """The ``bloom_filters`` records of the base files a commit wrote (their write stats' footer filters)."""
    return bloom_filters_of(instant_time, [
        (s.partitionPath, posixpath.basename(s.path), s.bloom_filter_type or "", s.bloom_filter.encode())
        for s in metadata.write_stats if s.bloom_filter is not None and s.path])


def deleted_bloom_filters(instant_time: str, changes: FileChanges) -> PartitionRecords:
    """Deleted ``bloom_filters`` records of the base files ``changes`` deletes (an empty filter, ``isDeleted``)."""
    files = [(p, n, "", b"") for p, n in _base_files(changes)]
    return PartitionRecords(MetadataPartition.BLOOM_FILTERS, _bloom_records(instant_time, files, True))


def _deletions(table: Table, instant_time: str, changes: FileChanges, ready: list[MetadataPartition]
               ) -> list[PartitionRecords]:
    """What a clean or rollback deleting files records in each ready partition."""
    records = [files_partition_records(changes)]
    if MetadataPartition.COLUMN_STATS in ready:
        records.append(deleted_column_stats(table, changes))
    if MetadataPartition.BLOOM_FILTERS in ready:
        records.append(deleted_bloom_filters(instant_time, changes))
    return records


def _apply(table: Table, instant_time: str, records: Sequence[PartitionRecords]) -> None:
    write_delta_commit(open_metadata_table(table.storage), instant_time, list(records))
    fault_points.reach(fault_points.METADATA_AFTER_COMMIT, storage=table.storage, instant=instant_time)


def _ready(table: Table) -> list[MetadataPartition]:
    return [] if table.config.is_metadata_table else ready_metadata_partitions(table.config)


def sync_commit(table: Table, instant_time: str, metadata: CommitMetadata) -> None:
    """Record a commit, deltacommit, replacecommit or compaction (its write stats) in the metadata table."""
    ready = _ready(table)
    if ready:
        records = [files_partition_records(of_commit(metadata.partition_to_write_stats()), True)]
        if MetadataPartition.COLUMN_STATS in ready:
            records.append(column_stats_partition_records(metadata))
        if MetadataPartition.BLOOM_FILTERS in ready:
            records.append(bloom_filter_partition_records(instant_time, metadata))
        if MetadataPartition.RECORD_INDEX in ready and not metadata.compacted:
            records.append(record_index_partition_records(table, instant_time, metadata))
        _apply(table, instant_time, records)


def sync_clean(table: Table, instant_time: str, clean_metadata: Mapping[str, Any]) -> None:
    """Record a clean (its ``HoodieCleanMetadata``) in the metadata table."""
    ready = _ready(table)
    if ready:
        _apply(table, instant_time, _deletions(table, instant_time, of_clean(clean_metadata), ready))


def _undo(mdt: Table, target_time: str, data_rollback_time: str) -> Table:
    """Roll back the metadata table's deltacommit of the data instant ``target_time`` (Hudi's
    ``HoodieBackedTableMetadataWriter.update(HoodieRollbackMetadata)``: at the data rollback's time suffixed
    ``006``), unless a compaction of the metadata table already took it into a base file: then the data
    rollback's own deltacommit, which records the deleted files, makes up for it. A pending one was removed
    when the metadata table was opened."""
    target = mdt.timeline.find(target_time)
    if target is None or not target.is_completed or target.action != DELTA_COMMIT:
        return mdt
    compacted = latest_compaction(mdt)
    if compacted is not None and target_time <= compacted:
        logger.info("The metadata table's deltacommit %s is compacted (%s): its rollback records the deleted files",
                    target_time, compacted)
        return mdt
    written = [s["path"] for s in write_stats_of(mdt.timeline.read_metadata(target)) if s.get("path")]
    rollback_files(mdt, target, written, rollback_time(data_rollback_time))
    return mdt.refresh()


def check_rollback(table: Table, instant_time: str) -> None:
    """Refuse, before anything is deleted, the rollback of a completed write the metadata table's compaction took
    into a base file when it keeps a record index (Hudi's ``validateRollback``, which refuses it whatever the
    partitions): the deltacommit cannot be undone there, and the keys it deleted would stay missing from the
    index (so written again, they would be stored twice). The ``files`` partition alone is made up for by the
    rollback's record of the deleted files."""
    if MetadataPartition.RECORD_INDEX not in _ready(table):
        return
    compacted = latest_compaction(Table.load(metadata_storage(table.storage)))
    if compacted is not None and instant_time <= compacted:
        raise MetadataTableError(
            f"Cannot roll back {instant_time} of {table.uri}: the metadata table's compaction {compacted} holds it "
            f"and its record index cannot be rolled back past it (Apache Hudi refuses this rollback too: restore a "
            f"savepoint instead, or write once with hoodie.metadata.enable=false, which deletes the metadata table)")


def sync_rollback(table: Table, data_rollback_time: str, target_time: str, deleted: Iterable[str],
                  guard: Guard | None = None) -> None:
    """Record the rollback of ``target_time`` in the metadata table: undo its deltacommit there, and record
    the files the rollback deleted (paths relative to the table). ``guard`` is the table lock when the caller
    does not hold it (a write rolling its own instant back). When the lock cannot be had and the metadata
    table holds no completed deltacommit of ``target_time`` (the write failed before recording its commit),
    the rollback goes on without a record there: no reader ever took that instant's files from it, and a
    pending deltacommit of it is removed by the next writer of the metadata table."""
    ready = _ready(table)
    if not ready:
        return
    try:
        with (guard or nullcontext)():
            mdt = _undo(open_metadata_table(table.storage), target_time, data_rollback_time)
            write_delta_commit(mdt, data_rollback_time,
                               _deletions(table, data_rollback_time, of_deleted(deleted), ready))
    except LockError:
        recorded = Table.load(metadata_storage(table.storage)).timeline.find(target_time)
        if recorded is not None and recorded.is_completed:
            raise
        logger.warning("Rollback %s of %s is not recorded in the metadata table (the table lock is taken); the "
                       "metadata table never recorded %s", data_rollback_time, target_time, target_time)
        return
    fault_points.reach(fault_points.METADATA_AFTER_COMMIT, storage=table.storage, instant=data_rollback_time)
