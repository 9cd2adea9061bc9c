"""A write's input of many relations (DataFrames unioned) is planned once: the write builds on the rows of its
executed plan (``spark.planned_input``), and every row lands once, whichever path the write takes."""

from __future__ import annotations

import functools

import pytest
from chispa import assert_df_equality
from pyspark.sql import DataFrame

from hoodie_datasource.spark.input_size import leaves
from hoodie_datasource.spark.planned_input import MANY_RELATIONS, planned_once

SCHEMA = "uuid string, ts long, city string, fare double"
OPTS = {"table.name": "trips", "recordkey.field": "uuid", "partitionpath.field": "city", "precombine.field": "ts"}
# one slice past the threshold: each slice a DataFrame of a Python list, whose every partition (4 a slice) is
# a Python task at each action on the union
SLICES = MANY_RELATIONS + 1


def _slices(spark, first: int, last: int, ts: int) -> DataFrame:
    """Rows ``first`` to ``last`` as DataFrames of 3 rows each, unioned."""
    return functools.reduce(DataFrame.union, [
        spark.createDataFrame([(f"k{i}", ts, f"c{i % 3}", float(i * ts)) for i in range(n, min(n + 3, last))], SCHEMA)
        for n in range(first, last, 3)])


def test_a_union_of_many_dataframes_becomes_one_relation_of_the_same_rows(spark):
    batch = _slices(spark, 0, 3 * SLICES, 1)
    assert leaves(batch) == SLICES > MANY_RELATIONS
    planned = planned_once(batch)
    assert leaves(planned) == 1
    assert planned.schema == batch.schema
    assert_df_equality(planned, batch, ignore_row_order=True)


def test_a_plan_of_few_relations_is_kept(spark):
    few = _slices(spark, 0, 3 * MANY_RELATIONS, 1)
    assert planned_once(few) is few
    one = spark.createDataFrame([("a", 1, "sf", 1.0)], SCHEMA)
    assert planned_once(one) is one


@pytest.mark.parametrize("extra", [{"hoodie.datasource.write.table.type": "MERGE_ON_READ"},  # by partition, log files
                                   {"hoodie.index.type": "GLOBAL_SIMPLE"}],  # by file group, several jobs
                         ids=["mor-by-partition", "global-by-file-group"])
def test_an_upsert_of_many_dataframes_unioned_lands_every_row_once(spark, table_path, extra):
    write = lambda df: df.write.format("hoodie").options(**OPTS, **extra).mode("upsert").save(table_path)  # noqa: E731
    write(spark.createDataFrame([(f"k{i}", 1, f"c{i % 3}", float(i)) for i in range(60)], SCHEMA))
    last = 30 + 3 * SLICES  # keys 30 to 59 updated, the rest new
    write(_slices(spark, 30, last, 2))
    got = spark.read.format("hoodie").load(table_path).select("uuid", "ts", "city", "fare")
    expected = [(f"k{i}", 1, f"c{i % 3}", float(i)) for i in range(30)] \
        + [(f"k{i}", 2, f"c{i % 3}", float(i * 2)) for i in range(30, last)]
    assert_df_equality(got, spark.createDataFrame(expected, SCHEMA), ignore_row_order=True, ignore_nullable=True)
