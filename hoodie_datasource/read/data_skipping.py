"""Data skipping: which files a query's filters may keep, judged from each file's column ranges.

Apache Hudi keeps one ``HoodieMetadataColumnStats`` record per file and column in the metadata table and,
with ``hoodie.enable.data.skipping``, drops the files whose ranges no row of the filter can fall in
(``DataSkippingUtils.translateIntoColumnStatsIndexFilterExpr``). The same here, columnar: a predicate is
evaluated over the arrays of every file's minimum, maximum, null and value counts at once, giving a mask of
the files that *may* hold a matching row. Anything the ranges cannot judge keeps the file: a filter this
module does not know, a file without statistics, a value that does not convert to the column's type.

Where the ranges could mislead, the file is kept too:

* Floating point: Spark orders NaN above every value, and parquet statistics leave NaN out, so a filter a NaN
  satisfies (``>``, ``>=``, ``= NaN``) never skips, and a range with a NaN bound judges nothing.
* Strings: Spark compares UTF-8 bytes; Java writers collect ranges with ``String.compareTo`` (UTF-16 units),
  which orders characters from U+E000 up differently. A range whose bounds hold such a character, or whose
  minimum is above its maximum, judges nothing.
"""

from __future__ import annotations

import functools
import logging
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.metadata.reader import MetadataTableReader
from hoodie_datasource.metadata.records import MetadataPartition, unwrap_values
from hoodie_datasource.table.file_group import FileSlice

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ColumnRanges:
    """One column's statistics per file, aligned with the files being judged; a null minimum, maximum or
    count means the file has no such statistic."""

    minimum: pa.Array
    maximum: pa.Array
    null_count: pa.Array
    value_count: pa.Array

    @staticmethod
    def unknown(files: int, typ: pa.DataType) -> ColumnRanges:
        none, counts = pa.nulls(files, typ), pa.nulls(files, pa.int64())
        return ColumnRanges(none, none, counts, counts)


@dataclass(frozen=True)
class Comparison:
    """``column <op> value``; op is one of ``=``, ``<``, ``<=``, ``>``, ``>=``."""

    column: str
    op: str
    value: object


@dataclass(frozen=True)
class InValues:
    column: str
    values: tuple


@dataclass(frozen=True)
class NullCheck:
    column: str
    is_null: bool


@dataclass(frozen=True)
class StartsWith:
    column: str
    prefix: str


@dataclass(frozen=True)
class AllOf:
    children: tuple[Predicate, ...]


@dataclass(frozen=True)
class AnyOf:
    children: tuple[Predicate, ...]


@dataclass(frozen=True)
class Negation:
    child: Predicate


@dataclass(frozen=True)
class Unknown:
    """A filter the ranges cannot judge: every file may match it."""


Predicate = Union[Comparison, InValues, NullCheck, StartsWith, AllOf, AnyOf, Negation, Unknown]

# not (x op v) keeps the rows where x (op') v: a null x satisfies neither
_COMPLEMENT = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}
_NAN_SATISFIES = {">", ">="}  # a NaN row satisfies x > v and x >= v for every v that is not NaN
_MISORDERED_TEXT = r"[\x{E000}-\x{10FFFF}]"


def files_to_read(predicate: Predicate, ranges: Mapping[str, ColumnRanges], files: int) -> np.ndarray:
    """A boolean mask over the ``files`` judged: true where the file may hold a row ``predicate`` keeps.
    ``ranges`` holds the statistics of the columns the predicate names; a column without them keeps every
    file."""
    return _may_match(_push_negation(predicate), ranges, files)


def predicate_columns(predicate: Predicate) -> set[str]:
    if isinstance(predicate, (AllOf, AnyOf)):
        return set().union(*(predicate_columns(c) for c in predicate.children))
    if isinstance(predicate, Negation):
        return predicate_columns(predicate.child)
    column = getattr(predicate, "column", None)
    return {column} if column else set()


def slices_to_read(slices: Sequence[FileSlice], predicate: Predicate, metadata: MetadataTableReader | None,
                   schema: pa.Schema) -> list[FileSlice]:
    """The slices of which some file (base or log) may hold a row ``predicate`` keeps, by the column statistics
    of the metadata table's ``column_stats`` partition (all of ``slices`` when it has none). A merged row is one
    of its slice's records as a file holds it, so a slice none of whose files may match holds no such row."""
    columns = sorted(c for c in predicate_columns(predicate) if c in schema.names)
    if not columns or not slices or metadata is None or not metadata.is_ready(MetadataPartition.COLUMN_STATS):
        return list(slices)
    files = [(s.partition_path, name) for s in slices for name in s.file_names]
    names = pa.array([name for _, name in files], pa.string())
    stats = metadata.column_stats(columns, files)
    ranges = {}
    for column in columns:
        of_column = stats.filter(pc.equal(stats.column("column_name"), column))
        at = pc.index_in(names, value_set=of_column.column("file_name").combine_chunks())
        typ = schema.field(column).type
        ranges[column] = ColumnRanges(*(
            values.take(at) for values in (unwrap_values(of_column.column("min_value"), typ),
                                           unwrap_values(of_column.column("max_value"), typ),
                                           of_column.column("null_count").combine_chunks(),
                                           of_column.column("value_count").combine_chunks())))
    may_match = files_to_read(predicate, ranges, len(files))
    kept_files = {file for file, keep in zip(files, may_match.tolist()) if keep}
    kept = [s for s in slices if any((s.partition_path, name) in kept_files for name in s.file_names)]
    logger.info("Data skipping kept %d of %d file slices (%d of %d files)", len(kept), len(slices),
                len(kept_files), len(files))
    return kept


