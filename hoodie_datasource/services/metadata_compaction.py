"""Compacting the metadata table: each file slice with log files merged into a new base HFile, as a reader merges
it (the counted log blocks only: Hudi's ``CompactHelpers.getInstantRange`` takes the metadata table's valid
instants), at the time of its latest deltacommit suffixed ``001``.

``T.compaction.requested`` holds the plan (Avro ``HoodieCompactionPlan``: every slice with logs, Hudi's
``UnBoundedCompactionStrategy`` for the metadata table), then ``.inflight``, the base files (a marker first:
a compaction that died is removed by the next writer of the metadata table, ``delta_commit.discard_pending``),
then ``T.commit`` (``COMPACT``). A file group whose merged slice holds no record gets no base file, as Hudi's.
Records are written in this library's record schema: a field a later Hudi's schema adds is dropped.
"""

from __future__ import annotations

import logging

import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource import fault_points
from hoodie_datasource.log.avro_codec import empty_table
from hoodie_datasource.metadata.delta_commit import metadata_commit_extra
from hoodie_datasource.metadata.file_slices import latest_merged_slices
from hoodie_datasource.metadata.keys import ALL_PARTITIONS_KEY
from hoodie_datasource.metadata.merge import merge_column_stats, merge_file_entries, merge_latest
from hoodie_datasource.metadata.reader import MetadataTableReader, conform_wrapped
from hoodie_datasource.metadata.records import (
    KEY_FIELD,
    RECORDS_SCHEMA,
    MetadataPartition,
    column_stats,
    file_entries,
    files_records,
    partition_list_record,
)
from hoodie_datasource.metadata.sync import ready_metadata_partitions
from hoodie_datasource.metadata.timeline import MetadataTimeline
from hoodie_datasource.services.metadata_base_files import write_base_hfile
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.markers import delete_marker_dir
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.avro_metadata import COMPACTION_PLAN, encode
from hoodie_datasource.timeline.commit_metadata import CommitMetadata
from hoodie_datasource.timeline.instant import COMPACTION
from hoodie_datasource.timeline.transitions import create_requested, transition_to_completed, transition_to_inflight

logger = logging.getLogger(__name__)

_STATS_TYPE = RECORDS_SCHEMA.field("ColumnStatsMetadata").type


def _conform(value: pa.Array, typ: pa.DataType) -> pa.Array:
    """``value`` as ``typ``: struct fields taken by name (a later Hudi's extra fields dropped, missing ones
    null), a wrapped column value in this library's wrappers."""
    if value.type == typ:
        return value
    if pa.types.is_struct(typ):
        names = [value.type.field(i).name for i in range(value.type.num_fields)]
        children = [_conform(value.field(f.name), f.type) if f.name in names else pa.nulls(len(value), f.type)
                    for f in typ]
        return pa.StructArray.from_arrays(children, fields=list(typ), mask=value.is_null())
    if pa.types.is_union(typ):
        return conform_wrapped(value)
    return value.cast(typ)


def _as_ours(records: pa.Table) -> pa.Table:
    """Records read with any version of the record schema, in ``RECORDS_SCHEMA`` (with their ``order``)."""
    columns = [_conform(records.column(f.name).combine_chunks(), f.type) if f.name in records.column_names
               else pa.nulls(records.num_rows, f.type) for f in RECORDS_SCHEMA]
    return pa.Table.from_arrays(columns + [records.column("order")], names=[*RECORDS_SCHEMA.names, "order"])


def _merged_files(records: pa.Table, deletes: pa.Table) -> pa.Table:
    entries = file_entries(records)
    order = records.column("order").take(entries.column("record"))
    listing = merge_file_entries(entries.drop_columns(["record"]).append_column("order", order), deletes)
    is_list = pc.equal(listing.column("key"), ALL_PARTITIONS_KEY)
    partitions = listing.filter(is_list).column("file_name").to_pylist()
    files = listing.filter(pc.invert(is_list))
    parts = [partition_list_record(partitions)]  # the partition list is always there, as Hudi's
    if files.num_rows:
        parts.append(files_records(pa.table({"partition": files.column("key"), "file_name": files.column("file_name"),
                                             "size": files.column("size"),
                                             "is_deleted": pa.array([False] * files.num_rows)})))
    return pa.concat_tables(parts)


