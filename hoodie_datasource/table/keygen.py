"""Record keys and partition paths, computed a whole batch at a time.

Formats follow Hudi's key generators: a simple key is the value as a string; a complex key is
``f1:v1,f2:v2`` with ``__null__``/``__empty__`` for missing parts; a partition path is the value
(or ``field=value`` when hive-style), parts joined by ``/``, and ``__HIVE_DEFAULT_PARTITION__``
for a null or empty value (``KeyGenUtils.getPartitionPath`` / ``getRecordPartitionPath``: Hudi writes
such records there rather than failing; the partition column itself keeps the null in the data file,
so a read returns null).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.errors import InvalidRecordError, SchemaMismatchError
from hoodie_datasource.table.table_config import KEYGEN_COMPLEX, KEYGEN_NONPARTITIONED, KEYGEN_SIMPLE

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
NULL_PART = "__null__"
EMPTY_PART = "__empty__"


def _as_strings(column: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    typ = column.type
    if pa.types.is_string(typ):
        return column
    if pa.types.is_large_string(typ) or pa.types.is_string_view(typ):
        return pc.cast(column, pa.string())
    if pa.types.is_timestamp(typ):
        # Hudi sees a timestamp through Avro as epoch microseconds
        return pc.cast(pc.cast(pc.cast(column, pa.timestamp("us", typ.tz)), pa.int64()), pa.string())
    if pa.types.is_boolean(typ):
        return pc.if_else(column, "true", "false")
    return pc.cast(column, pa.string())


@dataclass(frozen=True)
class KeyGenerator:
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...]
    hive_style: bool = False
    url_encode: bool = False

    @property
    def class_name(self) -> str:
        if not self.partition_fields:
            return KEYGEN_NONPARTITIONED
        if len(self.record_key_fields) == 1 and len(self.partition_fields) == 1:
            return KEYGEN_SIMPLE
        return KEYGEN_COMPLEX

    def validate_schema(self, names: list[str]) -> None:
        present = set(names)
        for kind, fields in (("record key", self.record_key_fields), ("partition path", self.partition_fields)):
            missing = [f for f in fields if f not in present]
            if missing:
                raise SchemaMismatchError(
                    f"{kind} field(s) {', '.join(missing)} not found in the data; columns are: {', '.join(names)}"
                )

    def record_keys(self, table: pa.Table) -> pa.ChunkedArray | pa.Array:
        if len(self.record_key_fields) == 1 and self.class_name != KEYGEN_COMPLEX:
            name = self.record_key_fields[0]
            keys = _as_strings(table.column(name))
            bad = pc.or_kleene(pc.is_null(keys), pc.equal(keys, ""))
            if pc.any(bad).as_py():
                raise InvalidRecordError(
                    f"Record key field {name!r} is null or empty in {pc.sum(bad).as_py()} record(s); "
                    "every record needs a record key"
                )
            return keys
        parts = []
        all_null = None
        for name in self.record_key_fields:
            values = _as_strings(table.column(name))
            null = pc.is_null(values)
            all_null = null if all_null is None else pc.and_(all_null, null)
            values = pc.if_else(pc.equal(values, ""), EMPTY_PART, values)
            values = pc.fill_null(values, NULL_PART)
            parts.append(pc.binary_join_element_wise(f"{name}:", values, ""))
        if all_null is not None and pc.any(all_null).as_py():
            raise InvalidRecordError(
                f"Record key fields {', '.join(self.record_key_fields)} are all null in "
                f"{pc.sum(all_null).as_py()} record(s); every record needs a record key"
            )
        return pc.binary_join_element_wise(*parts, ",")

    def partition_paths(self, table: pa.Table) -> pa.ChunkedArray | pa.Array:
        if not self.partition_fields:
            return pa.repeat(pa.scalar("", pa.string()), table.num_rows)
        parts = []
        for name in self.partition_fields:
            column = table.column(name)
            if pa.types.is_date(column.type):
                values = pc.strftime(column, format="%Y-%m-%d")
            else:
                values = _as_strings(column)
            values = pc.fill_null(pc.if_else(pc.equal(values, ""), DEFAULT_PARTITION, values), DEFAULT_PARTITION)
            if self.url_encode:
                values = _url_encode(values)
            if self.hive_style:
                values = pc.binary_join_element_wise(f"{name}=", values, "")
            parts.append(values)
        if len(parts) == 1:
            return parts[0]
        return pc.binary_join_element_wise(*parts, "/")


def _url_encode(values: pa.ChunkedArray | pa.Array) -> pa.Array:
    """URL-encode each distinct value once, then map back (few distinct partition values)."""
    encoded = pc.dictionary_encode(values)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    dictionary = pa.array([quote(v, safe="") for v in encoded.dictionary.to_pylist()], pa.string())
    return pc.take(dictionary, encoded.indices)
