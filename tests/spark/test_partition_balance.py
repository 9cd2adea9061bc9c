"""A per-partition write spreads the table's partitions evenly over its tasks, heaviest first
(``spark.partition_balance``), where Spark's hash of the partition values would pile several onto one task."""

from __future__ import annotations

import datetime
from collections import Counter

import pytest
from chispa import assert_df_equality
from pyspark.sql import functions as F

from hoodie_datasource import HoodieTable
from hoodie_datasource.spark.partition_balance import assign_tasks, task_keys

TASKS = 4  # the test session's spark.sql.shuffle.partitions


@pytest.mark.parametrize("tasks", [2, 3, 8, 30])
def test_each_task_key_is_sent_to_its_task_by_spark(spark, tasks):
    keys = task_keys(tasks)
    got = spark.createDataFrame([(k,) for k in keys], "k int").repartition(tasks, "k") \
        .select(F.spark_partition_id().alias("task"), "k").collect()
    assert sorted((r.task, r.k) for r in got) == list(enumerate(keys))


def test_heaviest_partitions_go_first_to_the_least_loaded_task():
    sizes = {"a": 10, "b": 50, "c": 30, "d": 30, "e": 5, "f": 1}
    assert assign_tasks(sizes, 3) == {"b": 0, "c": 1, "d": 2, "a": 1, "e": 2, "f": 2}


def _task_of_each_partition(path: str) -> dict[str, int]:
    """The task that wrote each partition's file groups in the latest commit, from the write token in the
    file names (``<fileId>_<task>-<stage>-<attempt>_<instant>.parquet``)."""
    table = HoodieTable(path)
    stats = table.commit_metadata(table.latest_commit())["partitionToWriteStats"]
    tasks = {}
    for partition, group in stats.items():
        found = {int(s["path"].rsplit("/", 1)[-1].split("_")[1].split("-")[0]) for s in group}
        assert len(found) == 1, f"partition {partition} written by tasks {found}"
        tasks[partition] = found.pop()
    return tasks


# twelve values Spark's hash spreads unevenly over four tasks (checked below), as days, strings and ints
DAYS = [datetime.date(2024, 1, 1) + datetime.timedelta(days=d) for d in range(12)]
CASES = {
    "string": ("p string", [d.isoformat() for d in DAYS], False),
    "string, hive style": ("p string", [d.isoformat() for d in DAYS], True),
    "date": ("p date", DAYS, False),
    "int": ("p int", [int(d.strftime("%Y%m%d")) for d in DAYS], True),
    # what a SQL string literal would have to escape: quotes, backslashes, a dollar, non-ASCII
    "string of quotes and backslashes": ("p string", [f"{d.isoformat()} it's \\ \"é\" $1" for d in DAYS], False),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_upsert_into_every_partition_gives_each_task_as_many(spark, table_path, case):
    kind, values, hive = CASES[case]
    schema = f"id string, ts int, {kind}, v double"
    opts = {"table.name": "balance", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
            "hive_style_partitioning": str(hive).lower()}
    hashed = Counter(r.task for r in spark.createDataFrame([(v,) for v in values], kind).repartition(TASKS, "p")
                     .select(F.spark_partition_id().alias("task")).collect())
    assert max(hashed.values()) > len(values) // TASKS  # the hash alone would not balance them
    first = [(f"k{i}-{j}", 1, v, 1.0) for i, v in enumerate(values) for j in range(3)]
    spark.createDataFrame(first, schema).write.format("hoodie").options(**opts).mode("upsert").save(table_path)
    # every partition updated, and one new partition (no task assigned: the hash places it)
    extra = values[0] + datetime.timedelta(days=400) if kind == "p date" else \
        (values[0] + 10_000 if kind == "p int" else "2030-01-01")
    batch = [(f"k{i}-0", 2, v, 2.0) for i, v in enumerate(values)] + [("new", 2, extra, 3.0)]
    spark.createDataFrame(batch, schema).repartition(3).write.format("hoodie").options(**opts) \
        .mode("upsert").save(table_path)
    tasks = _task_of_each_partition(table_path)
    old = [p for p in tasks if str(extra) not in p]
    assert len(old) == len(values)
    assert sorted(Counter(tasks[p] for p in old).values()) == [len(values) // TASKS] * TASKS
    expected = [r for r in first if not r[0].endswith("-0")] + batch
    got = spark.read.format("hoodie").load(table_path).select("id", "ts", "p", "v")
    assert_df_equality(got, spark.createDataFrame(expected, schema), ignore_row_order=True, ignore_nullable=True)