def _merged_column_stats(records: pa.Table, deletes: pa.Table) -> pa.Table:
    latest = merge_latest(records, deletes)
    view = column_stats(records).append_column("order", records.column("order"))
    view = view.set_column(view.column_names.index("min_value"), "min_value", conform_wrapped(view.column("min_value")))
    view = view.set_column(view.column_names.index("max_value"), "max_value", conform_wrapped(view.column("max_value")))
    merged = merge_column_stats(view, deletes)
    merged = merged.take(pc.index_in(latest.column(KEY_FIELD), merged.column("key")))
    stats = pa.StructArray.from_arrays(
        [merged.column(name).combine_chunks() for name in ("file_name", "column_name", "min_value", "max_value",
                                                            "value_count", "null_count", "total_size",
                                                            "total_uncompressed_size", "is_deleted")],
        fields=list(_STATS_TYPE))
    latest = latest.set_column(latest.column_names.index("ColumnStatsMetadata"), "ColumnStatsMetadata", stats)
    return latest.filter(pc.invert(merged.column("is_deleted")))


def merged_records(reader: MetadataTableReader, partition: MetadataPartition, file_slice: FileSlice) -> pa.Table:
    """Every live record of ``file_slice`` (paths relative to the data table), merged, in ``RECORDS_SCHEMA``."""
    tables, deletes = reader.file_slice_records(file_slice)
    if not tables:
        return empty_table(RECORDS_SCHEMA)
    records = pa.concat_tables([_as_ours(t) for t in tables])
    if partition is MetadataPartition.FILES:
        return _merged_files(records, deletes)
    if partition is MetadataPartition.COLUMN_STATS:
        return _merged_column_stats(records, deletes)
    return merge_latest(records, deletes)


def compact_metadata_table(table: Table, mdt: Table, instant_time: str) -> Table:
    """Compact every file slice with logs of the ready partitions of ``table``'s metadata table ``mdt`` at
    ``instant_time``; the metadata table after."""
    reader = MetadataTableReader(table, MetadataTimeline(mdt.timeline.instants))
    work: list[tuple[MetadataPartition, FileSlice]] = []
    for partition in ready_metadata_partitions(table.config):
        work += [(partition, s) for s in latest_merged_slices(table.storage, reader.timeline, partition) if s.log_files]
    if not work:
        return mdt
    operations = [{
        "baseInstantTime": s.base_instant, "deltaFilePaths": [log.name for log in s.log_files],
        "dataFilePath": s.base_file.name if s.base_file else None, "fileId": s.file_id,
        "partitionPath": partition.path, "bootstrapFilePath": None,
        "metrics": {"TOTAL_LOG_FILES": float(len(s.log_files)),
                    "TOTAL_LOG_FILES_SIZE": float(sum(log.size for log in s.log_files))},
    } for partition, s in work]
    requested = create_requested(mdt, instant_time, COMPACTION, encode(COMPACTION_PLAN, {
        "operations": operations, "extraMetadata": None, "version": 2}))
    inflight = transition_to_inflight(mdt, requested)
    stats = []
    for partition, file_slice in work:
        records = merged_records(reader, partition, file_slice)
        if records.num_rows:
            stats.append(write_base_hfile(mdt, partition.path, file_slice.file_id, instant_time, records,
                                          prev_commit=file_slice.base_instant))
    fault_points.reach(fault_points.METADATA_BEFORE_COMMIT, storage=mdt.storage, instant=instant_time)
    metadata = CommitMetadata("COMPACT", stats, metadata_commit_extra(), compacted=True)
    completed = transition_to_completed(mdt, inflight, metadata.to_json())
    delete_marker_dir(mdt.storage, instant_time)
    logger.info("Compacted the metadata table of %s at %s: %d file slices, %d base files", table.uri, instant_time,
                len(work), len(stats))
    return mdt.with_instant(completed)