def _push_negation(predicate: Predicate, negate: bool = False) -> Predicate:
    """The predicate with every negation pushed onto the leaves (which then say what a negated leaf keeps)."""
    if isinstance(predicate, Negation):
        return _push_negation(predicate.child, not negate)
    if isinstance(predicate, (AllOf, AnyOf)):
        children = tuple(_push_negation(c, negate) for c in predicate.children)
        if negate:  # De Morgan holds in SQL's three-valued logic
            return (AnyOf if isinstance(predicate, AllOf) else AllOf)(children)
        return type(predicate)(children)
    if not negate:
        return predicate
    if isinstance(predicate, Comparison) and predicate.op in _COMPLEMENT:
        return Comparison(predicate.column, _COMPLEMENT[predicate.op], predicate.value)
    if isinstance(predicate, NullCheck):
        return NullCheck(predicate.column, not predicate.is_null)
    if isinstance(predicate, (Comparison, InValues, StartsWith)):
        return Negation(predicate)  # x != v, x NOT IN (...), NOT LIKE 'p%': judged by _excludes_all
    return Unknown()


def _may_match(predicate: Predicate, ranges: Mapping[str, ColumnRanges], files: int) -> np.ndarray:
    if isinstance(predicate, AllOf):
        masks = [_may_match(c, ranges, files) for c in predicate.children]
        return functools.reduce(operator.and_, masks, np.ones(files, dtype=bool))
    if isinstance(predicate, AnyOf):
        masks = [_may_match(c, ranges, files) for c in predicate.children]
        return functools.reduce(operator.or_, masks, np.zeros(files, dtype=bool))
    column = getattr(predicate, "column", None) or getattr(getattr(predicate, "child", None), "column", None)
    if column is None or column not in ranges:
        return np.ones(files, dtype=bool)
    stats = ranges[column]
    if isinstance(predicate, NullCheck):
        counted = stats.null_count if predicate.is_null else pc.subtract(stats.value_count, stats.null_count)
        return _known_or_true(pc.greater(counted, 0))
    if isinstance(predicate, Negation):
        return _not_all_excluded(predicate.child, stats)
    low, high, judged = _usable_bounds(stats)
    if isinstance(predicate, Comparison):
        mask = _compare(predicate, low, high, judged)
    elif isinstance(predicate, InValues):
        mask = _in_values(predicate.values, low, high, judged)
    elif isinstance(predicate, StartsWith):
        mask = _starts_with(predicate.prefix, low, high, judged)
    else:
        mask = None
    return np.ones(files, dtype=bool) if mask is None else mask


def _known_or_true(mask: pa.Array) -> np.ndarray:
    """Arrow's null (no statistic) as ``may match``."""
    return pc.fill_null(mask, True).to_numpy(zero_copy_only=False)


def _usable_bounds(stats: ColumnRanges) -> tuple[pa.Array, pa.Array, np.ndarray]:
    """The bounds, and where they can judge: both present, not NaN, ordered as Spark orders."""
    low, high = stats.minimum, stats.maximum
    judged = pc.and_(low.is_valid(), high.is_valid())
    if pa.types.is_floating(low.type):
        judged = pc.and_(judged, pc.invert(pc.or_(pc.is_nan(low), pc.is_nan(high))))
    if pa.types.is_string(low.type) or pa.types.is_large_string(low.type):
        odd = pc.or_(pc.match_substring_regex(low, _MISORDERED_TEXT), pc.match_substring_regex(high, _MISORDERED_TEXT))
        judged = pc.and_(judged, pc.invert(pc.or_(odd, pc.greater(low, high))))
    return low, high, pc.fill_null(judged, False).to_numpy(zero_copy_only=False)


def _scalar(value: object, typ: pa.DataType) -> pa.Scalar | None:
    if value is None:
        return None
    try:
        return pa.scalar(value).cast(typ) if not isinstance(value, pa.Scalar) else value.cast(typ)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, TypeError, OverflowError):
        return None


def _is_nan(value: object) -> bool:
    return isinstance(value, float) and value != value


