"""Building the metadata table's partitions from the data table as it is (Hudi 0.15's
``HoodieBackedTableMetadataWriter.initializeFromFilesystem``).

Only when no data instant is pending (``anyPendingDataInstant``: a pending write's files could not be told
apart from committed ones, and its commit would not be recorded), under the table lock. Each partition is built
at the latest completed data instant (``SOLO_COMMIT_TIMESTAMP`` on a table without one) suffixed ``010``, the
next free suffix for each partition after the first: its file groups open with an empty log file each (a
DELETE block of no keys: Hudi's ``initializeFileGroups``), then one deltacommit (``BULK_INSERT``) writes the
records into base files, one per file group that has any. ``hoodie.properties`` lists the partition as ready
once that deltacommit completed; a build that died before leaves it unlisted, and the next write deletes what
was written (the whole metadata table when ``files`` was not ready, else the partition's folder) and builds it
again.
"""

from __future__ import annotations

import logging
import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hoodie_datasource import fault_points
from hoodie_datasource.config.metadata_config import MetadataConfig
from hoodie_datasource.config.table_config import update_table_properties
from hoodie_datasource.file_group.merged_reader import MergeRule, read_merged_slice
from hoodie_datasource.index.base_file_cache import stored_keys
from hoodie_datasource.index.bloom_filter import FOOTER_BLOOM_KEY, FOOTER_TYPE_KEY
from hoodie_datasource.log.delete_block import encode_delete_block
from hoodie_datasource.log.log_format import encode_log_file_content
from hoodie_datasource.metadata.delta_commit import PartitionRecords, metadata_commit_extra
from hoodie_datasource.metadata.file_changes import of_listing
from hoodie_datasource.metadata.instant_times import SOLO_COMMIT_TIMESTAMP, partition_init_time
from hoodie_datasource.metadata.keys import file_group_indexes
from hoodie_datasource.metadata.layout import create_metadata_table
from hoodie_datasource.metadata.reader import TIMELINE_TIMEZONE_KEY
from hoodie_datasource.metadata.records import KEY_FIELD, MetadataPartition, record_index_records
from hoodie_datasource.metadata.sync import (
    bloom_filters_of,
    column_stats_of,
    files_partition_records,
    open_metadata_table,
    ready_metadata_partitions,
)
from hoodie_datasource.services.metadata_base_files import write_base_hfile
from hoodie_datasource.storage.parquet import read_parquet_metadata
from hoodie_datasource.storage.storage import join
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.file_names import LogFileName
from hoodie_datasource.table.markers import delete_marker_dir
from hoodie_datasource.table.meta_columns import RECORD_KEY_COLUMN
from hoodie_datasource.table.metadata_table import METADATA_TABLE, PARTITIONS_KEY
from hoodie_datasource.table.partition_metafile import write_partition_metafile
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.commit_metadata import CommitMetadata
from hoodie_datasource.timeline.instant import DELTA_COMMIT
from hoodie_datasource.timeline.transitions import create_requested, transition_to_completed, transition_to_inflight
from hoodie_datasource.write.column_stats import footer_column_stats

logger = logging.getLogger(__name__)

BULK_INSERT = "BULK_INSERT"
OPENING_LOG_TOKEN = "0-0-0"  # HoodieLogFormat.DEFAULT_WRITE_TOKEN, of a file group's opening empty log file


def wanted_partitions(cfg: MetadataConfig) -> list[MetadataPartition]:
    """The partitions ``cfg`` keeps, in the order Hudi builds them (``enablePartitions``): ``files`` always,
    then each index partition switched on."""
    switches = {MetadataPartition.FILES: True, MetadataPartition.BLOOM_FILTERS: cfg.bloom_filters,
                MetadataPartition.COLUMN_STATS: cfg.column_stats, MetadataPartition.RECORD_INDEX: cfg.record_index}
    return [p for p, on in switches.items() if on]


RECORD_INDEX_RECORD_SIZE = 48  # HoodieBackedTableMetadataWriter.RECORD_INDEX_AVERAGE_RECORD_SIZE (bytes)


def estimate_file_group_count(record_count: int, record_size: int, min_count: int, max_count: int,
                              growth_factor: float, max_file_group_bytes: int) -> int:
    """Hudi's ``HoodieTableMetadataUtil.estimateFileGroupCount``: enough file groups for the records, grown by
    ``growth_factor``, at ``max_file_group_bytes`` each, between ``min_count`` and ``max_count`` (exactly
    ``min_count`` when the two are equal)."""
    if min_count == max_count:
        return min_count
    expected = math.ceil(record_count * growth_factor)
    estimated = expected // (max_file_group_bytes // max(record_size, 1))
    return max_count if estimated >= max_count else min_count if estimated <= min_count else max(1, estimated)


