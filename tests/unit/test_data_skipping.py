"""Data skipping never drops a file holding a matching row, and drops the files ranges rule out (no JVM).

Random files of integers, strings and nulls: every random predicate is evaluated row by row in SQL's
three-valued logic (pyarrow's Kleene operators) as the truth, and the mask from the ranges must cover every file
with a true row. Floating point and the odd string orders get their own cases."""

from __future__ import annotations

import functools
import operator
import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hoodie_datasource.read.data_skipping import (
    AllOf, AnyOf, ColumnRanges, Comparison, InValues, Negation, NullCheck, StartsWith, Unknown, files_to_read,
)


def _ranges(files: list[pa.Array]) -> ColumnRanges:
    """Statistics as parquet keeps them: min and max of the non-null, non-NaN values."""
    typ = files[0].type
    lows, highs, nulls, counts = [], [], [], []
    for values in files:
        present = values.filter(pc.invert(pc.is_nan(values))) if pa.types.is_floating(typ) else values
        bounds = pc.min_max(present)
        lows.append(bounds["min"].as_py())
        highs.append(bounds["max"].as_py())
        nulls.append(values.null_count)
        counts.append(len(values))
    return ColumnRanges(pa.array(lows, typ), pa.array(highs, typ), pa.array(nulls, pa.int64()),
                        pa.array(counts, pa.int64()))


