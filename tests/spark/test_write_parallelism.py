"""A write's tasks follow its input's size, not ``spark.sql.shuffle.partitions``: in a session with Spark's
defaults (200 shuffle partitions, adaptive execution on) a 2-row first write into a new table, by the
DataFrame writer or a stream's first micro-batch (SQL: tests/sql/test_sql_write_parallelism.py), runs
stages of a few tasks (it ran a 200-task stage, 20 s); Hudi's ``hoodie.*.shuffle.parallelism`` options,
when given, are the task count. Counted with ``SparkContext.statusTracker`` over the write's job group."""

from __future__ import annotations

import functools

import pytest
from chispa import assert_df_equality
from pyspark.sql import DataFrame

from tests.spark.streams import land, rows, run_to_end
from tests.spark_stages import stage_tasks, tasks_of

OPTS = {"table.name": "trips", "recordkey.field": "uuid", "partitionpath.field": "city", "precombine.field": "ts"}
SCHEMA = "uuid string, ts long, city string, fare double"


def two_rows(spark):
    return spark.createDataFrame([("a", 1, "sf", 1.0), ("b", 1, "nyc", 2.0)], SCHEMA)


@pytest.mark.parametrize("operation", ["upsert", "insert", "bulk_insert"])
def test_a_two_row_first_write_runs_a_few_tasks(spark_defaults, table_path, operation):
    spark = spark_defaults
    cores = spark.sparkContext.defaultParallelism
    for path in (table_path, table_path + "_again"):  # the first write of a session's kind, then warm
        tasks = tasks_of(spark, lambda p=path: two_rows(spark).write.format("hoodie").options(**OPTS)
                         .option("hoodie.datasource.write.operation", operation).mode("append").save(p))
        assert tasks and max(tasks) <= cores and len(tasks) <= 6, tasks
    assert spark.read.format("hoodie").load(table_path).count() == 2


def test_the_shuffle_parallelism_asked_for_is_the_task_count(spark_defaults, table_path):
    spark = spark_defaults
    batch = spark.createDataFrame([(f"k{i}", 1, f"c{i}", 1.0) for i in range(12)], SCHEMA)
    for operation, key in (("upsert", "hoodie.upsert.shuffle.parallelism"),
                           ("insert", "hoodie.insert.shuffle.parallelism"),
                           ("bulk_insert", "hoodie.bulkinsert.shuffle.parallelism")):
        path = f"{table_path}_{operation}"
        writer = batch.write.format("hoodie").options(**OPTS).option(key, "5") \
            .option("hoodie.datasource.write.operation", operation).mode("append")
        tasks = tasks_of(spark, lambda w=writer, p=path: w.save(p))
        assert 5 in tasks and max(tasks) == 5, (operation, tasks)
        assert spark.read.format("hoodie").load(path).count() == 12


def test_a_streams_first_micro_batch_runs_a_few_tasks(spark_defaults, tmp_path, table_path):
    spark = spark_defaults
    src = tmp_path / "in"
    land(src, "f0", rows(("a", 1, "sf", 1.0), ("b", 1, "nyc", 2.0)), 0)
    query = run_to_end(spark, src, table_path, tmp_path / "ckpt")
    tasks = stage_tasks(spark, str(query.runId))
    assert tasks and max(tasks) <= spark.sparkContext.defaultParallelism, tasks
    assert spark.read.format("hoodie").load(table_path).count() == 2


@pytest.mark.parametrize("operation", ["upsert", "insert"])
def test_an_input_of_many_small_partitions_is_read_by_a_few_tasks(spark_defaults, table_path, operation):
    """A batch made of 40 DataFrames unioned (80 partitions) is coalesced by its size before the shuffle by
    partition: no stage runs a task per input partition, and every row lands once."""
    spark = spark_defaults
    cores = spark.sparkContext.defaultParallelism
    writer = lambda df: df.write.format("hoodie").options(**OPTS).option(  # noqa: E731
        "hoodie.datasource.write.operation", operation).mode("append").save(table_path)
    writer(spark.createDataFrame([(f"k{i}", 1, f"c{i % 3}", 1.0) for i in range(60)], SCHEMA))
    slices = [spark.createDataFrame([(f"k{i}", 2, f"c{i % 3}", float(i)) for i in range(n, n + 3)], SCHEMA)
              for n in range(30, 150, 3)]
    batch = functools.reduce(DataFrame.union, slices)
    assert batch.rdd.getNumPartitions() > 4 * cores
    tasks = tasks_of(spark, lambda: writer(batch))
    assert tasks and max(tasks) <= cores, tasks
    got = spark.read.format("hoodie").load(table_path).select("uuid", "ts", "city", "fare")
    first = [(f"k{i}", 1, f"c{i % 3}", 1.0) for i in range(30)]
    stored = [(f"k{i}", 2, f"c{i % 3}", float(i)) for i in range(30, 150)]
    if operation == "insert":  # an insert keeps the stored copies of the keys it sends again
        stored += [(f"k{i}", 1, f"c{i % 3}", 1.0) for i in range(30, 60)]
    assert_df_equality(got, spark.createDataFrame(first + stored, "uuid string, ts long, city string, fare double"),
                       ignore_row_order=True, ignore_nullable=True)


def test_an_input_whose_size_spark_scaled_from_an_unknown_one_is_written(spark, table_path):
    """Rows from Python have no size; a projection of them gets one scaled down from Long.MAX_VALUE
    (``spark.sql.defaultSizeInBytes``), more file-sized tasks than a Java int counts: not a size to read by."""
    rows = spark.createDataFrame([(f"k{i}", 1, f"c{i % 3}", 1.0, "x" * 40) for i in range(20)], SCHEMA + ", pad string")
    batch = rows.select("uuid", "ts", "city", "fare")
    estimate = int(str(batch._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))
    assert 2**31 * 120 * 2**20 < estimate < 2**63 - 1
    batch.write.format("hoodie").options(**OPTS).mode("upsert").save(table_path)
    got = spark.read.format("hoodie").load(table_path).select("uuid", "ts", "city", "fare")
    assert_df_equality(got, batch, ignore_row_order=True, ignore_nullable=True)
