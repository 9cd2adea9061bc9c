"""Record keys and partition paths, computed a whole batch at a time.

Formats follow Hudi's key generators: a simple key is the value as a string; a complex key is
``f1:v1,f2:v2`` with ``__null__``/``__empty__`` for missing parts; a partition path is the value
(or ``field=value`` when hive-style), parts joined by ``/``, and ``__HIVE_DEFAULT_PARTITION__``
for a null or empty value (``KeyGenUtils.getPartitionPath`` / ``getRecordPartitionPath``: Hudi writes
such records there rather than failing; the partition column itself keeps the null in the data file,
so a read returns null).

A partition path is a path relative to the table, used as it is by every part of the library (tagging,
listing, markers, cleaning, readers), so it is made safe here, once. With
``hoodie.datasource.write.partitionpath.urlencode`` every value is escaped as Hudi's
``PartitionPathEncodeUtils.escapePathName`` does (``/``, ``%``, ``=``, ``:``, control characters and a
few more become ``%XX``). Without it a value is used as it is, unless it is not a plain relative path
(an empty segment as in ``a//b``, ``a/`` or ``/abs``, a ``.`` or ``..`` segment, a control character):
such a value is escaped the same way, so it stays one directory of the table and reads back. A value
that is still ``.`` or ``..`` after that is refused, as Hudi's ``validateNoPathTraversal`` refuses
``..``: nothing a column holds can name a place outside the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.errors import InvalidRecordError, SchemaMismatchError
from hoodie_datasource.table.table_config import KEYGEN_COMPLEX, KEYGEN_NONPARTITIONED, KEYGEN_SIMPLE, METAFOLDER

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
            parts.append(_safe_partition_part(values, name, self.hive_style, self.url_encode))
        if len(parts) == 1:
            return parts[0]
        return pc.binary_join_element_wise(*parts, "/")


# PartitionPathEncodeUtils.charToEscape: what Hudi escapes in a partition value, as %XX of the char code
_ESCAPED = [*range(0x20), *map(ord, '"#%\'*/:=?\\{[]^'), 0x7F]
ESCAPE_TABLE = {code: f"%{code:02X}" for code in _ESCAPED}
# what escaping leaves unsafe: a "." or ".." segment, or the table's meta folder as the first segment
_REFUSED = rf"(^|/)\.{{1,2}}(/|$)|^{re.escape(METAFOLDER)}(/|$)"
# a part that is not a plain relative path: that, an empty segment, or a control character
_UNSAFE = rf"{_REFUSED}|(^|/)(/|$)|[\x00-\x1f\x7f]"
_ESCAPE_SEQUENCE = re.compile("%([0-9A-Fa-f]{2})")


def escape_path_name(value: str) -> str:
    """``PartitionPathEncodeUtils.escapePathName``: Hive's escaping of a partition value."""
    return value.translate(ESCAPE_TABLE)


def unescape_path_name(path: str) -> str:
    """``PartitionPathEncodeUtils.unescapePathName``: every ``%XX`` back to the character of that code."""
    return _ESCAPE_SEQUENCE.sub(lambda m: chr(int(m.group(1), 16)), path)


def _safe_partition_part(values: pa.ChunkedArray | pa.Array, name: str, hive_style: bool,
                         url_encode: bool) -> pa.ChunkedArray | pa.Array:
    """The partition path part of each value of the field ``name``: the value, escaped where it must be
    (all of them under ``url_encode``), ``name=`` before it when hive style. Each distinct value that needs
    escaping is escaped once (a column holds few); the test for it is one vectorized pass."""
    prefix = f"{name}=" if hive_style else ""
    if not url_encode:
        parts = pc.binary_join_element_wise(prefix, values, "") if prefix else values
        unsafe = pc.match_substring_regex(parts, _UNSAFE)
        if not pc.any(unsafe).as_py():
            return parts
        values = pc.if_else(unsafe, _escaped(values), values)
    else:
        values = _escaped(values)
    parts = pc.binary_join_element_wise(prefix, values, "") if prefix else values
    refused = pc.match_substring_regex(parts, _REFUSED)
    if pc.any(refused).as_py():
        bad = pc.filter(values, refused)[0].as_py()
        raise InvalidRecordError(
            f"Partition path field {name!r} has the value {bad!r} in {pc.sum(refused).as_py()} record(s): "
            f"a partition path may not have a '.' or '..' segment nor start with {METAFOLDER!r} (it would name "
            f"a place outside the partition or the table); change or map the value before writing"
        )
    return parts


def _escaped(values: pa.ChunkedArray | pa.Array) -> pa.Array:
    """``escape_path_name`` of each value, computed once per distinct value."""
    encoded = pc.dictionary_encode(values)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    dictionary = pa.array([escape_path_name(v) for v in encoded.dictionary.to_pylist()], pa.string())
    return pc.take(dictionary, encoded.indices)
