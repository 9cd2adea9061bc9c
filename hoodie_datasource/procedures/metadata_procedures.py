"""Hudi's procedures over a table's metadata table: what it lists (``show_metadata_table_partitions``,
``show_metadata_table_files``, ``show_metadata_table_column_stats``, ``show_metadata_table_stats``), its listing
checked against storage (``validate_metadata_table_files``), and building or deleting it
(``create_metadata_table``, ``init_metadata_table``, ``delete_metadata_table``), with Hudi's argument names and
result columns (``hudi-spark-datasource/.../command/procedures``: 0.15's, and 1.x's ``path``, ``limit`` and
``show_metadata_table_column_stats``, which 0.15 has not).

Each runs the ``HoodieTable`` method of the same use, so Python and SQL answer alike. Values are text where Hudi's
are: a statistic's bound as Java's ``String.valueOf`` prints the value Hudi wraps it in (a date as its epoch day,
a timestamp as its epoch microseconds, a decimal as the bytes of its unscaled value at scale 15).
"""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa

from hoodie_datasource.config.property import parse_bool, parse_int
from hoodie_datasource.errors import MetadataTableExistsError, MetadataTableNotReadyError
from hoodie_datasource.hoodie_table import HoodieTable
from hoodie_datasource.metadata.indexed_columns import indexed_columns
from hoodie_datasource.metadata.records import DECIMAL_SCALE
from hoodie_datasource.procedures.procedure import TABLE, Parameter, Procedure, Rows
from hoodie_datasource.table.metadata_table import METADATA_TABLE

_TABLE_OR_PATH = (Parameter("table"), Parameter("path"))


