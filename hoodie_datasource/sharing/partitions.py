"""Partition columns and values as the protocol has them (PROTOCOL.md "Partition Value Serialization"): a
column whose value is the same for every row of a file, written as a string, an empty string for null.

A hoodie partition path says that only where the key generator writes a column's value as it is: the simple and
complex key generators (``value`` or ``field=value`` per part, ``__HIVE_DEFAULT_PARTITION__`` for null, escaped
when ``hoodie.datasource.write.partitionpath.urlencode``), for columns whose string form is the protocol's
(strings, integers, booleans, dates, decimals). A timestamp-based or custom key generator writes a format of the
value (``2024/01/31`` of a timestamp), so its fields are no partition columns here: the column is read from the
files, which hold it (Hudi keeps partition columns in its data files).
"""

from __future__ import annotations

import pyarrow as pa

from hoodie_datasource.config.table_config import KEYGEN_COMPLEX, KEYGEN_SIMPLE, TableConfig
from hoodie_datasource.table.keygen import DEFAULT_PARTITION, unescape_path_name

_AS_IS_KEYGENS = {KEYGEN_SIMPLE, KEYGEN_COMPLEX, ""}


def _plain(typ: pa.DataType) -> bool:
    return (pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_integer(typ)
            or pa.types.is_boolean(typ) or pa.types.is_date32(typ) or pa.types.is_decimal(typ))


def partition_columns(config: TableConfig, schema: pa.Schema) -> tuple[str, ...]:
    """The table's partition fields that are partition columns in the protocol's sense (see the module)."""
    fields = config.partition_fields
    if config.keygen_class not in _AS_IS_KEYGENS or not fields:
        return ()
    if any(name not in schema.names or not _plain(schema.field(name).type) for name in fields):
        return ()
    return fields


def partition_values(config: TableConfig, columns: tuple[str, ...], partition_path: str) -> dict[str, str]:
    """The values of ``columns`` a file in ``partition_path`` holds."""
    if not columns:
        return {}
    parts = partition_path.split("/")
    if len(parts) != len(columns):
        return {}
    values = {}
    for name, part in zip(columns, parts):
        if config.hive_style_partitioning and part.startswith(f"{name}="):
            part = part[len(name) + 1:]
        if config.url_encode_partitions:
            part = unescape_path_name(part)
        values[name] = "" if part == DEFAULT_PARTITION else part
    return values
