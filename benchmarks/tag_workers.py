"""Tagging keys per second of task time (the commit's ``tag_task`` stage) with cold and warm Python workers.

For each table type and batch, three upserts of the same batch into the same restored table:
``cold`` (the host's bloom filter cache emptied and every Python worker's caches cleared: the first
write on a host), ``warm`` (the workers of the write before, their caches full) and ``new workers``
(the workers' caches cleared, the host's cache kept: what a write after a minute idle meets, when
Spark has replaced its Python workers).

    python benchmarks/tag_workers.py --rows 1000000 --work /tmp/tagbench
"""

from __future__ import annotations

import argparse
import logging
import shutil
import tempfile
from pathlib import Path

import pyarrow as pa
from pyspark.sql import SparkSession

from benchmarks import index_stats, ours, spark_session, workload
from benchmarks.copies import restore
from benchmarks.pristine import stage
from hoodie_datasource.index import base_file_cache

logger = logging.getLogger(__name__)
MODES = ("cold", "warm", "new workers")


def _clear(batches):
    base_file_cache.clear()
    for _ in batches:
        pass
    yield pa.RecordBatch.from_pydict({"done": [1]})


def clear_workers(spark: SparkSession) -> None:
    """Empty the caches of the Python workers (through the SQL Python runner, as the writes' mapInArrow:
    the same pool of workers) and of this process."""
    spark.range(0, 16, 1, 16).mapInArrow(_clear, "done long").collect()
    base_file_cache.clear()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "tag_workers")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logger.setLevel(logging.INFO)
    spark = spark_session.start()
    base = stage(spark, workload.base_table(args.rows, workload.SEED), args.work / "staging" / "base.parquet", False)
    host_cache = Path(tempfile.gettempdir()) / "hoodie-bloom-cache"
    for table_type in (ours.COW, ours.MOR):
        pristine, target = args.work / "pristine" / table_type, args.work / "target" / table_type
        if not pristine.exists():
            ours.write(base, pristine, table_type, "bulk_insert")
        for variant in (workload.SEED, workload.UNIFORM):
            batch = stage(spark, workload.upsert_batch(args.rows, variant),
                          args.work / "staging" / f"{variant.name}.parquet", True)
            for mode in MODES:
                if mode == "cold":
                    shutil.rmtree(host_cache, ignore_errors=True)
                if mode != "warm":
                    clear_workers(spark)
                restore(pristine, target)
                ours.write(batch, target, table_type, "upsert")
                counts = index_stats.from_stages(ours.commit_facts(target)["stages"])
                rate = counts.keys_per_second if counts else None
                logger.info("%s %s %-11s keys %d, tag_task %d ms: %s keys/s", table_type, variant.name, mode,
                            counts.keys if counts else 0, counts.tag_task_ms if counts else 0,
                            f"{rate / 1000:.0f}k" if rate else "-")


if __name__ == "__main__":
    main()