def _slice_keys(table: Table, file_slice: FileSlice, schema: pa.Schema, visible: frozenset[str]) -> pa.Array:
    """The record keys a file slice holds: its base file's, merged with its logs when it has any (Hudi's
    ``readRecordKeysFromFileSliceSnapshot`` on merge-on-read)."""
    if not file_slice.log_files and file_slice.base_file is not None:
        return stored_keys(table.storage, file_slice.base_relative_path)
    merged = read_merged_slice(table.storage, file_slice, schema, visible, MergeRule.of(table.config))
    return merged.column(RECORD_KEY_COLUMN).combine_chunks()


def _record_index_records(table: Table) -> PartitionRecords:
    """Every key of the table's latest file slices at its file group, at the slice's base instant (Hudi's
    ``initializeRecordIndexPartition``)."""
    keep = [RECORD_KEY_COLUMN, *([table.config.precombine_field] if table.config.precombine_field else [])]
    schema = pa.schema([f for f in table.schema if f.name in keep])
    visible = frozenset(i.timestamp for i in table.timeline.completed())
    keys, partitions, file_ids, instants = [], [], [], []
    for file_slice in table.fs_view.latest_file_slices():
        found = _slice_keys(table, file_slice, schema, visible).cast(pa.string())
        keys.append(found)
        for column, value in ((partitions, file_slice.partition_path), (file_ids, file_slice.file_id),
                              (instants, file_slice.base_instant)):
            column.append(pa.array([value] * len(found), pa.string()))
    joined = [pa.concat_arrays(parts) if parts else pa.array([], pa.string())
              for parts in (keys, partitions, file_ids, instants)]
    joined = _one_location_per_key(table, *joined)
    timezone = dict(table.config.raw).get(TIMELINE_TIMEZONE_KEY, "LOCAL")
    return PartitionRecords(MetadataPartition.RECORD_INDEX, record_index_records(*joined, timezone))


def _one_location_per_key(table: Table, keys: pa.Array, partitions: pa.Array, file_ids: pa.Array,
                          instants: pa.Array) -> list[pa.Array]:
    """The record index is global: a key a partition-local index (BLOOM, SIMPLE) stored in several partitions
    keeps the location of its latest slice, as a commit writing it in two partitions keeps its last file
    (``timeline.written_keys``); Apache Hudi's record index assumes unique keys and fails on them."""
    if len(keys) < 2:
        return [keys, partitions, file_ids, instants]
    order = pc.sort_indices(pa.table({"instant": instants}), sort_keys=[("instant", "ascending")])
    rows = pa.table({"key": keys.take(order), "row": order})
    last = rows.append_column("at", pa.array(range(len(order)))).group_by("key").aggregate([("at", "max")])
    if last.num_rows == len(keys):
        return [keys, partitions, file_ids, instants]
    logger.warning("%s holds %d record keys in more than one partition (a partition-local index): the record "
                   "index places each at its latest file slice", table.uri, len(keys) - last.num_rows)
    kept = rows.column("row").take(last.column("at_max")).combine_chunks()
    return [column.take(kept) for column in (keys, partitions, file_ids, instants)]


def _base_file_footers(table: Table) -> list[tuple[str, str, pq.FileMetaData]]:
    """(partition, name, footer) of every committed parquet base file (Hudi builds the column statistics and
    bloom filter partitions from the base files' footers only: ``convertFilesToColumnStatsRecords``)."""
    footers = []
    for partition, change in of_listing(table).partitions.items():
        for name, size in change.added.items():
            if name.endswith(".parquet"):
                footers.append((partition, name, read_parquet_metadata(table.storage, join(partition, name), size)))
    return footers


def _column_stats_records(table: Table, cfg: MetadataConfig) -> PartitionRecords:
    return column_stats_of((p, n, footer_column_stats(footer, table.schema, cfg.column_stats_columns))
                           for p, n, footer in _base_file_footers(table))


def _bloom_filter_records(table: Table, instant_time: str) -> PartitionRecords:
    files = []
    for partition, name, footer in _base_file_footers(table):
        kv = footer.metadata or {}
        if FOOTER_BLOOM_KEY.encode() in kv:  # a file written under an index keeping none has no filter
            files.append((partition, name, kv.get(FOOTER_TYPE_KEY.encode(), b"SIMPLE").decode(),
                          kv[FOOTER_BLOOM_KEY.encode()]))
    return bloom_filters_of(instant_time, files)


