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
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np
import pyarrow as pa

from hoodie_datasource import fault_points
from hoodie_datasource.config.table_config import TableConfig
from hoodie_datasource.errors import CorruptFileError, LockError, TableNotFoundError
from hoodie_datasource.metadata.delta_commit import PartitionRecords, discard_pending, write_delta_commit
from hoodie_datasource.metadata.file_changes import FileChanges, of_clean, of_commit, of_deleted
from hoodie_datasource.metadata.instant_times import rollback_time
from hoodie_datasource.metadata.layout import latest_compaction, metadata_storage
from hoodie_datasource.metadata.records import MetadataPartition, files_records, partition_list_record
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.instant_rollback import rollback_files
from hoodie_datasource.table.metadata_table import PARTITIONS_KEY, ready_partitions
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.commit_metadata import CommitMetadata, write_stats_of
from hoodie_datasource.timeline.instant import DELTA_COMMIT

logger = logging.getLogger(__name__)

Guard = Callable[[], AbstractContextManager[object]]  # the table lock, for a caller that does not hold it


def ready_metadata_partitions(config: TableConfig) -> list[MetadataPartition]:
    """The metadata table's partitions ``hoodie.properties`` lists as ready, in ``MetadataPartition`` order."""
    ready = set(ready_partitions(config))
    return [p for p in MetadataPartition if p.path in ready]


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


def _apply(table: Table, instant_time: str, records: Sequence[PartitionRecords]) -> None:
    write_delta_commit(open_metadata_table(table.storage), instant_time, list(records))
    fault_points.reach(fault_points.METADATA_AFTER_COMMIT, storage=table.storage, instant=instant_time)


def _ready(table: Table) -> list[MetadataPartition]:
    return [] if table.config.is_metadata_table else ready_metadata_partitions(table.config)


def sync_commit(table: Table, instant_time: str, metadata: CommitMetadata) -> None:
    """Record a commit, deltacommit, replacecommit or compaction (its write stats) in the metadata table."""
    ready = _ready(table)
    if ready:
        changes = of_commit(metadata.partition_to_write_stats())
        _apply(table, instant_time, [files_partition_records(changes, True)])


def sync_clean(table: Table, instant_time: str, clean_metadata: Mapping[str, Any]) -> None:
    """Record a clean (its ``HoodieCleanMetadata``) in the metadata table."""
    ready = _ready(table)
    if ready:
        _apply(table, instant_time, [files_partition_records(of_clean(clean_metadata))])


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


def sync_rollback(table: Table, data_rollback_time: str, target_time: str, deleted: Iterable[str],
                  guard: Guard | None = None) -> None:
    """Record the rollback of ``target_time`` in the metadata table: undo its deltacommit there, and record
    the files the rollback deleted (paths relative to the table). ``guard`` is the table lock when the caller
    does not hold it (a write rolling its own instant back). When the lock cannot be had and the metadata
    table holds no completed deltacommit of ``target_time`` (the write failed before recording its commit),
    the rollback goes on without a record there: no reader ever took that instant's files from it, and a
    pending deltacommit of it is removed by the next writer of the metadata table."""
    if not _ready(table):
        return
    try:
        with (guard or nullcontext)():
            mdt = _undo(open_metadata_table(table.storage), target_time, data_rollback_time)
            write_delta_commit(mdt, data_rollback_time, [files_partition_records(of_deleted(deleted))])
    except LockError:
        recorded = Table.load(metadata_storage(table.storage)).timeline.find(target_time)
        if recorded is not None and recorded.is_completed:
            raise
        logger.warning("Rollback %s of %s is not recorded in the metadata table (the table lock is taken); the "
                       "metadata table never recorded %s", data_rollback_time, target_time, target_time)
        return
    fault_points.reach(fault_points.METADATA_AFTER_COMMIT, storage=table.storage, instant=data_rollback_time)