def _truth(predicate) -> pc.Expression:
    field = pc.field("x")
    if isinstance(predicate, Comparison):
        ops = {"=": operator.eq, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
        return ops[predicate.op](field, pc.scalar(predicate.value))
    if isinstance(predicate, InValues):
        return functools.reduce(operator.or_, [field == pc.scalar(v) for v in predicate.values])
    if isinstance(predicate, NullCheck):
        return field.is_null() if predicate.is_null else field.is_valid()
    if isinstance(predicate, StartsWith):
        return pc.starts_with(field, pattern=predicate.prefix)
    if isinstance(predicate, Negation):
        return ~_truth(predicate.child)
    if isinstance(predicate, AllOf):
        return functools.reduce(operator.and_, [_truth(c) for c in predicate.children])
    if isinstance(predicate, AnyOf):
        return functools.reduce(operator.or_, [_truth(c) for c in predicate.children])
    raise AssertionError(predicate)


def _random_predicate(rng: random.Random, value, depth: int = 0):
    pick = rng.random()
    if depth < 2 and pick < 0.3:
        children = tuple(_random_predicate(rng, value, depth + 1) for _ in range(rng.randint(2, 3)))
        return rng.choice([AllOf, AnyOf])(children)
    if depth < 2 and pick < 0.45:
        return Negation(_random_predicate(rng, value, depth + 1))
    kind = rng.random()
    if kind < 0.5:
        return Comparison("x", rng.choice(["=", "<", "<=", ">", ">="]), value())
    if kind < 0.75:
        return InValues("x", tuple(value() for _ in range(rng.randint(1, 4))))
    if kind < 0.85:
        return NullCheck("x", rng.random() < 0.5)
    return StartsWith("x", str(value())[:2]) if isinstance(value(), str) else NullCheck("x", False)


@pytest.mark.parametrize("kind", ["int", "string"])
def test_no_file_with_a_matching_row_is_skipped(kind: str) -> None:
    rng = random.Random(7)
    if kind == "int":
        value = lambda: rng.randint(0, 400)  # noqa: E731
    else:
        value = lambda: "".join(rng.choice("abcé") for _ in range(rng.randint(1, 4)))  # noqa: E731
    files = []
    for i in range(60):  # clustered files (narrow ranges), a few wide ones, some with nulls or all nulls
        base = [value() for _ in range(rng.randint(1, 30))]
        if kind == "int" and i % 5:
            start = rng.randint(0, 380)
            base = [start + rng.randint(0, 20) for _ in base]
        nulls = [None] * (rng.randint(0, 3) if i % 4 == 0 else 0)
        files.append(pa.array(base + nulls if i != 13 else [None, None], pa.int64() if kind == "int" else pa.string()))
    ranges = {"x": _ranges(files)}
    skipped_some = 0
    for _ in range(400):
        predicate = _random_predicate(rng, value)
        mask = files_to_read(predicate, ranges, len(files))
        truth = np.array([pa.table({"x": f}).filter(_truth(predicate)).num_rows > 0 for f in files])
        assert not (truth & ~mask).any(), (predicate, np.flatnonzero(truth & ~mask))
        skipped_some += int((~mask).sum() > 0)
    assert skipped_some > 100  # the ranges do rule files out


def test_ranges_decide_simple_filters() -> None:
    files = [pa.array([1, 5]), pa.array([10, 20]), pa.array([30, None]), pa.array([None, None], pa.int64())]
    ranges = {"x": _ranges(files)}
    judge = lambda p: files_to_read(p, ranges, 4).tolist()  # noqa: E731
    assert judge(Comparison("x", "=", 15)) == [False, True, False, True]  # no stats for the all-null file
    assert judge(Comparison("x", ">", 20)) == [False, False, True, True]
    assert judge(InValues("x", (2, 30, 99))) == [True, False, True, True]
    assert judge(NullCheck("x", True)) == [False, False, True, True]
    assert judge(Negation(Comparison("x", "<", 10))) == [False, True, True, True]
    assert judge(AllOf((Comparison("x", ">=", 5), Comparison("x", "<", 10)))) == [True, False, False, True]
    assert judge(Unknown()) == [True] * 4
    assert judge(Comparison("y", "=", 1)) == [True] * 4  # a column without statistics
    assert judge(Comparison("x", "=", "not a number")) == [True] * 4  # a value of another type


def test_a_one_value_file_is_skipped_by_its_negation() -> None:
    files = [pa.array(["a", "a", None]), pa.array(["a", "b"]), pa.array(["ab", "ac"])]
    ranges = {"x": _ranges(files)}
    assert files_to_read(Negation(Comparison("x", "=", "a")), ranges, 3).tolist() == [False, True, True]
    assert files_to_read(Negation(InValues("x", ("a", "b"))), ranges, 3).tolist() == [False, True, True]
    assert files_to_read(Negation(StartsWith("x", "a")), ranges, 3).tolist() == [False, True, False]


def test_nan_is_above_every_value_and_never_in_a_range() -> None:
    """Spark's ``d > 5`` holds for NaN, which parquet's ranges leave out: a file of NaNs and small values
    must be read for it, and for ``d = NaN``; ``d < 5`` and ``d = 1`` are judged from the range."""
    files = [pa.array([1.0, float("nan")]), pa.array([10.0, 11.0])]
    ranges = {"d": _ranges(files)}
    for keeps_both in (Comparison("d", ">", 5.0), Comparison("d", ">=", 5.0), Comparison("d", "=", float("nan")),
                       InValues("d", (1.0, float("nan"))), Negation(Comparison("d", "<", 5.0)),
                       Negation(Comparison("d", "=", 1.0))):
        assert files_to_read(keeps_both, ranges, 2).tolist() == [True, True], keeps_both
    assert files_to_read(Comparison("d", "<", 5.0), ranges, 2).tolist() == [True, False]
    assert files_to_read(Comparison("d", "=", 10.5), ranges, 2).tolist() == [False, True]
    nan_bound = {"d": ColumnRanges(pa.array([1.0]), pa.array([float("nan")]), pa.array([0]), pa.array([2]))}
    assert files_to_read(Comparison("d", "<", 0.5), nan_bound, 1).tolist() == [True]  # Java's NaN maximum


def test_ranges_in_utf16_order_judge_nothing() -> None:
    """Java's ``String.compareTo`` puts U+1F600 (a surrogate pair) below U+FF01; bytes put it above. A range
    holding such characters, or misordered, keeps its file."""
    java_order = {"x": ColumnRanges(pa.array(["\U0001F600"]), pa.array(["\uFF01"]), pa.array([0]), pa.array([2]))}
    assert files_to_read(Comparison("x", "=", "\uFF01"), java_order, 1).tolist() == [True]
    # {"a", "\uFF01", "\U0001F600"}: Java's range [a, \uFF01] is ordered in bytes too, yet holds U+1F600 only for Java
    ordered_both_ways = {"x": ColumnRanges(pa.array(["a"]), pa.array(["\uFF01"]), pa.array([0]), pa.array([3]))}
    assert files_to_read(Comparison("x", "=", "\U0001F600"), ordered_both_ways, 1).tolist() == [True]
    plain = {"x": ColumnRanges(pa.array(["b"]), pa.array(["d"]), pa.array([0]), pa.array([2]))}
    assert files_to_read(Comparison("x", "=", "e"), plain, 1).tolist() == [False]
    assert files_to_read(StartsWith("x", "c"), plain, 1).tolist() == [True]
    assert files_to_read(StartsWith("x", "a"), plain, 1).tolist() == [False]


def test_many_files_are_judged_in_one_pass() -> None:
    n = 100_000
    lows = np.arange(n, dtype=np.int64) * 10
    ranges = {"x": ColumnRanges(pa.array(lows), pa.array(lows + 9), pa.array(np.zeros(n, np.int64)),
                                pa.array(np.full(n, 10, np.int64)))}
    mask = files_to_read(InValues("x", tuple(range(0, 10 * n, 10 * n // 1000))), ranges, n)
    assert mask.sum() == 1000
