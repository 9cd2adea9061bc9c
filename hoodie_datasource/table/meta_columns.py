"""Hudi's ``_hoodie_*`` meta columns and the columnar helpers around them (adding them, dropping them,
conforming a batch to a schema).

Why here, below ``write/``: readers, the index, table services and the writers all need the column
names and these helpers; at the table layer every one of them can import them without reaching up
(as hudi-rs keeps ``metadata/meta_field.rs`` below everything)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.errors import SchemaMismatchError

COMMIT_TIME_COLUMN = "_hoodie_commit_time"
RECORD_KEY_COLUMN = "_hoodie_record_key"
PARTITION_PATH_COLUMN = "_hoodie_partition_path"
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


def repeated(value: str, n: int) -> pa.DictionaryArray:
    """``value`` ``n`` times as a dictionary array of one value: a parquet encoder writes its dictionary as it
    is, where it hashes every value of a plain string column into one."""
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array([value], pa.string()))


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


def with_meta_columns(
    data: pa.Table,
    keys: pa.Array | pa.ChunkedArray,
    partition: str,
    instant: str,
    task_partition: int,
    file_name: str,
    positions: np.ndarray | None = None,
    dictionaries: bool = False,
) -> pa.Table:
    """Prepend the five ``_hoodie_*`` columns for records written by this instant.

    The sequence number is ``<instant>_<task partition>_<row position in the file>``. ``dictionaries``: the
    columns of one value per commit or file (commit time, partition path, file name) come as ``repeated``
    dictionary arrays, for an encoder told the table's schema (``BaseFileEncoder``'s ``stored_schema``)."""
    n = data.num_rows
    if positions is None:
        positions = np.arange(n, dtype=np.int64)
    seq = pc.binary_join_element_wise(f"{instant}_{task_partition}_", pc.cast(pa.array(positions), pa.string()), "")
    one_value = repeated if dictionaries else constant
    meta = [
        one_value(instant, n),
        seq,
        keys if isinstance(keys, pa.Array) else keys.combine_chunks(),
        one_value(partition, n),
        one_value(file_name, n),
    ]
    fields = [pa.field(name, array.type) for name, array in zip(META_COLUMNS, meta)]
    arrays = meta + [data.column(i) for i in range(data.num_columns)]
    return pa.Table.from_arrays(arrays, schema=pa.unify_schemas([pa.schema(fields), data.schema]))