def _records(table: Table, partition: MetadataPartition, cfg: MetadataConfig, instant_time: str) -> PartitionRecords:
    if partition is MetadataPartition.FILES:
        return files_partition_records(of_listing(table), lists_partitions=True)
    if partition is MetadataPartition.COLUMN_STATS:
        return _column_stats_records(table, cfg)
    if partition is MetadataPartition.BLOOM_FILTERS:
        return _bloom_filter_records(table, instant_time)
    return _record_index_records(table)


def _file_group_count(partition: MetadataPartition, cfg: MetadataConfig, records: PartitionRecords) -> int:
    if partition is MetadataPartition.FILES:
        return 1
    if partition is MetadataPartition.COLUMN_STATS:
        return cfg.column_stats_file_groups
    if partition is MetadataPartition.BLOOM_FILTERS:
        return cfg.bloom_filter_file_groups
    return estimate_file_group_count(len(records), RECORD_INDEX_RECORD_SIZE, cfg.record_index_min_file_groups,
                                     cfg.record_index_max_file_groups, cfg.record_index_growth_factor,
                                     cfg.record_index_max_file_group_bytes)


def _free_time(mdt: Table, base_time: str) -> str:
    """The first ``<base_time>010``, ``011``, ... the metadata table has no instant of."""
    offset = 0
    while mdt.timeline.find(partition_init_time(base_time, offset)) is not None:
        offset += 1
    return partition_init_time(base_time, offset)


def _build(table: Table, mdt: Table, partition: MetadataPartition, cfg: MetadataConfig) -> Table:
    """Write ``partition``'s file groups and its first deltacommit; the metadata table after it."""
    completed = [i.timestamp for i in table.timeline.instants if i.is_completed]
    instant_time = _free_time(mdt, completed[-1] if completed else SOLO_COMMIT_TIMESTAMP)
    records = _records(table, partition, cfg, instant_time)
    count = _file_group_count(partition, cfg, records)
    storage = mdt.storage
    storage.delete_tree(partition.path)
    write_partition_metafile(storage, partition.path, instant_time)
    opening = encode_log_file_content([encode_delete_block(pa.array([], pa.string()), pa.array([], pa.string()),
                                                           instant_time)])
    file_ids = [partition.file_group_id(i) for i in range(count)]
    storage.create_all_once([(join(partition.path, LogFileName(f, instant_time, 1, OPENING_LOG_TOKEN).name()), opening)
                             for f in file_ids])
    inflight = transition_to_inflight(mdt, create_requested(mdt, instant_time, DELTA_COMMIT))
    keys = records.records.column(KEY_FIELD).combine_chunks()
    groups = file_group_indexes(keys, count) if count > 1 else np.zeros(len(keys), np.int32)
    stats = [write_base_hfile(mdt, partition.path, file_ids[index], instant_time,
                              records.records.filter(pa.array(groups == index)))
             for index in range(count) if (groups == index).any()]
    fault_points.reach(fault_points.METADATA_BEFORE_COMMIT, storage=storage, instant=instant_time)
    metadata = CommitMetadata(BULK_INSERT, stats, metadata_commit_extra())
    completed = transition_to_completed(mdt, inflight, metadata.to_json())
    delete_marker_dir(storage, instant_time)
    logger.info("Built the metadata table's %s partition of %s at %s: %d records in %d file groups",
                partition.path, table.uri, instant_time, records.records.num_rows, count)
    return mdt.with_instant(completed)


def initialize_partitions(table: Table, cfg: MetadataConfig) -> Table:
    """Build every partition ``cfg`` wants that ``hoodie.properties`` does not list as ready, when no data
    instant is pending; the table after (its config listing them)."""
    ready = set(ready_metadata_partitions(table.config))
    missing = [p for p in wanted_partitions(cfg) if p not in ready]
    if not missing:
        return table
    pending = table.timeline.pending()
    if pending:
        logger.info("Not building the metadata table's %s partitions of %s: instants %s are pending",
                    ",".join(p.path for p in missing), table.uri, [i.timestamp for i in pending])
        return table
    storage = table.storage
    if MetadataPartition.FILES in missing:
        storage.delete_tree(METADATA_TABLE)
        mdt = create_metadata_table(storage, table.config)
    else:
        mdt = open_metadata_table(storage)
    for partition in missing:
        mdt = _build(table, mdt, partition, cfg)
        fault_points.reach(fault_points.METADATA_INITIALIZED, storage=storage, partition=partition.path)
        ready.add(partition)
        config = update_table_properties(storage, {PARTITIONS_KEY: ",".join(sorted(p.path for p in ready))})
        table = Table(storage, config, table.timeline, table.as_of_instant)
    return table
