"""Plain Spark parquet: the bulk reload an upsert replaces, and the reads hoodie's reads are held to."""

from __future__ import annotations

import shutil
from pathlib import Path

from pyspark.sql import DataFrame

from benchmarks.copies import restored_write, tree_bytes
from benchmarks.timing import Case
from benchmarks.workload import PARTITION

AGGREGATE = ("count(*)", "sum(fare)")


def reload(merged: DataFrame, path: Path) -> None:
    merged.write.partitionBy(PARTITION).mode("overwrite").parquet(str(path))


def reload_case(key: str, label: str, merged: DataFrame, pristine: Path, target: Path) -> Case:
    """Overwrite the whole table (restored from ``pristine``, the loaded data) with ``merged``: all data
    with the batch applied, computed and cached beforehand, so only the rewrite is timed."""
    return restored_write(key, label, lambda: reload(merged, target), pristine, target)


def partitioned_write_case(key: str, label: str, rows: DataFrame, target: Path) -> Case:
    """``rows`` written by Spark as parquet partitioned by day into a new directory (removed before each run)."""
    return Case(key, label, run=lambda: rows.write.partitionBy(PARTITION).parquet(str(target)),
                prepare=lambda: shutil.rmtree(target, ignore_errors=True), facts=lambda: {"bytes": tree_bytes(target)})


def full_scan(df: DataFrame) -> None:
    """Read every row and column (the noop sink materializes rows and discards them)."""
    df.write.format("noop").mode("overwrite").save()


def count_and_sum(df: DataFrame) -> None:
    df.selectExpr(*AGGREGATE).collect()
