"""Column statistics of a written file, for the metadata table's ``column_stats`` partition, as Hudi 0.15 takes
them: a base file's from its parquet footer (``ParquetUtils.readColumnStatsFromMetadata``: each column's row
groups folded, the smallest minimum, the largest maximum, the null and value counts and the compressed and
uncompressed sizes summed), a log file's from the records it holds (``HoodieTableMetadataUtil
.collectColumnRangeMetadata``: sizes 0, as Parquet's are not comparable with other encodings'; NaN the largest
float, as Java compares it). One row per
indexed column: ``column_name``, ``min_value`` and ``max_value`` (Hudi's wrapper records:
``metadata.records.wrap_values``), ``value_count``, ``null_count``, ``total_size``, ``total_uncompressed_size``.

The columns are ``metadata.indexed_columns``'. A row group without statistics for a column (this library writes
none for a float column holding NaN, or for ``_hoodie_commit_seqno``) leaves its minimum and maximum unknown
(null): a reader must then keep the file.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hoodie_datasource.metadata.indexed_columns import indexed_columns
from hoodie_datasource.metadata.records import wrap_values

STATS_SCHEMA = pa.schema([("column_name", pa.string()), ("value_count", pa.int64()), ("null_count", pa.int64()),
                          ("total_size", pa.int64()), ("total_uncompressed_size", pa.int64())])


def _stats(fields: list[pa.Field], lows: list, highs: list, counts: list[tuple[int, int, int, int]]) -> pa.Table:
    columns = {"column_name": pa.array([f.name for f in fields], pa.string())}
    for i, name in enumerate(("value_count", "null_count", "total_size", "total_uncompressed_size")):
        columns[name] = pa.array([c[i] for c in counts], pa.int64())
    table = pa.table(columns, schema=STATS_SCHEMA)
    return table.append_column("min_value", _wrapped(fields, lows)).append_column("max_value", _wrapped(fields, highs))


def _wrapped(fields: list[pa.Field], values: list) -> pa.Array:
    """``values[i]`` (of ``fields[i]``'s type) wrapped, in order: one ``wrap_values`` per type."""
    if not fields:
        return wrap_values(pa.array([], pa.null()))
    by_type: dict[pa.DataType, list[int]] = {}
    for i, field in enumerate(fields):
        by_type.setdefault(field.type, []).append(i)
    parts = [wrap_values(pa.array([values[i] for i in at], typ)) for typ, at in by_type.items()]
    order = np.argsort(np.concatenate([np.array(at) for at in by_type.values()]), kind="stable")
    return pa.concat_arrays(parts).take(pa.array(order))


def footer_column_stats(metadata: pq.FileMetaData, schema: pa.Schema, wanted: Sequence[str]) -> pa.Table:
    """The statistics of a parquet file's ``wanted`` columns (every column when empty) from its footer."""
    fields = indexed_columns(schema, wanted)
    chunks = {name: [] for name in (f.name for f in fields)}
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        for c in range(group.num_columns):
            column = group.column(c)
            if column.path_in_schema in chunks:
                chunks[column.path_in_schema].append(column)
    lows, highs, counts = [], [], []
    for field in fields:
        found = chunks[field.name]
        stats = [c.statistics for c in found]
        known = bool(found) and all(s is not None and s.has_min_max for s in stats)
        lows.append(min(s.min for s in stats) if known else None)
        highs.append(max(s.max for s in stats) if known else None)
        counts.append((sum(c.num_values for c in found),
                       sum(s.null_count for s in stats if s is not None and s.has_null_count),
                       sum(c.total_compressed_size for c in found), sum(c.total_uncompressed_size for c in found)))
    return _stats(fields, lows, highs, counts)


def record_column_stats(records: pa.Table, wanted: Sequence[str]) -> pa.Table:
    """The statistics of ``records``' ``wanted`` columns (every column when empty), as a log file's."""
    fields = indexed_columns(records.schema, wanted)
    lows, highs, counts = [], [], []
    for field in fields:
        values = records.column(field.name)
        nan = pa.types.is_floating(field.type) and pc.any(pc.is_nan(values)).as_py()
        if nan:  # Java's Float.compare orders NaN above every value: it is the maximum
            values = pc.if_else(pc.is_nan(values), None, values)
        bounds = pc.min_max(values)
        lows.append(bounds["min"].as_py())
        highs.append(float("nan") if nan else bounds["max"].as_py())
        counts.append((records.num_rows, records.column(field.name).null_count, 0, 0))
    return _stats(fields, lows, highs, counts)
