"""Writing one file group for one instant: a new base file, or the latest one rewritten (COW).

This is the unit of work of a write task: it receives every incoming record of its file group at
once, so it can merge them with the stored records in a single pass.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa

from hoodie_datasource import fault_points
from hoodie_datasource.index import base_file_cache
from hoodie_datasource.index.bloom_filter import (
    FOOTER_BLOOM_KEY,
    FOOTER_MAX_KEY,
    FOOTER_MIN_KEY,
    FOOTER_TYPE_KEY,
    BloomFilter,
)
from hoodie_datasource.storage.storage import FileInfo, join
from hoodie_datasource.table.file_names import base_file_name
from hoodie_datasource.table.markers import create_marker
from hoodie_datasource.table.meta_columns import (
    COMMIT_TIME_COLUMN,
    FILE_NAME_COLUMN,
    PARTITION_PATH_COLUMN,
    RECORD_KEY_COLUMN,
    conform,
    meta_schema,
    repeated,
    with_meta_columns,
)
from hoodie_datasource.timeline.commit_metadata import WriteStat
from hoodie_datasource.write.append_handle import append_to_file_group
from hoodie_datasource.write.base_file_writer import (
    footer_metadata,
    new_filter_for,
    with_dictionaries,
    write_base_file_with_footer,
)
from hoodie_datasource.write.cdc_logger import needs_cdc_log, write_cdc_log
from hoodie_datasource.write.index_entries import base_file_entries, record_key_changes
from hoodie_datasource.write.merge import MergeResult, kept_rows, merge_positions
from hoodie_datasource.write.records import dedupe
from hoodie_datasource.write.targets import APPEND, WriteContext, WriteTarget

# the meta columns holding one value per file: the file name and, as the merged rows are written
# with the file group's (``with_meta_columns``), the partition path
PER_FILE_COLUMNS = (FILE_NAME_COLUMN, PARTITION_PATH_COLUMN)
_MARKER_WRITES = ThreadPoolExecutor(max_workers=2, thread_name_prefix="hoodie-marker")


def write_file_group(
    ctx: WriteContext, target: WriteTarget, records: pa.Table, token: str, task_partition: int
) -> WriteStat | None:
    """Write ``records`` (data columns + key columns, maybe the delete flag) into ``target``.

    Returns None when nothing in the file group changes (so no file is written)."""
    if target.io_type == APPEND:
        return append_to_file_group(ctx, target, records, token, task_partition)
    started = time.monotonic()
    if ctx.dedupe:
        records = dedupe(records, ctx.precombine_field)
    existing = None
    ordering_field = ctx.precombine_field if ctx.event_time_ordering else None
    if target.base_file is not None:
        # the columns holding one value per file are rewritten whole: they are not decoded; the string
        # columns stored dictionary encoded (the commit times, repeating data) are decoded as dictionaries,
        # cheaper to read and to carry over
        existing = base_file_cache.base_file_for_rewrite(ctx.storage, target.base_file, _listed(target), PER_FILE_COLUMNS,
                                                         _carried_dictionaries(ctx))
    scanned = time.monotonic()
    plan = merge_positions(
        existing.column(RECORD_KEY_COLUMN).combine_chunks() if existing is not None else None,
        records,
        ordering_field,
        existing.column(ordering_field) if existing is not None and ordering_field in (existing.column_names) else None,
        concat=ctx.concat_inserts,
    )
    if plan.num_updates == plan.num_deletes == plan.num_inserts == 0:
        return None

    file_name = base_file_name(target.file_id, token, ctx.instant)
    relative = join(target.partition, file_name)
    # the marker is written while the file is merged and encoded (a request's latency on an object
    # store), and must exist before the file does
    marker = _MARKER_WRITES.submit(create_marker, ctx.storage, ctx.instant, target.partition, file_name,
                                   "MERGE" if existing is not None else "CREATE")
    full_schema = pa.unify_schemas([meta_schema(), ctx.data_schema])

    incoming_rows = -plan.sources[plan.num_kept:] - 1
    taken = records.take(pa.array(incoming_rows))
    fresh = with_meta_columns(
        conform(taken, ctx.data_schema),
        taken.column(RECORD_KEY_COLUMN),
        target.partition,
        ctx.instant,
        task_partition,
        file_name,
        np.arange(plan.num_kept, len(plan.sources)),
    )
    if existing is not None:
        # the columns read as dictionaries stay so (one for all the stored row groups: the encoder takes a
        # dictionary that changes from chunk to chunk as values), the per-file columns are written as one:
        # the encoder hashes none of their values
        merged_schema = with_dictionaries(full_schema, {f.name for f in existing.schema
                                                        if pa.types.is_dictionary(f.type)} | set(PER_FILE_COLUMNS))
        kept = conform(kept_rows(existing, plan.sources[:plan.num_kept]), merged_schema).unify_dictionaries()
        for name, value in zip(PER_FILE_COLUMNS, (file_name, target.partition)):
            kept = kept.set_column(kept.schema.get_field_index(name), name, repeated(value, kept.num_rows))
        output = pa.concat_tables([kept, conform(fresh, merged_schema)])
    else:
        output = fresh
    footer = _same_keys_footer(ctx, existing, plan) if existing is not None else None
    if footer is None:
        keys = output.column(RECORD_KEY_COLUMN)
        footer = footer_metadata(keys, _merged_filter(ctx, target, fresh, plan, keys))
    marker.result()
    written = write_base_file_with_footer(ctx.storage, relative, output, footer, ctx.compression,
                                          ctx.record_key_fields, first_new_row=plan.num_kept, stored_schema=full_schema,
                                          read_footer=ctx.column_stats_columns is not None)
    size = written.size
    cdc_stats = write_cdc_log(ctx, target, token, existing, fresh, plan) \
        if needs_cdc_log(ctx, existing, output.num_rows, plan) else None
    fault_points.reach(fault_points.AFTER_DATA_FILE_WRITTEN, storage=ctx.storage, path=relative)
    finished = time.monotonic()
    deleted = existing.column(RECORD_KEY_COLUMN).take(pa.array(plan.deleted_rows)) if plan.num_deletes else None
    return WriteStat(
        fileId=target.file_id,
        path=relative,
        partitionPath=target.partition,
        prevCommit=target.base_instant or "null",
        numWrites=output.num_rows,
        numDeletes=plan.num_deletes,
        numUpdateWrites=plan.num_updates,
        numInserts=plan.num_inserts,
        totalWriteBytes=size,
        fileSizeInBytes=size,
        cdcStats=cdc_stats,
        record_keys=record_key_changes(ctx, taken.column(RECORD_KEY_COLUMN).slice(plan.num_updates), deleted),
        **base_file_entries(written, full_schema, footer, ctx.column_stats_columns, ctx.tracks_bloom_filters),
        runtimeStats={
            "totalScanTime": int((scanned - started) * 1000),
            "totalUpsertTime": int((finished - scanned) * 1000) if existing is not None else 0,
            "totalCreateTime": int((finished - scanned) * 1000) if existing is None else 0,
        },
    )




def _same_keys_footer(ctx: WriteContext, existing: pa.Table, plan: MergeResult) -> dict[str, str] | None:
    """The footer entries of a merge that only updates (no key added or removed): the stored file's
    bloom filter and key range, copied as they are (read with the file, in its schema's metadata),
    for they are what ``_merged_filter`` and ``footer_metadata`` would build again from the same keys.
    None when keys change or the stored entries do not fit this write (no filter, another type)."""
    stored = existing.schema.metadata or {}
    entries = {key: stored.get(key.encode()) for key in (FOOTER_BLOOM_KEY, FOOTER_TYPE_KEY, FOOTER_MIN_KEY,
                                                        FOOTER_MAX_KEY)}
    stored_type = (entries[FOOTER_TYPE_KEY] or b"SIMPLE").decode().upper()
    if (plan.num_inserts or plan.num_deletes or not ctx.index.writes_bloom_filter or entries[FOOTER_BLOOM_KEY] is None
            or entries[FOOTER_MIN_KEY] is None or entries[FOOTER_MAX_KEY] is None
            or stored_type != ctx.index.bloom_filter_type):
        return None
    return {key: value.decode() for key, value in entries.items() if value is not None}


def _merged_filter(ctx: WriteContext, target: WriteTarget, fresh: pa.Table, plan: MergeResult,
                   keys: pa.ChunkedArray) -> BloomFilter | None:
    """The bloom filter of the merged file holding ``keys`` (None when files carry none): the stored
    file's with the inserted keys added, when it is of this write's type, else one built from ``keys``."""
    if not ctx.index.writes_bloom_filter:
        return None
    stored = None
    if target.base_file is not None:
        stored = base_file_cache.bloom_filter(ctx.storage, target.base_file, ctx.index.bloom_max_entries,
                                              _listed(target))
    if stored is None or stored.type_code != ctx.index.bloom_filter_type:
        return new_filter_for(ctx.index, keys)
    # the stored keys are already in the filter: add only the inserted ones (a deleted key left in it
    # is a false positive, which tagging's exact key check absorbs)
    if plan.num_inserts:
        stored.add_keys(fresh.column(RECORD_KEY_COLUMN).take(pa.array(
            np.arange(fresh.num_rows - plan.num_inserts, fresh.num_rows))))
    return stored


def _listed(target: WriteTarget) -> FileInfo | None:
    """The listing entry of ``target``'s base file, when the planner had it."""
    return FileInfo(target.base_file, target.base_size) if target.base_size is not None else None


def _carried_dictionaries(ctx: WriteContext) -> tuple[str, ...]:
    """The string columns a merge reads as dictionaries where the stored file has them dictionary encoded
    (``read_parquet``): the commit times and the data columns, but the ordering field, which the merge
    compares with incoming values, and the record key fields (unique: a dictionary cannot pay)."""
    skip = {ctx.precombine_field, *ctx.record_key_fields}
    data = [f.name for f in ctx.data_schema if f.type == pa.string() and f.name not in skip]
    return (COMMIT_TIME_COLUMN, *data)
