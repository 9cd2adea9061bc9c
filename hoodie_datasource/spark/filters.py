"""Spark's pushed filters -> pyarrow expressions we can apply exactly.

Spark does not re-check a filter the source accepts, so only filters whose semantics pyarrow
reproduces exactly (same null handling, same comparison) are accepted: on top-level columns of
boolean, integer, floating point, string and date type. Everything else is handed back to Spark.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import datasource as sds

_SAFE_VALUE_TYPES = (bool, int, float, str, datetime.date)


def _safe_column(schema: pa.Schema, attribute: tuple[str, ...]) -> str | None:
    if len(attribute) != 1 or attribute[0] not in schema.names:
        return None
    typ = schema.field(attribute[0]).type
    ok = (pa.types.is_boolean(typ) or pa.types.is_integer(typ) or pa.types.is_floating(typ)
          or pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_date32(typ))
    return attribute[0] if ok else None


def _value_ok(value: object) -> bool:
    return isinstance(value, _SAFE_VALUE_TYPES) and not isinstance(value, datetime.datetime)


@dataclass(frozen=True)
class ConvertedFilter:
    expression: pc.Expression
    columns: frozenset[str]


def convert(f: sds.Filter, schema: pa.Schema) -> ConvertedFilter | None:
    """The pyarrow expression for ``f``, or None when it cannot be applied exactly."""
    if isinstance(f, sds.Not):
        inner = convert(f.child, schema)
        return None if inner is None else ConvertedFilter(~inner.expression, inner.columns)
    column = _safe_column(schema, getattr(f, "attribute", ()))
    if column is None:
        return None
    field = pc.field(column)
    expr: pc.Expression | None = None
    if isinstance(f, sds.IsNull):
        expr = field.is_null()
    elif isinstance(f, sds.IsNotNull):
        expr = field.is_valid()
    elif isinstance(f, sds.EqualNullSafe):
        expr = field.is_null() if f.value is None else (field.is_valid() & (field == f.value)) if _value_ok(
            f.value) else None
    elif isinstance(f, sds.In):
        values = list(f.value)
        if values and all(_value_ok(v) for v in values):
            # Spark's IN is null for a null value (so is NOT IN); pyarrow's is_in says false
            found = pc.is_in(field, value_set=pa.array(values).cast(schema.field(column).type))
            expr = pc.if_else(field.is_valid(), found, pa.scalar(None, pa.bool_()))
    elif isinstance(f, (sds.StringStartsWith, sds.StringEndsWith, sds.StringContains)):
        if isinstance(f.value, str) and pa.types.is_string(schema.field(column).type):
            fn = {sds.StringStartsWith: pc.starts_with, sds.StringEndsWith: pc.ends_with,
                  sds.StringContains: pc.match_substring}[type(f)]
            expr = fn(field, pattern=f.value)
    elif _value_ok(getattr(f, "value", None)):
        ops = {
            sds.EqualTo: lambda a, b: a == b,
            sds.GreaterThan: lambda a, b: a > b,
            sds.GreaterThanOrEqual: lambda a, b: a >= b,
            sds.LessThan: lambda a, b: a < b,
            sds.LessThanOrEqual: lambda a, b: a <= b,
        }
        op = ops.get(type(f))
        if op is not None:
            expr = op(field, pc.scalar(f.value))
    return None if expr is None else ConvertedFilter(expr, frozenset([column]))
