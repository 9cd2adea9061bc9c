"""Columnar record operations shared by every write: meta columns, dedupe, schema conformance."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.errors import SchemaMismatchError
from hoodie_datasource.write.keygen import PARTITION_PATH_COLUMN, RECORD_KEY_COLUMN

COMMIT_TIME_COLUMN = "_hoodie_commit_time"
COMMIT_SEQNO_COLUMN = "_hoodie_commit_seqno"
FILE_NAME_COLUMN = "_hoodie_file_name"
META_COLUMNS = (COMMIT_TIME_COLUMN, COMMIT_SEQNO_COLUMN, RECORD_KEY_COLUMN, PARTITION_PATH_COLUMN, FILE_NAME_COLUMN)
# Hudi's soft-delete column: a data column (stored, part of the table schema) whose true value makes
# the record a delete (BaseAvroPayload.isDeleteRecord / HoodieRecord.HOODIE_IS_DELETED_FIELD).
IS_DELETED_COLUMN = "_hoodie_is_deleted"
# Internal columns that travel with records between write stages and are never stored.
IS_DELETE_COLUMN = "_hoodie_is_delete"
FILE_ID_COLUMN = "_hoodie_file_id"
LOCATION_PARTITION_COLUMN = "_hoodie_location_partition"
INTERNAL_COLUMNS = (IS_DELETE_COLUMN, FILE_ID_COLUMN, LOCATION_PARTITION_COLUMN)


def constant(value: str, n: int) -> pa.Array:
    return pa.repeat(pa.scalar(value, pa.string()), n)


def meta_schema() -> pa.Schema:
    return pa.schema([pa.field(name, pa.string()) for name in META_COLUMNS])


def data_schema_of(schema: pa.Schema) -> pa.Schema:
    """``schema`` without meta and internal columns."""
    skip = set(META_COLUMNS) | set(INTERNAL_COLUMNS)
    return pa.schema([f for f in schema if f.name not in skip])


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table``'s columns in ``schema``'s order and types; absent columns become nulls."""
    columns = []
    for field in schema:
        if field.name in table.column_names:
            column = table.column(field.name)
            if column.type != field.type:
                try:
                    column = column.cast(field.type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    raise SchemaMismatchError(
                        f"Column {field.name!r} has type {column.type}, which cannot be written as the "
                        f"table's type {field.type}: {exc}"
                    ) from exc
            columns.append(column)
        else:
            columns.append(pa.nulls(table.num_rows, field.type))
    return pa.Table.from_arrays(columns, schema=schema)


def dedupe(records: pa.Table, precombine: str | None, by_partition: bool = True) -> pa.Table:
    """One record per key: the highest ``precombine`` value wins, ties go to the later record."""
    if records.num_rows < 2:
        return records
    order = np.arange(records.num_rows)
    sort_keys = [(RECORD_KEY_COLUMN, "ascending")]
    if by_partition:
        sort_keys.append((PARTITION_PATH_COLUMN, "ascending"))
    indexed = records.select([c for c, _ in sort_keys]).append_column("__order", pa.array(order))
    if precombine:
        indexed = indexed.append_column("__pre", records.column(precombine))
        sort_keys.append(("__pre", "descending"))
    sort_keys.append(("__order", "descending"))
    sorted_idx = pc.sort_indices(indexed, sort_keys=sort_keys).to_numpy()
    keys = pc.take(records.column(RECORD_KEY_COLUMN), sorted_idx)
    first = np.ones(len(sorted_idx), dtype=bool)
    same = pc.equal(keys[1:], keys[:-1])
    if by_partition:
        parts = pc.take(records.column(PARTITION_PATH_COLUMN), sorted_idx)
        same = pc.and_(same, pc.equal(parts[1:], parts[:-1]))
    first[1:] = ~same.to_numpy(zero_copy_only=False)
    keep = np.sort(sorted_idx[first])
    if len(keep) == records.num_rows:
        return records
    return records.take(pa.array(keep))


def with_meta_columns(
    data: pa.Table,
    keys: pa.Array | pa.ChunkedArray,
    partition: str,
    instant: str,
    task_partition: int,
    file_name: str,
    positions: np.ndarray | None = None,
) -> pa.Table:
    """Prepend the five ``_hoodie_*`` columns for records written by this instant.

    The sequence number is ``<instant>_<task partition>_<row position in the file>``."""
    n = data.num_rows
    if positions is None:
        positions = np.arange(n, dtype=np.int64)
    seq = pc.binary_join_element_wise(f"{instant}_{task_partition}_", pc.cast(pa.array(positions), pa.string()), "")
    meta = [
        constant(instant, n),
        seq,
        keys if isinstance(keys, pa.Array) else keys.combine_chunks(),
        constant(partition, n),
        constant(file_name, n),
    ]
    arrays = meta + [data.column(i) for i in range(data.num_columns)]
    return pa.Table.from_arrays(arrays, schema=pa.unify_schemas([meta_schema(), data.schema]))
