"""hoodie-datasource writes as measured cases: upserts of copy-on-write and merge-on-read tables,
and compaction. Options are the library's defaults apart from naming the table's fields."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame

from benchmarks.copies import restore
from benchmarks.timing import Case
from benchmarks.workload import KEY, ORDERING, PARTITION
from hoodie_datasource import HoodieTable

COW = "COPY_ON_WRITE"
MOR = "MERGE_ON_READ"
STAGE_PREFIX = "hoodie.stage."
# the bucket index case: 4 buckets per partition (Hudi's Flink default; its Spark default, 256, would make
# files of a few hundred rows at these sizes), base files without the bloom filter no bucket index reads
BUCKET_INDEX = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4",
                "hoodie.parquet.bloom.filter.enabled": "false"}


def options(table_type: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The write options: the table's fields and type, and ``extra`` (an index, say)."""
    return {"hoodie.table.name": "trips", "recordkey.field": KEY, "precombine.field": ORDERING,
            "partitionpath.field": PARTITION, "storage.type": table_type, **(extra or {})}


def write(df: DataFrame, path: Path, table_type: str, mode: str, extra: dict[str, str] | None = None) -> None:
    df.write.format("hoodie").options(**options(table_type, extra)).mode(mode).save(str(path))


def commit_facts(path: Path, instant: str | None = None) -> dict[str, Any]:
    """Bytes written (sum of the write stats' totalWriteBytes) and stage timings of a commit (the latest
    by default), from its metadata."""
    table = HoodieTable(str(path))
    instant = instant or table.latest_commit()
    metadata = table.commit_metadata(instant)
    stats = [s for group in metadata.get("partitionToWriteStats", {}).values() for s in group]
    extra = metadata.get("extraMetadata") or {}
    stages = {k[len(STAGE_PREFIX):].removesuffix(".ms"): int(v) for k, v in extra.items() if k.startswith(STAGE_PREFIX)}
    return {"instant": instant, "bytes": sum(int(s.get("totalWriteBytes") or 0) for s in stats),
            "files": len(stats), "stages": stages}


def upsert_case(key: str, label: str, batch: DataFrame, pristine: Path, target: Path, table_type: str,
                extra: dict[str, str] | None = None) -> Case:
    return Case(key, label, run=lambda: write(batch, target, table_type, "upsert", extra),
                prepare=lambda: restore(pristine, target), facts=lambda: commit_facts(target))


def bulk_insert_case(key: str, label: str, rows: DataFrame, target: Path, table_type: str) -> Case:
    """The first load: ``rows`` bulk-inserted into a new table at ``target`` (removed before each run)."""
    return Case(key, label, run=lambda: write(rows, target, table_type, "bulk_insert"),
                prepare=lambda: shutil.rmtree(target, ignore_errors=True), facts=lambda: commit_facts(target))


def compaction_case(key: str, label: str, pristine: Path, target: Path) -> Case:
    """Compact a merge-on-read table restored from ``pristine`` (its upsert not yet compacted)."""
    done: list[str] = []

    def run() -> None:
        done[:] = HoodieTable(str(target)).compact()

    return Case(key, label, run=run, prepare=lambda: restore(pristine, target),
                facts=lambda: commit_facts(target, done[-1]) if done else {})
