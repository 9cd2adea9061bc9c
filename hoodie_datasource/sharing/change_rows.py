"""A version's changes as the Delta change data feed has them: the table's data columns and ``_change_type``
(``insert``, ``update_preimage``, ``update_postimage``, ``delete``), made from the rows of a CDC query
(``read.cdc_reader``: ``op`` and the ``before`` / ``after`` images as JSON). An update gives two rows, its
before image then its after image, as Delta's CDF writes them.

The images' JSON has the Avro encodings of ``cdc_reader``: timestamps in microseconds, dates in days, times in
microseconds, decimals as strings, binary as base64; each column is built back to its Arrow type from those.
"""

from __future__ import annotations

import base64
import decimal
import json
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.errors import UnsupportedTableError
from hoodie_datasource.log.cdc_block import AFTER, BEFORE, DELETE, INSERT, OP

CHANGE_TYPE = "_change_type"
_OPS = {INSERT: ((AFTER, "insert"),), DELETE: ((BEFORE, "delete"),)}
_UPDATE = ((BEFORE, "update_preimage"), (AFTER, "update_postimage"))


def _column(values: list[Any], typ: pa.DataType) -> pa.Array:
    if pa.types.is_timestamp(typ):
        return pa.array(values, pa.int64()).cast(pa.timestamp("us", typ.tz)).cast(typ)
    if pa.types.is_date32(typ):
        return pa.array(values, pa.int32()).cast(typ)
    if pa.types.is_time(typ):
        return pa.array(values, pa.int64()).cast(pa.time64("us")).cast(typ)
    if pa.types.is_decimal(typ):
        return pa.array([None if v is None else decimal.Decimal(v) for v in values], typ)
    if pa.types.is_binary(typ) or pa.types.is_large_binary(typ) or pa.types.is_fixed_size_binary(typ):
        return pa.array([None if v is None else base64.b64decode(v) for v in values], typ)
    try:
        return pa.array(values, typ)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise UnsupportedTableError(f"A change image's value does not convert back to {typ}: {exc}") from None


def change_rows(cdc: pa.Table, schema: pa.Schema) -> pa.Table:
    """The rows of ``cdc`` (``read.cdc_reader.CDC_SCHEMA``) as data rows of ``schema`` with ``_change_type``."""
    images: list[dict[str, Any]] = []
    kinds: list[str] = []
    for op, before, after in zip(cdc.column(OP).to_pylist(), cdc.column(BEFORE).to_pylist(),
                                 cdc.column(AFTER).to_pylist()):
        sides = {BEFORE: before, AFTER: after}
        for side, kind in _OPS.get(op, _UPDATE):
            images.append(json.loads(sides[side]) if sides[side] else {})
            kinds.append(kind)
    columns = [_column([image.get(f.name) for image in images], f.type) for f in schema]
    return pa.Table.from_arrays([*columns, pa.array(kinds, pa.string())],
                                schema=schema.append(pa.field(CHANGE_TYPE, pa.string())))


def _as_text(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A partition column's values as the protocol writes them (``partitions.partition_values``): strings, numbers
    and dates as text, booleans ``true``/``false``, null as the empty string."""
    return pc.fill_null(pc.cast(column, pa.string()), "")


def partition_parts(rows: pa.Table, columns: tuple[str, ...]) -> list[dict[str, str]]:
    """The partition values of ``rows`` (each distinct combination of ``columns`` once), in a stable order."""
    texts = pa.table({name: _as_text(rows.column(name)) for name in columns})
    return sorted(({k: v for k, v in row.items()} for row in texts.group_by(list(columns)).aggregate([]).to_pylist()),
                  key=lambda part: [part[name] for name in columns])


def rows_of_part(rows: pa.Table, part: dict[str, str]) -> pa.Table:
    """The rows of ``rows`` in the partition ``part``."""
    mask = None
    for name, value in part.items():
        match = pc.equal(_as_text(rows.column(name)), value)
        mask = match if mask is None else pc.and_(mask, match)
    return rows.filter(mask) if mask is not None else rows
