"""Tables kept as pristine copies that measured runs restore from, and rows staged as parquet for Spark.

Loading a table is timed once (one run: context, not a compared figure)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession

from benchmarks.copies import restore, tree_bytes

logger = logging.getLogger(__name__)


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


def stage(spark: SparkSession, table: pa.Table, path: Path, cache: bool, row_groups: int | None = None) -> DataFrame:
    """``table`` as a Spark DataFrame read from one parquet file (cached when asked), written in ``row_groups``
    row groups of about equal rows (pyarrow's default size when not given): Spark splits a file by bytes but
    keeps each row group in one partition."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=-(-table.num_rows // row_groups) if row_groups else None)
    df = spark.read.parquet(str(path))
    if cache:
        df = df.cache()
        df.count()
    return df


def keep_loaded(tables: Tables, fmt: str, label: str, loader: Callable[[Path], None]) -> None:
    """``loader`` run once (timed) at the working path of ``fmt``, the table kept as its pristine copy."""
    started = time.perf_counter()
    loader(tables.work(fmt))
    tables.load_seconds[fmt] = time.perf_counter() - started
    tables.table_bytes[fmt] = tree_bytes(tables.work(fmt))
    restore(tables.work(fmt), tables.pristine(fmt))
    logger.info("loaded %s: %.1f s, %.1f MB", label, tables.load_seconds[fmt], tables.table_bytes[fmt] / 2**20)
