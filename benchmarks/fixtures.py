"""The base table loaded once into every format, each kept as a pristine copy that measured runs
restore from. Loading is timed once (one run each: context, not a compared figure)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession

from benchmarks import floor, ours, peer_delta, peer_iceberg
from benchmarks.copies import restore, tree_bytes
from benchmarks.workload import PARTITION

logger = logging.getLogger(__name__)

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


@dataclass
class Tables:
    """Pristine copies under ``root/pristine/<format>``; runs restore them into ``root/work/<format>``."""

    root: Path
    formats: tuple[str, ...]
    load_seconds: dict[str, float] = field(default_factory=dict)
    table_bytes: dict[str, int] = field(default_factory=dict)

    def pristine(self, fmt: str) -> Path:
        return self.root / "pristine" / fmt

    def work(self, fmt: str) -> Path:
        return self.root / "work" / fmt


def stage(spark: SparkSession, table: pa.Table, path: Path, cache: bool) -> DataFrame:
    """``table`` as a Spark DataFrame read from one parquet file (cached when asked)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    df = spark.read.parquet(str(path))
    if cache:
        df = df.cache()
        df.count()
    return df


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
        started = time.perf_counter()
        loaders[fmt](tables.work(fmt))
        tables.load_seconds[fmt] = time.perf_counter() - started
        tables.table_bytes[fmt] = tree_bytes(tables.work(fmt))
        restore(tables.work(fmt), tables.pristine(fmt))
        logger.info("loaded %s: %.1f s, %.1f MB", LOADS[fmt], tables.load_seconds[fmt],
                    tables.table_bytes[fmt] / 2**20)
    return tables
