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

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.config.table_config import (
    KEYGEN_COMPLEX,
    KEYGEN_CUSTOM,
    KEYGEN_NONPARTITIONED,
    KEYGEN_SIMPLE,
    KEYGEN_TIMESTAMP,
    METAFOLDER,
)
from hoodie_datasource.errors import InvalidRecordError, KeyGeneratorConfigError, SchemaMismatchError
from hoodie_datasource.table.timestamp_keygen import TimestampPartitionFormat

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
    """One of Hudi's key generators. ``timestamp_fields`` (with ``timestamp_format``) are the partition fields
    whose path part is their time formatted (``TimestampBasedKeyGenerator``'s one field, a
    ``CustomKeyGenerator``'s ``field:TIMESTAMP``); ``custom``: it is a ``CustomKeyGenerator``. ``incomplete``:
    why it cannot make partition paths (a table's timestamp-based generator whose options a reader of keys did
    not give); a write is refused it by ``check_complete``, before anything is written."""

    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...]
    hive_style: bool = False
    url_encode: bool = False
    timestamp_fields: tuple[str, ...] = ()
    timestamp_format: TimestampPartitionFormat | None = None
    custom: bool = False
    incomplete: str = ""

    @property
    def class_name(self) -> str:
        if self.custom:
            return KEYGEN_CUSTOM
        if self.timestamp_fields:
            return KEYGEN_TIMESTAMP
        if not self.partition_fields:
            return KEYGEN_NONPARTITIONED
        if len(self.record_key_fields) == 1 and len(self.partition_fields) == 1:
            return KEYGEN_SIMPLE
        return KEYGEN_COMPLEX

    def validate_schema(self, schema: pa.Schema) -> None:
        """The incoming data has the key fields, of types the key generator takes (refused before anything is
        written)."""
        names = schema.names
        present = set(names)
        for kind, fields in (("record key", self.record_key_fields), ("partition path", self.partition_fields)):
            missing = [f for f in fields if f not in present]
            if missing:
                raise SchemaMismatchError(
                    f"{kind} field(s) {', '.join(missing)} not found in the data; columns are: {', '.join(names)}"
                )
        if self.timestamp_format is not None:
            for name in self.timestamp_fields:
                self.timestamp_format.check_column_type(schema.field(name).type, name)

    def check_complete(self) -> None:
        """It can make partition paths: a write needs them (a registration of the table or a lookup by key does
        not)."""
        if self.incomplete:
            raise KeyGeneratorConfigError(self.incomplete)

    @property
    def simple_key(self) -> bool:
        """The key is the field's value as it is, not ``field:value`` pairs (Hudi's complex key)."""
        return len(self.record_key_fields) == 1 and self.class_name != KEYGEN_COMPLEX

    def record_keys(self, table: pa.Table) -> pa.ChunkedArray | pa.Array:
        """The record key of every row; a row without one is refused (``InvalidRecordError``), as Hudi's key
        generators refuse it."""
        keys, keyless = self._keys(table)
        count = pc.sum(keyless).as_py() or 0
        if count and self.simple_key:
            raise InvalidRecordError(
                f"Record key field {self.record_key_fields[0]!r} is null or empty in {count} record(s); "
                "every record needs a record key"
            )
        if count:
            raise InvalidRecordError(
                f"Record key fields {', '.join(self.record_key_fields)} are all null in {count} record(s); "
                "every record needs a record key"
            )
        return keys

    def record_keys_or_null(self, table: pa.Table) -> pa.ChunkedArray | pa.Array:
        """The record key of every row, null for a row without one (which ``record_keys`` refuses): what a
        lookup of stored records by key takes, as no stored record lacks a key."""
        keys, keyless = self._keys(table)
        if not pc.any(keyless).as_py():
            return keys
        return pc.if_else(keyless, pa.scalar(None, pa.string()), keys)

    def _keys(self, table: pa.Table) -> tuple[pa.ChunkedArray | pa.Array, pa.ChunkedArray | pa.Array]:
        """(record key, whether the row has none) of every row: a simple key is missing when null or empty, a
        complex one when all its fields are null."""
        if self.simple_key:
            keys = _as_strings(table.column(self.record_key_fields[0]))
            return keys, pc.fill_null(pc.or_kleene(pc.is_null(keys), pc.equal(keys, "")), True)
        parts = []
        all_null = None
        for name in self.record_key_fields:
            values = _as_strings(table.column(name))
            null = pc.is_null(values)
            all_null = null if all_null is None else pc.and_(all_null, null)
            values = pc.if_else(pc.equal(values, ""), EMPTY_PART, values)
            values = pc.fill_null(values, NULL_PART)
            parts.append(pc.binary_join_element_wise(f"{name}:", values, ""))
        return pc.binary_join_element_wise(*parts, ","), all_null

    def partition_paths(self, table: pa.Table) -> pa.ChunkedArray | pa.Array:
        if not self.partition_fields:
            return pa.repeat(pa.scalar("", pa.string()), table.num_rows)
        self.check_complete()
        parts = []
        for name in self.partition_fields:
            column = table.column(name)
            if name in self.timestamp_fields and self.timestamp_format is not None:
                values = self.timestamp_format.partition_values(column, name)
            elif pa.types.is_date(column.type):
                values = pc.strftime(column, format="%Y-%m-%d")
            else:
                values = _as_strings(column)
            parts.append(_partition_part(values, name, self.hive_style, self.url_encode))
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


