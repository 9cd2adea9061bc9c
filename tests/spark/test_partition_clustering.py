"""A per-partition write shuffles its batch by the partition columns (``spark.partition_clustering``): every
record of a partition path in one task, Hudi's default partition (null, empty and the literal
``__HIVE_DEFAULT_PARTITION__``) included, and column types that may render unequal values as one path
shuffled by the computed path instead."""

from __future__ import annotations

import datetime

import pytest
from chispa import assert_df_equality
from pyspark.sql import functions as F
from pyspark.sql import types as T

from hoodie_datasource.spark.partition_clustering import partition_clustering
from hoodie_datasource.table.keygen import DEFAULT_PARTITION, KeyGenerator

SCHEMA = "id string, ts int, p string, v double"
OPTS = {"table.name": "pc", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}


def test_values_of_the_default_partition_cluster_together(spark):
    df = spark.createDataFrame([(None,), ("",), (DEFAULT_PARTITION,), ("x",), ("y",)], "p string")
    by = partition_clustering(df, KeyGenerator(("id",), ("p",)))
    values = [r[0] for r in df.select(*map(F.expr, by)).collect()]
    assert values == [DEFAULT_PARTITION, DEFAULT_PARTITION, DEFAULT_PARTITION, "x", "y"]


@pytest.mark.parametrize("kind, clusters", [
    (T.IntegerType(), True), (T.LongType(), True), (T.DateType(), True), (T.TimestampType(), True),
    (T.BooleanType(), True), (T.DoubleType(), False), (T.DecimalType(10, 2), False), (T.BinaryType(), False),
])
def test_only_types_rendered_one_to_one_cluster_by_value(spark, kind, clusters):
    df = spark.createDataFrame([], T.StructType([T.StructField("id", T.StringType()), T.StructField("a", T.StringType()),
                                                 T.StructField("b", kind)]))
    by = partition_clustering(df, KeyGenerator(("id",), ("a", "b"), url_encode=True))
    assert (by is not None) == clusters
    if clusters:
        assert len(by) == 2


@pytest.mark.parametrize("hive_style", [False, True])
def test_string_fields_of_a_joined_path_cluster_by_the_path(spark, table_path, hive_style):
    """Two partition fields joined by '/': ('x/y', 'z') and ('x', 'y/z') are one path, so a key's records
    with either, in one batch written by several tasks, are combined (the later ``ts`` wins), never
    written twice."""
    schema = "id string, ts int, a string, b string"
    df = spark.createDataFrame([], schema)
    assert partition_clustering(df, KeyGenerator(("id",), ("a", "b"), hive_style=hive_style)) is None
    assert partition_clustering(df, KeyGenerator(("id",), ("a", "b"), hive_style=hive_style, url_encode=True))
    assert partition_clustering(df, KeyGenerator(("id",), ("a",), hive_style=hive_style))
    opts = {**OPTS, "partitionpath.field": "a,b", "hive_style_partitioning": str(hive_style).lower()}
    sep = "/b=" if hive_style else "/"
    # eight keys, each arriving with both spellings of its path: a shuffle by the values would part most
    first = [(f"k{i}", 1, f"x{i}{sep}y", "z") for i in range(8)]
    second = [(f"k{i}", 2, f"x{i}", f"y{sep}z") for i in range(8)]
    spark.createDataFrame(first + second, schema).repartition(4).write.format("hoodie").options(**opts) \
        .mode("upsert").save(table_path)
    got = spark.read.format("hoodie").load(table_path).select("id", "ts", "a", "b")
    assert_df_equality(got, spark.createDataFrame(second, schema), ignore_row_order=True, ignore_nullable=True)


def test_upsert_combines_a_key_across_the_default_partitions_values(spark, table_path):
    """Null and empty partition values are one partition path: the key's two records there are combined
    (the later ``ts`` wins) though they arrive with different values of ``p``, in a batch written by
    several tasks."""
    # four partitions, so the batch is written by four tasks (spark.sql.shuffle.partitions)
    spark.createDataFrame([("b", 1, "x", 1.0), ("e", 1, "y", 1.0), ("f", 1, "z", 1.0), ("g", 1, "w", 1.0)],
                          SCHEMA).write.format("hoodie").options(**OPTS).mode("upsert").save(table_path)
    batch = spark.createDataFrame([("a", 1, None, 1.0), ("a", 3, "", 3.0), ("a", 2, DEFAULT_PARTITION, 2.0),
                                   ("b", 2, "x", 2.0), ("c", 1, "y", 4.0)], SCHEMA).repartition(3)
    batch.write.format("hoodie").options(**OPTS).mode("upsert").save(table_path)
    got = spark.read.format("hoodie").load(table_path).select("id", "ts", "v", "_hoodie_partition_path")
    expected = spark.createDataFrame([("a", 3, 3.0, DEFAULT_PARTITION), ("b", 2, 2.0, "x"), ("c", 1, 4.0, "y"),
                                      ("e", 1, 1.0, "y"), ("f", 1, 1.0, "z"), ("g", 1, 1.0, "w")],
                                     "id string, ts int, v double, _hoodie_partition_path string")
    assert_df_equality(got, expected, ignore_row_order=True, ignore_nullable=True)


def test_upsert_by_a_floating_point_partition_column(spark, table_path):
    """A double partition column is shuffled by its computed path: updates find their records."""
    schema = "id string, ts int, p double, v double"
    spark.createDataFrame([("a", 1, 1.5, 1.0), ("b", 1, 2.0, 2.0)], schema).write.format("hoodie") \
        .options(**OPTS).mode("upsert").save(table_path)
    spark.createDataFrame([("a", 2, 1.5, 5.0), ("c", 1, 2.0, 3.0), ("d", 1, 3.25, 4.0)], schema) \
        .write.format("hoodie").options(**OPTS).mode("upsert").save(table_path)
    got = spark.read.format("hoodie").load(table_path).select("id", "ts", "p", "v")
    expected = spark.createDataFrame([("a", 2, 1.5, 5.0), ("b", 1, 2.0, 2.0), ("c", 1, 2.0, 3.0),
                                      ("d", 1, 3.25, 4.0)], schema)
    assert_df_equality(got, expected, ignore_row_order=True, ignore_nullable=True)


def test_upsert_by_date_partition_updates_in_place(spark, table_path):
    schema = "id string, ts int, p date, v double"
    day = datetime.date(2024, 3, 1)
    spark.createDataFrame([("a", 1, day, 1.0), ("b", 1, None, 2.0)], schema).write.format("hoodie") \
        .options(**OPTS).mode("upsert").save(table_path)
    spark.createDataFrame([("a", 2, day, 5.0), ("b", 2, None, 6.0), ("c", 1, day, 3.0)], schema) \
        .write.format("hoodie").options(**OPTS).mode("upsert").save(table_path)
    got = spark.read.format("hoodie").load(table_path).select("id", "ts", "p", "v")
    expected = spark.createDataFrame([("a", 2, day, 5.0), ("b", 2, None, 6.0), ("c", 1, day, 3.0)], schema)
    assert_df_equality(got, expected, ignore_row_order=True, ignore_nullable=True)