def _show_partitions(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    return [(p,) for p in table.metadata_partitions()]


def _show_files(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    return [(name,) for name in table.metadata_files(args["partition"] or "")][:args["limit"]]


def _java_float(value: float, single: bool) -> str:
    """``Double.toString`` / ``Float.toString``: the shortest digits, plain from 10^-3 up to 10^7, else
    ``<d.ddd>E<n>``."""
    if np.isnan(value):
        return "NaN"
    if np.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    number = np.float32(value) if single else np.float64(value)
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        return np.format_float_positional(number, unique=True, trim="0")
    mantissa, exponent = np.format_float_scientific(number, unique=True, trim="0").split("e")
    return f"{mantissa}E{int(exponent)}"


def _java_bytes(data: bytes) -> str:
    """``Arrays.toString(byte[])``: signed bytes."""
    return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in data) + "]"


def _unscaled_bytes(value: Decimal) -> bytes:
    """The bytes of a ``DecimalWrapper``'s value: the unscaled value at scale 15, as ``BigInteger.toByteArray``."""
    unscaled = int(value.scaleb(DECIMAL_SCALE))
    return unscaled.to_bytes(unscaled.bit_length() // 8 + 1, "big", signed=True)


def _bound_texts(values: pa.Array | pa.ChunkedArray) -> list[str]:
    """Each bound as ``ShowMetadataTableColumnStatsProcedure.getColumnStatsValue`` prints it."""
    typ = values.type
    if pa.types.is_date(typ):
        values = values.cast(pa.int32())
    elif pa.types.is_timestamp(typ):
        values = values.cast(pa.timestamp("us", typ.tz)).cast(pa.int64())
    python = values.to_pylist()
    if pa.types.is_floating(typ):
        texts = [None if v is None else _java_float(v, pa.types.is_float32(typ)) for v in python]
    elif pa.types.is_boolean(typ):
        texts = [None if v is None else str(v).lower() for v in python]
    elif pa.types.is_decimal(typ):
        texts = [None if v is None else _java_bytes(_unscaled_bytes(v)) for v in python]
    elif pa.types.is_binary(typ) or pa.types.is_large_binary(typ) or pa.types.is_fixed_size_binary(typ):
        texts = [None if v is None else _java_bytes(v) for v in python]
    else:
        texts = [None if v is None else str(v) for v in python]
    return ["null" if t is None else t for t in texts]


def _names(text: str | None) -> list[str]:
    return [n.strip() for n in (text or "").split(",") if n.strip()]


def _show_column_stats(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    """Hudi 1.x's: the statistics of ``targetColumns`` (every column the partition can index when not given) of
    the latest file slices' files of ``partition`` (several, comma separated; every partition when not given),
    sorted by column."""
    columns = _names(args["targetColumns"]) or [f.name for f in indexed_columns(table.table.schema, ())]
    partitions = _names(args["partition"]) or None
    rows = []
    for column in sorted(columns):
        stats = table.metadata_column_stats(column, partitions)
        rows += zip(stats.column("file_name").to_pylist(), [column] * stats.num_rows,
                    _bound_texts(stats.column("min_value")), _bound_texts(stats.column("max_value")),
                    stats.column("null_count").to_pylist())
    return rows


def _show_stats(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    return [(key, str(value)) for key, value in table.metadata_stats().items()]


def _validate_files(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    return [(d.partition, d.file_name, d.in_storage, d.in_metadata, d.storage_size, d.metadata_size)
            for d in table.validate_metadata(args["verbose"])]


def _metadata_folder(table: HoodieTable) -> str:
    return table.storage.uri_of(METADATA_TABLE)


def _create(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    """Hudi's ``CreateMetadataTableProcedure``: refused when the metadata folder holds anything."""
    folder = _metadata_folder(table)
    if table.storage.is_dir(METADATA_TABLE):
        raise MetadataTableExistsError(f"CALL create_metadata_table: Metadata directory ({folder}) not empty")
    start = time.monotonic()
    table.create_metadata_table(**conf)
    return [(f"Created Metadata Table in {folder} (duration={time.monotonic() - start:.3f}secs)",)]


def _init(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    """Hudi's ``InitMetadataTableProcedure``: the metadata folder must be there; ``read_only`` opens the
    metadata table (here: refused unless it can be read), else the partitions the options want that are missing
    are built."""
    folder = _metadata_folder(table)
    if not table.storage.is_dir(METADATA_TABLE):
        raise MetadataTableNotReadyError(f"CALL init_metadata_table: Metadata directory ({folder}) does not exist")
    start = time.monotonic()
    if args["read_only"]:
        table.metadata_partitions()
    else:
        table.create_metadata_table(**conf)
    action = "Opened" if args["read_only"] else "Initialized"
    return [(f"{action} Metadata Table in {folder} (duration={time.monotonic() - start:.3f}sec)",)]


def _delete(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    folder = _metadata_folder(table)
    deleted = table.delete_metadata_table(**conf)
    return [(f"Deleted Metadata Table at '{folder}'" if deleted else f"No Metadata Table at '{folder}'",)]


_RESULT = pa.schema([("result", pa.string())])

METADATA_PROCEDURES = (
    Procedure("show_metadata_table_partitions", _TABLE_OR_PATH, pa.schema([("partition", pa.string())]),
              _show_partitions, doc="The data table's partitions as its metadata table lists them, sorted."),
    Procedure("show_metadata_table_files", (*_TABLE_OR_PATH, Parameter("partition", default=""),
                                            Parameter("limit", default=100, parse=parse_int)),
              pa.schema([("file_path", pa.string())]), _show_files,
              doc="The files of `partition` (none: a non-partitioned table's) as the metadata table lists them, "
                  "by name."),
    Procedure("show_metadata_table_column_stats", (*_TABLE_OR_PATH, Parameter("partition"),
                                                   Parameter("targetColumns")),
              pa.schema([("file_name", pa.string()), ("column_name", pa.string()), ("min_value", pa.string()),
                         ("max_value", pa.string()), ("null_number", pa.int64())]), _show_column_stats,
              doc="The column statistics of `targetColumns` (comma separated; every column by default) of the "
                  "latest files of `partition` (comma separated; every partition by default), from the "
                  "`column_stats` partition."),
    Procedure("show_metadata_table_stats", _TABLE_OR_PATH,
              pa.schema([("stat_key", pa.string()), ("stat_value", pa.string())]), _show_stats,
              doc="The metadata table's base and log files (count, bytes) per partition of it, and the data "
                  "table's partition count."),
    Procedure("validate_metadata_table_files", (TABLE, Parameter("verbose", default=False, parse=parse_bool)),
              pa.schema([("partition", pa.string()), ("file_name", pa.string()), ("is_present_in_fs", pa.bool_()),
                         ("is_present_in_metadata", pa.bool_()), ("fs_size", pa.int64()),
                         ("metadata_size", pa.int64())]), _validate_files,
              doc="The metadata table's listing against a listing of storage: the files whose presence or size "
                  "differs (every file with `verbose`)."),
    Procedure("create_metadata_table", (TABLE,), _RESULT, _create,
              doc="Build the metadata table (its index partitions as the session's `hoodie.metadata.*` options "
                  "say); refused when `.hoodie/metadata` holds anything."),
    Procedure("init_metadata_table", (TABLE, Parameter("read_only", default=False, parse=parse_bool)), _RESULT,
              _init, doc="Build the metadata table's partitions the session's options want that are missing "
                         "(`read_only`: only open it); refused when it has no folder."),
    Procedure("delete_metadata_table", (TABLE,), _RESULT, _delete,
              doc="Delete the metadata table; readers list storage until a write builds it again."),
)
