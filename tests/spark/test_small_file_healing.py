"""A table left with many small files (a bulk insert in Hudi's NONE mode from a 50-partition input) heals:
later inserts fill a partition's small files first, smallest first (``hoodie.parquet.small.file.limit``,
Hudi's ``UpsertPartitioner`` / ``SparkUpsertDeltaCommitPartitioner``), so the partition's small files
become fewer and no new file group is opened while small ones have room. Filling never merges two file
groups into one: the file-group count stays, as in Hudi, where only clustering lowers it."""

from __future__ import annotations

import hashlib
import os
from collections import defaultdict

import pytest

OPTS = {
    "table.name": "t", "recordkey.field": "id", "partitionpath.field": "day", "precombine.field": "ts",
    "hoodie.parquet.max.file.size": "60000", "hoodie.parquet.small.file.limit": "40000",
    # bloom filters sized for the few hundred keys of a file, so that the files' sizes are their rows'
    "hoodie.index.bloom.num_entries": "500", "hoodie.index.bloom.fpp": "0.01",
    "hoodie.bloom.index.filter.dynamic.max.entries": "1000",
}
SCHEMA = "id string, ts long, day string, note string"
DAYS = 4


def _rows(start: int, count: int, ts: int = 0) -> list[tuple]:
    return [(f"id-{i:06d}", ts, f"d{i % DAYS}", hashlib.sha256(str(i).encode()).hexdigest() * 3)
            for i in range(start, start + count)]


def latest_file_sizes(path: str) -> dict[str, dict[str, int]]:
    """Each partition's file groups and the size of their latest base file."""
    found: dict[str, dict[str, tuple[str, int]]] = defaultdict(dict)
    for day in (d for d in os.listdir(path) if not d.startswith(".")):
        for name in (n for n in os.listdir(os.path.join(path, day)) if n.endswith(".parquet")):
            file_id, instant = name.split("_")[0], name.rsplit("_", 1)[1]
            if instant > found[day].get(file_id, ("", 0))[0]:
                found[day][file_id] = (instant, os.path.getsize(os.path.join(path, day, name)))
    return {day: {f: size for f, (_, size) in groups.items()} for day, groups in found.items()}


def small_files(path: str) -> dict[str, int]:
    limit = int(OPTS["hoodie.parquet.small.file.limit"])
    return {day: sum(size < limit for size in groups.values()) for day, groups in latest_file_sizes(path).items()}


def file_groups(path: str) -> dict[str, int]:
    return {day: len(groups) for day, groups in latest_file_sizes(path).items()}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_inserts_fill_the_small_files_a_none_bulk_insert_left(spark, table_path, table_type):
    # merge-on-read fills one small file a partition per write by default (Hudi's
    # hoodie.merge.small.file.group.candidates.limit): here as many as copy-on-write does
    opts = {**OPTS, "hoodie.datasource.write.table.type": table_type,
            "hoodie.merge.small.file.group.candidates.limit": "100"}
    loaded = 2000
    spark.createDataFrame(_rows(0, loaded), SCHEMA).repartition(50).write.format("hoodie").options(**opts) \
        .option("hoodie.bulkinsert.sort.mode", "NONE").mode("bulk_insert").save(table_path)
    groups, small = file_groups(table_path), small_files(table_path)
    assert all(n >= 40 for n in groups.values()) and small == groups  # ~50 files of ~10 rows a partition
    history = [sum(small.values())]
    written = loaded
    for round_ in range(1, 4):
        # 2000 new keys and 100 updates of loaded ones a round, in every partition
        batch = _rows(written, 2000, round_) + _rows(round_ * 100, 100, round_)
        written += 2000
        spark.createDataFrame(batch, SCHEMA).write.format("hoodie").options(**opts).mode("upsert").save(table_path)
        now = file_groups(table_path)
        assert now == groups, f"round {round_}: inserts opened file groups while small ones had room"
        history.append(sum(small_files(table_path).values()))
        assert history[-1] <= history[-2], history
    # the first round fills files to the record size the load's commit shows, which its files' footers
    # inflate (a 10-row file is most of it footer, as Hudi's AverageRecordSizeUtils counts it too); the
    # next rounds, sized by the first's larger files, fill them past the limit
    assert history[-1] < history[0] - 10, history
    got = spark.read.format("hoodie").load(table_path)
    assert got.count() == got.select("id").distinct().count() == written
    assert got.filter("ts = 3").count() == 2100  # the last round's new keys and updates
