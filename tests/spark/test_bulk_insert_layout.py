"""A bulk insert without a sort mode writes files near the target size whatever the input's partitioning
(``spark.bulk_insert_partitioning``, ``write.bulk_insert_layout``): at most ceil(bytes / target) + 1 files
a table partition, a huge partition written by several tasks, small ones sharing a task. Hudi's modes by
name keep their own layouts, and every mode runs ``hoodie.bulkinsert.shuffle.parallelism`` tasks."""

from __future__ import annotations

import functools
import math
import os
from collections import defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from chispa import assert_df_equality
from pyspark.sql import DataFrame

from tests.spark_stages import tasks_of

TARGET = 60_000
# bloom filters sized for the files' few thousand keys: Hudi's default (60,000 entries) alone is 500 kB a file
OPTS = {"table.name": "trips", "recordkey.field": "id", "partitionpath.field": "day", "precombine.field": "ts",
        "hoodie.parquet.max.file.size": str(TARGET), "hoodie.index.bloom.num_entries": "2000",
        "hoodie.index.bloom.fpp": "0.001", "hoodie.bloom.index.filter.dynamic.max.entries": "4000"}
ROWS = 12_000
BIG = "d00"  # 70% of the rows: several files, written by several tasks; 30 small partitions share the rest


def _trips() -> pa.Table:
    ids = [f"{(i * 2654435761) % 2**32:08x}-{i:06d}" for i in range(ROWS)]
    days = [BIG if i % 10 < 7 else f"d{1 + (i // 10) % 30:02d}" for i in range(ROWS)]
    return pa.table({"id": ids, "ts": pa.array(range(ROWS), pa.int64()), "day": days,
                     "note": [f"trip {i} from {i % 97} to {i % 89}" for i in range(ROWS)]})


@pytest.fixture(scope="module")
def trips() -> pa.Table:
    return _trips()


