"""Spark's filters as data skipping judges them (``spark.filters``; PySpark's filter classes, no JVM): the pushed
filters of the Python reader path, and the filter trees the jvm-shim hands a file listing."""

from __future__ import annotations

import base64
import json

import pyarrow as pa
from pyspark.sql import datasource as sds
from pyspark.sql.types import VariantVal

from hoodie_datasource.read.data_skipping import ColumnRanges, files_to_read
from hoodie_datasource.spark.filters import query_predicate, skipping_predicate

# files of x: ["a", "a", null], ["a", "a"], [null, null] (or no statistics: Hudi counts them as nulls), ["b", "c"]
RANGES = {"x": ColumnRanges(pa.array(["a", "a", None, "b"]), pa.array(["a", "a", None, "c"]), pa.array([1, 0, 2, 0]),
                            pa.array([3, 2, 2, 2]))}


def judge(predicate) -> list[bool]:
    return files_to_read(predicate, RANGES, 4).tolist()


def test_a_null_safe_equality_is_never_null() -> None:
    """``x <=> 'a'`` is false for a null x, so ``NOT (x <=> 'a')`` keeps the nulls: a file of "a"s with a null
    must be read for it, where ``NOT (x = 'a')`` (unknown for a null) skips it."""
    assert judge(skipping_predicate(sds.EqualNullSafe(("x",), "a"))) == [True, True, True, False]
    assert judge(skipping_predicate(sds.Not(sds.EqualNullSafe(("x",), "a")))) == [True, False, True, True]
    assert judge(skipping_predicate(sds.Not(sds.EqualTo(("x",), "a")))) == [False, False, True, True]
    assert judge(skipping_predicate(sds.EqualNullSafe(("x",), None))) == [True, False, True, False]


def _leaf(name: str, column: str, value: str | None = None) -> dict:
    """A leaf as the shim serializes it (Spark's serialization of pushed filters: the value as a variant)."""
    leaf = {"name": name, "columnPath": [column], "isNegated": False}
    if value is not None:
        variant = VariantVal.parseJson(value)
        leaf["value"] = {"value": base64.b64encode(variant.value).decode(),
                         "metadata": base64.b64encode(variant.metadata).decode()}
    return leaf


def test_the_shims_filter_trees() -> None:
    """``And``, ``Or`` and ``Not`` around leaves, which PySpark's pushed filters cannot express; a leaf of a kind
    PySpark does not know judges nothing."""
    either = {"name": "Or", "children": [_leaf("EqualTo", "x", '"b"'), _leaf("IsNull", "x")]}
    assert judge(query_predicate(json.dumps([either]))) == [True, False, True, True]
    neither = {"name": "Not", "child": {"name": "Or", "children": [_leaf("EqualTo", "x", '"a"'), _leaf("IsNull", "x")]}}
    assert judge(query_predicate(json.dumps([neither]))) == [False, False, True, True]
    both = [_leaf("In", "x", '["a", "q"]'), {"name": "And", "children": [_leaf("StringStartsWith", "x", '"a"'),
                                                                          _leaf("IsNotNull", "x")]}]
    assert judge(query_predicate(json.dumps(both))) == [True, True, True, False]
    assert judge(query_predicate(json.dumps([_leaf("CollatedEqualTo", "x", '"z"')]))) == [True] * 4
    assert judge(query_predicate(json.dumps([{"name": "Or", "children": [_leaf("EqualTo", "x", '"z"'),
                                                                          _leaf("Unheard", "x")]}]))) == [True] * 4