def _partition_part(values: pa.ChunkedArray | pa.Array, name: str, hive_style: bool,
                    url_encode: bool) -> pa.ChunkedArray | pa.Array:
    """The partition path part of each value of the field ``name``: the default partition for a null or
    empty value, the value escaped where it must be (every one under ``url_encode``), ``name=`` before it
    when hive style. Worked out once per distinct value (one dictionary encoding of the column, then one
    gather: a column holds few), and the column itself when that changes nothing."""
    encoded = pc.dictionary_encode(values)  # a null value has a null index
    if isinstance(encoded, pa.ChunkedArray):  # one dictionary for all chunks, without copying the column
        encoded = encoded.unify_dictionaries()
        distinct = encoded.chunk(0).dictionary if encoded.num_chunks else pa.array([], pa.string())
        indices = pa.chunked_array([c.indices for c in encoded.chunks], encoded.type.index_type)
    else:
        distinct, indices = encoded.dictionary, encoded.indices
    texts = pc.if_else(pc.equal(distinct, ""), DEFAULT_PARTITION, distinct)
    prefix = f"{name}=" if hive_style else ""
    if url_encode:
        texts = _escaped(texts, None)
    else:
        unsafe = pc.match_substring_regex(_prefixed(prefix, texts), _UNSAFE)
        if pc.any(unsafe).as_py():
            texts = _escaped(texts, unsafe)
    parts = _prefixed(prefix, texts)
    refused = pc.match_substring_regex(parts, _REFUSED)
    if pc.any(refused).as_py():
        positions = pa.array(np.flatnonzero(refused.to_numpy(zero_copy_only=False)), indices.type)
        records = pc.sum(pc.is_in(indices, value_set=positions)).as_py()
        raise InvalidRecordError(
            f"Partition path field {name!r} has the value {pc.filter(texts, refused)[0].as_py()!r} in {records} "
            f"record(s): a partition path may not have a '.' or '..' segment nor start with {METAFOLDER!r} (it "
            f"would name a place outside the partition or the table); change or map the value before writing"
        )
    if values.null_count == 0 and parts.equals(distinct):
        return values
    return pc.fill_null(pc.take(parts, indices), _prefixed(prefix, pa.array([DEFAULT_PARTITION]))[0])


def _prefixed(prefix: str, texts: pa.Array) -> pa.Array:
    return pc.binary_join_element_wise(prefix, texts, "") if prefix else texts


def _escaped(texts: pa.Array, which: pa.Array | None) -> pa.Array:
    """``escape_path_name`` of ``texts`` (of those ``which`` marks, when given)."""
    marked = which.to_pylist() if which is not None else [True] * len(texts)
    return pa.array([escape_path_name(t) if m else t for t, m in zip(texts.to_pylist(), marked)], pa.string())
