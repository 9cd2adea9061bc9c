"""Read cases: incremental pull against a filtered full scan (and, in ``suite.py``, delta-rs's change data feed), and
snapshot reads against ``spark.read.parquet`` of the very files the snapshot reads (and through the
Python reader alone, to show what Spark's parquet scan of base files brings)."""

from __future__ import annotations

import os
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from benchmarks.spark_parquet import count_and_sum, full_scan
from benchmarks.spark_session import python_reader
from benchmarks.timing import Case
from hoodie_datasource import HoodieTable
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.planner import plan_read
from hoodie_datasource.table.table import Table

COMMIT_TIME = "_hoodie_commit_time"


def snapshot(spark: SparkSession, path: Path) -> DataFrame:
    return spark.read.format("hoodie").load(str(path))


def incremental(spark: SparkSession, path: Path, begin: str) -> DataFrame:
    return spark.read.format("hoodie").option("query", "incremental").option("begin.instant", begin).load(str(path))


def base_files(path: Path) -> list[str]:
    """The base files a snapshot of the table reads (latest file slices)."""
    return [os.path.join(path, s.base_relative_path) for s in plan_read(Table.load(str(path)), ReadConfig()).slices
            if s.base_relative_path]


def incremental_cases(spark: SparkSession, cow: Path) -> list[Case]:
    """The last commit of ``cow`` holds the batch."""
    begin = HoodieTable(str(cow)).completed_commits()[-2]
    return [
        Case("incremental", "hoodie incremental pull of the last commit",
             lambda: full_scan(incremental(spark, cow, begin))),
        Case("filtered_scan", f"hoodie snapshot scan filtered on {COMMIT_TIME} > previous commit",
             lambda: full_scan(snapshot(spark, cow).where(F.col(COMMIT_TIME) > begin))),
    ]


def by_path(spark: SparkSession, path: Path) -> DataFrame:
    """The table through the jvm-shim's catalog (hoodie.`path`): Spark prunes columns and pushes filters."""
    return spark.table(f"hoodie.`{path}`")


def data_columns(df: DataFrame) -> DataFrame:
    """The table's own columns: what a SQL table's ``SELECT *`` returns (the meta columns are metadata columns)."""
    return df.drop(*(c for c in df.columns if c.startswith("_hoodie_")))


def snapshot_cases(spark: SparkSession, cow: Path) -> list[Case]:
    files = base_files(cow)
    return [
        Case("cow_scan", "hoodie COW snapshot, full scan", lambda: full_scan(snapshot(spark, cow))),
        Case("cow_scan_python", "hoodie COW snapshot, full scan, every row through the Python reader",
             lambda: python_reader(spark, lambda: full_scan(snapshot(spark, cow)))),
        Case("sql_scan", "hoodie COW snapshot through SQL (hoodie.`path`), full scan",
             lambda: full_scan(by_path(spark, cow))),
        Case("parquet_scan", "spark.read.parquet, same files, full scan",
             lambda: full_scan(spark.read.parquet(*files))),
        Case("parquet_data_scan", "spark.read.parquet, same files, full scan of the data columns (SQL's SELECT *)",
             lambda: full_scan(data_columns(spark.read.parquet(*files)))),
        Case("cow_agg", "hoodie COW snapshot, count + sum(fare)", lambda: count_and_sum(snapshot(spark, cow))),
        Case("cow_agg_python", "hoodie COW snapshot, count + sum(fare), through the Python reader",
             lambda: python_reader(spark, lambda: count_and_sum(snapshot(spark, cow)))),
        Case("sql_agg", "hoodie COW snapshot through SQL (hoodie.`path`), count + sum(fare)",
             lambda: count_and_sum(by_path(spark, cow))),
        Case("parquet_agg", "spark.read.parquet, same files, count + sum(fare)",
             lambda: count_and_sum(spark.read.parquet(*files))),
    ]


def merge_on_read_cases(spark: SparkSession, before: Path, after: Path) -> list[Case]:
    """Snapshots of a merge-on-read table with the batch in log files, and of a compacted copy."""
    return [
        Case("mor_scan", "hoodie MOR snapshot before compaction, full scan", lambda: full_scan(snapshot(spark, before))),
        Case("mor_agg", "hoodie MOR snapshot before compaction, count + sum(fare)",
             lambda: count_and_sum(snapshot(spark, before))),
        Case("mor_compacted_scan", "hoodie MOR snapshot after compaction, full scan",
             lambda: full_scan(snapshot(spark, after))),
        Case("mor_compacted_agg", "hoodie MOR snapshot after compaction, count + sum(fare)",
             lambda: count_and_sum(snapshot(spark, after))),
    ]
