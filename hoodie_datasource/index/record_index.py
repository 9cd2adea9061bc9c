"""Apache Hudi's record-level index (``hoodie.index.type=RECORD_INDEX``, ``SparkMetadataTableRecordIndex``): the
file group of each incoming key read from the metadata table's ``record_index`` partition, which every commit
keeps in the same transaction (``metadata.sync``).

A key lives in one of the partition's file groups, the one ``mapRecordKeyToFileGroupIndex`` names
(``metadata.keys.file_group_indexes``); a lookup reads, in each file group its keys map to, only the HFile blocks
that may hold them (``MetadataTableReader.record_locations``). In a distributed write the records are shuffled by
that file group (``routes_by_key``: a task per file group, ``lookup_tasks``; the keying pass adds each record's
``lookup_task_of``, or Spark computes it from a key that is one field's value, ``spark.lookup_routing``) and each
task tags its records (``tag``), as Hudi 0.15's ``SparkMetadataTableRecordIndex
.tagLocation`` sends keys (``keyBy(mapRecordKeyToFileGroupIndex)``, ``partitionBy(PartitionIdPassthrough)``,
``RecordIndexFileGroupLookupFunction``) before it joins the locations back to the records
(``tagGlobalLocationBackToRecords``); the locations never go through the driver.

The index is global (a key is unique in the table). What a key written with another partition than its stored
one becomes is ``hoodie.record.index.update.partition.path``'s (``routing.partition_changes``: Hudi's
``shouldUpdatePartitionPath``, false by default: updated where it is). A location counts as
``index.location_validity`` says (Hudi's ``HoodieIndexUtils.checkIfValidCommit``, and a live file group with a
base file); any other key is new.

While the table has no ready record index (``hoodie.metadata.record.index.enable`` off, so a write deletes it or
never builds it; or not built yet), tagging is the fallback index's, ``GLOBAL_SIMPLE`` made from the same options,
as Hudi's ``tagLocation`` falls back to it so that tagging stays exact and keys stay unique (``for_table``).
Apache Hudi 0.15 does not build the record index because the index type asks for it: only
``hoodie.metadata.record.index.enable`` does (``HoodieMetadataConfig.isRecordIndexEnabled``), and a write with it
off deletes the partition (``HoodieTable.shouldDeleteMetadataPartition``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.index.index import Index, TagScope
from hoodie_datasource.index.key_ranges import FileKeyRange, unranged
from hoodie_datasource.index.location_validity import valid_locations
from hoodie_datasource.index.lookup import IndexCounts
from hoodie_datasource.index.lookup_index import GlobalSimpleIndex
from hoodie_datasource.metadata.keys import file_group_indexes
from hoodie_datasource.metadata.reader import MetadataTableReader, metadata_reader
from hoodie_datasource.metadata.records import MetadataPartition
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.meta_columns import (
    FILE_ID_COLUMN,
    LOCATION_PARTITION_COLUMN,
    RECORD_KEY_COLUMN,
)
from hoodie_datasource.table.metadata_table import ready_partitions
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.timeline import Timeline

logger = logging.getLogger(__name__)

RECORD_INDEX = MetadataPartition.RECORD_INDEX


@dataclass(frozen=True)
class RecordIndex(Index):
    """``SparkMetadataTableRecordIndex``; ``reader`` and ``timeline``: the table's, once bound (``for_table``)."""

    reader: MetadataTableReader | None = None
    timeline: Timeline | None = None
    is_global = True
    routes_by_key = True

    def for_table(self, table: Table) -> Index:
        """This index reading ``table``'s record index, or the fallback index (``GLOBAL_SIMPLE``) while the table
        has none ready."""
        reader = None
        if table.config.timeline_layout_version == 1 and RECORD_INDEX.path in ready_partitions(table.config):
            reader = metadata_reader(table)
        if reader is None or not reader.is_ready(RECORD_INDEX) or not reader.file_group_ids(RECORD_INDEX):
            fallback = self.config.fallback
            assert fallback is not None
            if not table.config.is_metadata_table and table.timeline.completed():
                logger.warning("%s has no ready record index: tagging falls back to %s (set "
                               "hoodie.metadata.record.index.enable=true to keep one)", table.uri,
                               fallback.index_type)
            return GlobalSimpleIndex(fallback)
        return replace(self, reader=reader, timeline=table.timeline)

    def _reader(self) -> MetadataTableReader:
        if self.reader is None:
            raise RuntimeError("RecordIndex.for_table(table) binds the index to a table before it looks keys up")
        return self.reader

    def file_ranges(self, storage: Storage, slices: Sequence[FileSlice]) -> list[FileKeyRange]:
        """Every slice, its footers unread: the record index names the file groups (a group of log files only
        too: Hudi's record index holds the keys of merged log records)."""
        return [unranged(s) for s in slices]

    def lookup_tasks(self, files: Sequence[FileKeyRange]) -> int:
        """A task per file group of the record index."""
        return len(self._reader().file_group_ids(RECORD_INDEX))

    def lookup_task_of(self, keys: pa.Array | pa.ChunkedArray) -> np.ndarray:
        """The record-index file group each key maps to (``mapRecordKeyToFileGroupIndex``): the task of
        ``lookup_tasks`` that looks it up."""
        return file_group_indexes(keys, len(self._reader().file_group_ids(RECORD_INDEX)))

    def tag(self, records: pa.Table, files: Sequence[FileKeyRange], scope: TagScope
            ) -> tuple[pa.Table, IndexCounts | None]:
        """``records`` with the file group the record index holds each key in (null: a new key)."""
        keys = records.column(RECORD_KEY_COLUMN)
        found = self._locations(keys, files)
        at = pc.index_in(keys, value_set=found.column("key"))
        file_ids = found.column("file_id").take(at)
        where = found.column("partition").take(at)
        counts = IndexCounts(keys=records.num_rows, found=int(pc.sum(pc.is_valid(at)).as_py() or 0))
        return records.append_column(FILE_ID_COLUMN, file_ids).append_column(LOCATION_PARTITION_COLUMN, where), counts

    def _locations(self, keys: pa.Array | pa.ChunkedArray, files: Sequence[FileKeyRange]) -> pa.Table:
        """``key``, ``partition`` and ``file_id`` of each distinct key of ``keys`` the record index holds at a
        committed instant in one of ``files``' file groups."""
        keys = pc.unique(pc.drop_null(keys))
        if len(keys) == 0 or not files:
            return pa.table({"key": pa.array([], pa.string()), "partition": pa.array([], pa.string()),
                             "file_id": pa.array([], pa.string())})
        found = self._reader().record_locations(keys)
        assert self.timeline is not None
        keep = valid_locations(found.column("instant_time"), found.column("partition"), found.column("file_id"),
                               self.timeline, files)
        return found.filter(keep).select(["key", "partition", "file_id"])