def _compare(predicate: Comparison, low: pa.Array, high: pa.Array, judged: np.ndarray) -> np.ndarray | None:
    floating = pa.types.is_floating(low.type)
    if floating and (_is_nan(predicate.value) or predicate.op in _NAN_SATISFIES):
        return None
    value = _scalar(predicate.value, low.type)
    if value is None or predicate.op not in ("=", "<", "<=", ">", ">="):
        return None
    if predicate.op == "=":
        hit = pc.and_(pc.less_equal(low, value), pc.greater_equal(high, value))
    else:
        bound = low if predicate.op in ("<", "<=") else high
        hit = {"<": pc.less, "<=": pc.less_equal, ">": pc.greater, ">=": pc.greater_equal}[predicate.op](bound, value)
    return np.logical_or(~judged, pc.fill_null(hit, True).to_numpy(zero_copy_only=False))


def _in_values(values: Sequence, low: pa.Array, high: pa.Array, judged: np.ndarray) -> np.ndarray | None:
    """x IN (values): some value lies in the file's range; sorted values are searched per file, not looped."""
    if pa.types.is_floating(low.type) and any(_is_nan(v) for v in values):
        return None
    present = [v for v in values if v is not None]
    if not present:
        return np.zeros(len(low), dtype=bool)  # x IN (NULL) keeps no row
    try:
        wanted = pc.unique(pa.array(present).cast(low.type))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, TypeError, OverflowError):
        return None
    wanted = wanted.take(pc.sort_indices(wanted))
    # the first wanted value at or above the minimum: the file may match when it is at or below the maximum
    first = _search_sorted(wanted, low)
    hit = np.zeros(len(low), dtype=bool)
    inside = first < len(wanted)
    if inside.any():
        candidates = wanted.take(pa.array(np.where(inside, first, 0)))
        hit = np.logical_and(inside, pc.fill_null(pc.less_equal(candidates, high), False).to_numpy(zero_copy_only=False))
    return np.logical_or(~judged, hit)


def _search_sorted(sorted_values: pa.Array, probes: pa.Array) -> np.ndarray:
    """For each probe, the index of the first sorted value at or above it (len when none; 0 for a null probe,
    which ``judged`` leaves out anyway)."""
    try:
        return np.searchsorted(sorted_values.to_numpy(zero_copy_only=False),
                               pc.fill_null(probes, sorted_values[0]).to_numpy(zero_copy_only=False), side="left")
    except TypeError:  # values numpy cannot order (decimals, dates as objects): rank them together in Arrow
        combined = pa.concat_arrays([sorted_values, pc.fill_null(probes, sorted_values[0]).cast(sorted_values.type)])
        ranks = pc.rank(combined, sort_keys="ascending", tiebreaker="min").to_numpy() - 1
        sorted_ranks, probe_ranks = ranks[:len(sorted_values)], ranks[len(sorted_values):]
        return np.searchsorted(sorted_ranks, probe_ranks, side="left")


def _starts_with(prefix: str, low: pa.Array, high: pa.Array, judged: np.ndarray) -> np.ndarray | None:
    """x LIKE 'prefix%': the strings with the prefix lie in [prefix, prefix's successor)."""
    if not (pa.types.is_string(low.type) or pa.types.is_large_string(low.type)) or not prefix:
        return None
    hit = pc.greater_equal(high, pa.scalar(prefix, low.type))
    successor = _successor(prefix)
    if successor is not None:
        hit = pc.and_(hit, pc.less(low, pa.scalar(successor, low.type)))
    return np.logical_or(~judged, pc.fill_null(hit, True).to_numpy(zero_copy_only=False))


def _successor(prefix: str) -> str | None:
    """The least string above every string that starts with ``prefix`` in UTF-8 byte order, or None."""
    encoded = bytearray(prefix.encode())
    while encoded:
        if encoded[-1] < 0x7F:
            encoded[-1] += 1
            return encoded.decode()
        encoded.pop()
    return None


def _not_all_excluded(leaf: Predicate, stats: ColumnRanges) -> np.ndarray:
    """The negation of ``leaf`` may match unless every value of the file satisfies ``leaf``: only a range that
    is one value (or, for a prefix, bounds that both carry it) can say so. Null rows satisfy no negation."""
    low, high, judged = _usable_bounds(stats)
    if pa.types.is_floating(low.type):
        return np.ones(len(low), dtype=bool)  # a NaN row may hide outside the range
    if isinstance(leaf, StartsWith):
        if not (pa.types.is_string(low.type) or pa.types.is_large_string(low.type)):
            return np.ones(len(low), dtype=bool)
        both = pc.and_(pc.starts_with(low, pattern=leaf.prefix), pc.starts_with(high, pattern=leaf.prefix))
        all_in = pc.fill_null(both, False).to_numpy(zero_copy_only=False)
    else:
        values = (leaf.value,) if isinstance(leaf, Comparison) and leaf.op == "=" else \
            leaf.values if isinstance(leaf, InValues) else None
        if values is None:
            return np.ones(len(low), dtype=bool)
        single = pc.fill_null(pc.equal(low, high), False).to_numpy(zero_copy_only=False)
        try:
            listed = pa.array([v for v in values if v is not None]).cast(low.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, TypeError, OverflowError):
            return np.ones(len(low), dtype=bool)
        all_in = np.logical_and(single, pc.fill_null(pc.is_in(low, value_set=listed), False).to_numpy(zero_copy_only=False))
    return ~(judged & all_in)
