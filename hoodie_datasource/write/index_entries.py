"""What the metadata table's index partitions take from a written file, carried in its write stat from the task
that wrote it to the commit (Hudi's write statuses, and the footers its metadata writer reads), and collected
only for the partitions the metadata table keeps (``WriteContext``), as Hudi's write statuses track their records
only then (``HoodieTable.shouldTrackSuccessRecords``):

- the record keys it added and removed (the record index: ``WriteStatus.getWrittenRecordDelegates``);
- a base file's column statistics from its footer, a log file's from its records (``write.column_stats``);
- a base file's bloom filter, as its footer holds it (``convertMetadataToBloomFilterRecords``).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from hoodie_datasource.index.bloom_filter import FOOTER_BLOOM_KEY, FOOTER_TYPE_KEY
from hoodie_datasource.write.base_file_writer import WrittenBaseFile
from hoodie_datasource.write.column_stats import footer_column_stats, record_column_stats
from hoodie_datasource.write.targets import WriteContext


def record_key_changes(ctx: WriteContext, inserted: pa.Array | pa.ChunkedArray | None,
                       deleted: pa.Array | pa.ChunkedArray | None = None) -> pa.Table | None:
    """``key`` and ``deleted`` of the keys a file added and removed; None when the record index is not kept."""
    if not ctx.tracks_record_keys:
        return None
    parts = [pa.array([], pa.string())]
    flags = []
    for keys, is_deleted in ((inserted, False), (deleted, True)):
        if keys is not None and len(keys):
            keys = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
            parts.append(keys.cast(pa.string()))
            flags.append(pa.array([is_deleted] * len(keys), pa.bool_()))
    return pa.table({"key": pa.concat_arrays(parts),
                     "deleted": pa.concat_arrays(flags) if flags else pa.array([], pa.bool_())})


def base_file_entries(written: WrittenBaseFile, schema: pa.Schema, footer: dict[str, str],
                      column_stats_columns: tuple[str, ...] | None, tracks_bloom_filters: bool) -> dict[str, Any]:
    """The write stat fields of a base file (``schema``: its columns' types, without dictionaries) the kept
    partitions take (``WriteContext``'s fields of the same names say which): its column statistics, its bloom
    filter."""
    entries: dict[str, Any] = {}
    if column_stats_columns is not None:
        entries["column_stats"] = footer_column_stats(written.metadata, schema, column_stats_columns)
    if tracks_bloom_filters and FOOTER_BLOOM_KEY in footer:
        entries["bloom_filter"] = footer[FOOTER_BLOOM_KEY]
        entries["bloom_filter_type"] = footer.get(FOOTER_TYPE_KEY, "SIMPLE")
    return entries


def log_file_column_stats(ctx: WriteContext, records: pa.Table) -> pa.Table | None:
    """A log file's column statistics of ``records`` (its data block's), when the partition is kept."""
    return None if ctx.column_stats_columns is None else record_column_stats(records, ctx.column_stats_columns)