@pytest.fixture(autouse=True)
def small_sample(monkeypatch):
    """A sample smaller than the input: an input that fits the sample is written by one task."""
    from hoodie_datasource.write import bulk_insert

    monkeypatch.setattr(bulk_insert, "SAMPLE_ROWS", ROWS // 6)


def _files(path: str) -> dict[str, list[tuple[str, int]]]:
    """Each partition's base files: (the writing task's partition id, bytes)."""
    found = defaultdict(list)
    for day in sorted(os.listdir(path)):
        if day.startswith("."):
            continue
        for name in os.listdir(os.path.join(path, day)):
            if name.endswith(".parquet"):
                token = name.split("_")[1]
                found[day].append((token.split("-")[0], os.path.getsize(os.path.join(path, day, name))))
    return found


def _shapes(spark, trips: pa.Table, tmp: Path):
    """The same rows as 200 tiny partitions (each holding every table partition's rows), a read of 200
    parquet files, 2 cached partitions."""
    tiny = spark.createDataFrame(trips).repartition(200)
    files = tmp / "input"
    files.mkdir()
    for i, part in enumerate(trips.to_batches(max_chunksize=ROWS // 200)):
        pq.write_table(pa.Table.from_batches([part]), files / f"part-{i:03d}.parquet")
    cached = spark.createDataFrame(trips).coalesce(2).cache()
    assert cached.count() == ROWS
    return {"tiny": tiny, "files": spark.read.parquet(str(files)), "cached": cached}


def test_files_near_the_target_size_for_any_input_partitioning(spark, trips, tmp_path):
    for shape, df in _shapes(spark, trips, tmp_path).items():
        _check_layout(spark, trips, df, str(tmp_path / shape), shape)


def test_many_partitions_find_their_units_by_a_join(spark, trips, tmp_path, monkeypatch):
    """Past ``MAX_BALANCED_PARTITIONS`` table partitions the units come from a broadcast join instead of a
    literal map: the same layout."""
    from hoodie_datasource.spark import bulk_insert_partitioning

    monkeypatch.setattr(bulk_insert_partitioning, "MAX_BALANCED_PARTITIONS", 4)
    df = spark.createDataFrame(trips).coalesce(2)
    _check_layout(spark, trips, df, str(tmp_path / "joined"), "joined")


def _check_layout(spark, trips: pa.Table, df: DataFrame, path: str, shape: str) -> None:
    df.write.format("hoodie").options(**OPTS).mode("bulk_insert").save(path)
    got = spark.read.format("hoodie").load(path).select(*trips.column_names)
    expected = spark.createDataFrame(trips)
    assert_df_equality(got.orderBy("id"), expected.orderBy("id"), ignore_nullable=True)
    files = _files(path)
    assert len(files) == 31
    for day, written in files.items():
        size = sum(b for _, b in written)
        assert len(written) <= math.ceil(size / TARGET) + 1, (shape, day, written)
    big = files[BIG]
    # near the target: it bounds the data, the footer (bloom filter, ~7 kB here) comes on top
    assert len(big) >= 3 and all(TARGET / 2 <= b <= TARGET * 1.25 for _, b in big), (shape, big)
    assert len({task for task, _ in big}) > 1, f"{shape}: one task wrote the whole of {BIG}"
    # the small partitions share tasks
    tasks = {task for written in files.values() for task, _ in written}
    assert 1 < len(tasks) < 20, (shape, tasks)
    loads = defaultdict(int)
    for written in files.values():
        for task, b in written:
            loads[task] += b
    assert max(loads.values()) <= 1.5 * sum(loads.values()) / len(loads), (shape, dict(loads))


def test_none_by_name_keeps_the_inputs_partitioning(spark, trips, tmp_path):
    """Hudi's NONE, asked for by name: a file per input partition in each table partition it holds rows of."""
    df = spark.createDataFrame(trips).repartition(50)
    path = str(tmp_path / "none")
    df.write.format("hoodie").options(**OPTS, **{"hoodie.bulkinsert.sort.mode": "NONE"}).mode("bulk_insert").save(path)
    assert len(_files(path)[BIG]) >= 50
    assert spark.read.format("hoodie").load(path).count() == ROWS


@pytest.mark.parametrize("mode", ["PARTITION_PATH_REPARTITION", "PARTITION_PATH_REPARTITION_AND_SORT",
                                  "PARTITION_SORT", "GLOBAL_SORT", None])
def test_every_mode_honours_the_shuffle_parallelism(spark, trips, tmp_path, mode):
    """``hoodie.bulkinsert.shuffle.parallelism`` tasks write; the modes shuffling by partition path write each
    partition from one task (a file each but where it rolls over), the sorted ones keep their keys in order."""
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.bulkinsert.shuffle.parallelism": "3"} | ({"hoodie.bulkinsert.sort.mode": mode} if mode else {})
    spark.createDataFrame(trips).repartition(7).write.format("hoodie").options(**opts).mode("bulk_insert").save(path)
    files = _files(path)
    assert {task for written in files.values() for task, _ in written} <= {"0", "1", "2"}
    if mode and mode.startswith("PARTITION"):
        assert all(len({task for task, _ in written}) == 1 for written in files.values())
        assert all(len(written) == 1 for day, written in files.items() if day != BIG)
    if mode in ("PARTITION_SORT", "GLOBAL_SORT"):
        for day in files:
            for name in (n for n in os.listdir(os.path.join(path, day)) if n.endswith(".parquet")):
                keys = pq.read_table(os.path.join(path, day, name), columns=["_hoodie_record_key"]).column(0)
                assert keys.to_pylist() == sorted(keys.to_pylist())
    assert spark.read.format("hoodie").load(path).select("id").distinct().count() == ROWS
    assert spark.read.format("hoodie").load(path).count() == ROWS


@pytest.mark.parametrize("operation,index", [("upsert", "BLOOM"), ("insert", "BLOOM"), ("upsert", "GLOBAL_BLOOM")])
def test_a_first_upsert_or_insert_sizes_its_files_by_its_records(spark, trips, tmp_path, operation, index):
    """Into a new table an upsert or insert plans its files by the bytes its records take, measured on a sample
    (Hudi's 1024-byte estimate would make files of a tenth of the target here): by each task on its own
    records where the tasks plan their partitions' inserts, by the driver on the keyed records under a global
    index; the estimate option, when given, still decides."""
    opts = {**OPTS, "hoodie.index.type": index}
    path = str(tmp_path / "measured")
    df = spark.createDataFrame(trips)
    df.write.format("hoodie").options(**opts).mode(operation).save(path)
    big = _files(path)[BIG]
    assert len(big) <= math.ceil(sum(b for _, b in big) / TARGET) + 1, big
    assert spark.read.format("hoodie").load(path).count() == ROWS
    estimated = str(tmp_path / "estimated")
    df.write.format("hoodie").options(**opts, **{"hoodie.copyonwrite.record.size.estimate": "1024"}) \
        .mode(operation).save(estimated)
    assert len(_files(estimated)[BIG]) > 2 * len(big)


def test_a_first_upsert_of_many_small_partitions_reads_them_once(spark, trips, tmp_path):
    """60 Arrow slices unioned, upserted into a new table: its tasks measure the records' size on their own
    records (a sample's limit on the driver ran a task per slice), and the shuffle by partition reads the
    slices by as many tasks as their bytes ask for (it ran a task per slice): no stage runs one."""
    slices = [spark.createDataFrame(pa.Table.from_batches([part])) for part in trips.to_batches(max_chunksize=ROWS // 60)]
    tiny = functools.reduce(DataFrame.union, slices)
    path = str(tmp_path / "t")
    tasks = tasks_of(spark, lambda: tiny.write.format("hoodie").options(**OPTS).mode("upsert").save(path))
    assert tasks and max(tasks) < len(slices), tasks
    big = _files(path)[BIG]
    assert len(big) <= math.ceil(sum(b for _, b in big) / TARGET) + 1, big
    assert_df_equality(spark.read.format("hoodie").load(path).select("id", "ts", "day", "note"),
                       spark.createDataFrame(trips), ignore_row_order=True, ignore_nullable=True)


def test_many_small_partitions_of_known_size_are_read_once(spark, trips, tmp_path):
    """60 Arrow slices unioned (Spark knows their size): read once into a checkpoint of a partition per core,
    so no stage of the write runs a task per slice (the count, the sample's limit and the write each did)."""
    slices = [spark.createDataFrame(pa.Table.from_batches([part])) for part in trips.to_batches(max_chunksize=ROWS // 60)]
    tiny = functools.reduce(DataFrame.union, slices)
    path = str(tmp_path / "t")
    tasks = tasks_of(spark, lambda: tiny.write.format("hoodie").options(**OPTS).mode("bulk_insert").save(path))
    assert tasks and max(tasks) < len(slices), tasks
    assert_df_equality(spark.read.format("hoodie").load(path).select("id", "ts", "day", "note"),
                       spark.createDataFrame(trips), ignore_row_order=True, ignore_nullable=True)
