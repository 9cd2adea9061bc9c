"""Spark's pushed filters -> pyarrow expressions we can apply exactly.

Spark does not re-check a filter the source accepts, so only filters whose semantics pyarrow
reproduces exactly (same null handling, same comparison) are accepted: on top-level columns of
boolean, integer, floating point, string and date type. Everything else is handed back to Spark.

Floating point: Spark orders NaN above every other value and NaN = NaN (``SQLOrderingUtil.compareDoubles``),
where pyarrow compares as IEEE 754 does (every comparison with NaN false). So a comparison on a
floating-point column that NaN satisfies in Spark is spelled with ``is_nan``: ``d > 1.0`` as
``is_nan(d) or d > 1.0``, ``d = NaN`` as ``is_nan(d)``, ``d < NaN`` as ``not is_nan(d)`` (null for a null ``d``
throughout, so a ``Not`` around it stays unknown for nulls, as in Spark). Row groups are never skipped by
these filters' columns' statistics (``file_group.base_reader``).
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import datasource as sds

from hoodie_datasource.read.data_skipping import (
    Comparison, InValues, Negation, NullCheck, Predicate, StartsWith, Unknown,
)

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


_COMPARISONS = {
    sds.EqualTo: lambda a, b: a == b,
    sds.GreaterThan: lambda a, b: a > b,
    sds.GreaterThanOrEqual: lambda a, b: a >= b,
    sds.LessThan: lambda a, b: a < b,
    sds.LessThanOrEqual: lambda a, b: a <= b,
}
# whether ``NaN <op> v`` holds in Spark for a value v that is not NaN (NaN is above every value)
_NAN_ABOVE = {sds.EqualTo: False, sds.GreaterThan: True, sds.GreaterThanOrEqual: True, sds.LessThan: False,
              sds.LessThanOrEqual: False}


def _is_nan_value(value: object) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _floating_comparison(kind: type, field: pc.Expression, value: float) -> pc.Expression:
    """``field <kind> value`` on a floating-point column as Spark compares (see the module's docstring)."""
    nan = pc.is_nan(field)
    if _is_nan_value(value):
        # d = NaN, d >= NaN: d is NaN; d < NaN: d is not; d <= NaN: any d; d > NaN: none (null stays null)
        return {sds.EqualTo: nan, sds.GreaterThanOrEqual: nan, sds.LessThan: ~nan, sds.LessThanOrEqual: nan | ~nan,
                sds.GreaterThan: nan & ~nan}[kind]
    compared = _COMPARISONS[kind](field, pc.scalar(value))  # false for NaN, as IEEE 754 compares
    return (nan | compared) if _NAN_ABOVE[kind] else compared


def _floating_in(field: pc.Expression, values: list, typ: pa.DataType) -> pc.Expression:
    """``field IN values`` on a floating-point column, NaN matching NaN (nulls: ``convert``)."""
    others = [v for v in values if not _is_nan_value(v)]
    found = pc.is_in(field, value_set=pa.array(others, typ))
    return (pc.is_nan(field) | found) if len(others) < len(values) else found


def convert(f: sds.Filter, schema: pa.Schema) -> ConvertedFilter | None:
    """The pyarrow expression for ``f``, or None when it cannot be applied exactly."""
    if isinstance(f, sds.Not):
        inner = convert(f.child, schema)
        return None if inner is None else ConvertedFilter(~inner.expression, inner.columns)
    column = _safe_column(schema, getattr(f, "attribute", ()))
    if column is None:
        return None
    field = pc.field(column)
    typ = schema.field(column).type
    floating = pa.types.is_floating(typ)
    expr: pc.Expression | None = None
    if isinstance(f, sds.IsNull):
        expr = field.is_null()
    elif isinstance(f, sds.IsNotNull):
        expr = field.is_valid()
    elif isinstance(f, sds.EqualNullSafe):
        if f.value is None:
            expr = field.is_null()
        elif _value_ok(f.value):
            equal = _floating_comparison(sds.EqualTo, field, f.value) if floating else field == f.value
            expr = field.is_valid() & equal
    elif isinstance(f, sds.In):
        values = list(f.value)
        if values and all(_value_ok(v) for v in values):
            found = _floating_in(field, values, typ) if floating else pc.is_in(field, value_set=pa.array(values).cast(typ))
            # is_in is false for a null, where Spark's IN is unknown: a Not around it must not keep the null
            expr = pc.if_else(field.is_valid(), found, pa.scalar(None, pa.bool_()))
    elif isinstance(f, (sds.StringStartsWith, sds.StringEndsWith, sds.StringContains)):
        if isinstance(f.value, str) and pa.types.is_string(typ):
            fn = {sds.StringStartsWith: pc.starts_with, sds.StringEndsWith: pc.ends_with,
                  sds.StringContains: pc.match_substring}[type(f)]
            expr = fn(field, pattern=f.value)
    elif _value_ok(getattr(f, "value", None)) and type(f) in _COMPARISONS:
        if floating:
            expr = _floating_comparison(type(f), field, f.value)
        else:
            expr = _COMPARISONS[type(f)](field, pc.scalar(f.value))
    return None if expr is None else ConvertedFilter(expr, frozenset([column]))


_SKIPPING_COMPARISONS = {sds.EqualTo: "=", sds.GreaterThan: ">", sds.GreaterThanOrEqual: ">=", sds.LessThan: "<",
                         sds.LessThanOrEqual: "<="}


def skipping_predicate(f: sds.Filter) -> Predicate:
    """What ``f`` asks of a file's column ranges (``read.data_skipping``): every pushed filter counts here,
    the ones Spark applies itself too, since skipping only needs to know which files may match."""
    attribute = getattr(f, "attribute", ())
    column = attribute[0] if len(attribute) == 1 else None
    if isinstance(f, sds.Not):
        return Negation(skipping_predicate(f.child))
    if column is None:
        return Unknown()
    if type(f) in _SKIPPING_COMPARISONS:
        return Comparison(column, _SKIPPING_COMPARISONS[type(f)], f.value)
    if isinstance(f, sds.EqualNullSafe):  # a null-safe equality keeps the rows a plain one does, or the nulls
        return NullCheck(column, True) if f.value is None else Comparison(column, "=", f.value)
    if isinstance(f, sds.In):
        return InValues(column, tuple(f.value))
    if isinstance(f, (sds.IsNull, sds.IsNotNull)):
        return NullCheck(column, isinstance(f, sds.IsNull))
    if isinstance(f, sds.StringStartsWith) and isinstance(f.value, str):
        return StartsWith(column, f.value)
    return Unknown()
