"""The base table loaded once into every format of ``run.py``, each kept as a pristine copy that measured
runs restore from (``pristine.py``)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from pyspark.sql import SparkSession

from benchmarks import floor, ours, peer_delta, peer_iceberg
from benchmarks.pristine import Tables, keep_loaded, stage
from benchmarks.workload import PARTITION

COW, MOR, DELTA, DELTA_CDF, ICEBERG, PLAIN, RELOAD = "cow", "mor", "delta", "delta_cdf", "iceberg", "plain", "reload"
MOR_BUCKET = "mor_bucket"
LOADS = {
    COW: "hoodie COW bulk_insert",
    MOR: "hoodie MOR bulk_insert",
    MOR_BUCKET: "hoodie MOR bulk_insert, BUCKET index (4 buckets a partition, no bloom filters)",
    DELTA: "delta-rs write_deltalake",
    DELTA_CDF: "delta-rs write_deltalake, change data feed on",
    ICEBERG: "pyiceberg append (SQLite catalog)",
    PLAIN: "pyarrow write_table, a file per day (the floor's copy)",
    RELOAD: "Spark parquet, partitionBy(dt) (the reload's copy)",
}


def load(spark: SparkSession, base: pa.Table, root: Path, formats: tuple[str, ...]) -> Tables:
    """Load ``base`` into each of ``formats`` at its working path, then keep a pristine copy (pyiceberg
    records absolute paths: a table must be created where its runs will find it)."""
    tables = Tables(root, formats)
    base_df = stage(spark, base, root / "staging" / "base.parquet", cache=False)
    loaders = {
        COW: lambda path: ours.write(base_df, path, ours.COW, "bulk_insert"),
        MOR: lambda path: ours.write(base_df, path, ours.MOR, "bulk_insert"),
        MOR_BUCKET: lambda path: ours.write(base_df, path, ours.MOR, "bulk_insert", ours.BUCKET_INDEX),
        DELTA: lambda path: peer_delta.load(base, path, change_data_feed=False),
        DELTA_CDF: lambda path: peer_delta.load(base, path, change_data_feed=True),
        ICEBERG: lambda path: peer_iceberg.load(base, path),
        PLAIN: lambda path: floor.load(base, path),
        RELOAD: lambda path: base_df.write.partitionBy(PARTITION).parquet(str(path)),
    }
    for fmt in formats:
        keep_loaded(tables, fmt, LOADS[fmt], loaders[fmt])
    return tables

