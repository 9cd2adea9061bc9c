"""``hoodie.index.type=RECORD_INDEX`` through Spark (``format("hoodie")``): the records are shuffled to a task per
file group of the record index (``RecordIndex.lookup_task_of``), which combines them, looks their keys up there and
tags them, in one shuffle, with no join and nothing broadcast through the driver; upserts, deletes and a key moving
partition both ways of ``hoodie.record.index.update.partition.path``, on copy-on-write and merge-on-read tables,
against a model; the record index holds exactly the table's keys after each write."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql import Row
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from hoodie_datasource.client.write_client import start_write
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.metadata.keys import file_group_indexes
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.spark.lookup_routing import file_group_sql
from hoodie_datasource.spark.write_dag import _schema_with, _tagged_in_lookup_tasks, _tags_in_lookup_tasks
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.meta_columns import (
    FILE_ID_COLUMN,
    IS_DELETE_COLUMN,
    LOCATION_PARTITION_COLUMN,
    PARTITION_PATH_COLUMN,
    RECORD_KEY_COLUMN,
)
from tests.metadata_checks import assert_record_index_true
from tests.spark_stages import tasks_of
from tests.unit.test_metadata_records import JAVA_SHARDS, SHARD_KEYS
from tests.unit.test_record_index import snapshot

pytestmark = pytest.mark.spark

FILE_GROUPS = 5
OPTS = {"table.name": "ri", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
        "hoodie.index.type": "RECORD_INDEX", "hoodie.metadata.record.index.enable": "true",
        "hoodie.metadata.record.index.min.filegroup.count": str(FILE_GROUPS),
        "hoodie.metadata.record.index.max.filegroup.count": str(FILE_GROUPS), "hoodie.parquet.small.file.limit": "0"}


def in_partitions(spark, parts):
    """A DataFrame whose input partition ``i`` holds the rows of ``parts[i]``."""
    df = spark.createDataFrame(spark.sparkContext.parallelize(parts, len(parts)).flatMap(lambda rows: rows))
    assert df.rdd.glom().map(len).collect() == [len(rows) for rows in parts]
    return df


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_spark_writes_tag_through_the_record_index(spark, tmp_path, table_type):
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.datasource.write.table.type": table_type}
    model: dict[str, tuple[str, str, int]] = {}

    def write(rows, operation="upsert", also=(), **extra):
        parts = [[Row(id=i, ts=t, p=p, v=v) for i, t, p, v in part] for part in (rows, also) if part]
        df = in_partitions(spark, parts)
        return tasks_of(spark, lambda: df.write.format("hoodie").options(**opts, **extra).option(
            "hoodie.datasource.write.operation", operation).mode("append").save(path))

    write([(f"k{i:03d}", 1, "xyz"[i % 3], i) for i in range(300)], "bulk_insert")
    model.update({f"k{i:03d}": ("xyz"[i % 3], "xyz"[i % 3], i) for i in range(300)})
    tasks = write([(f"k{i:03d}", 2, "xyz"[i % 3], -i) for i in range(0, 300, 7)] + [("n1", 2, "x", 1)])
    model.update({f"k{i:03d}": ("xyz"[i % 3], "xyz"[i % 3], -i) for i in range(0, 300, 7)} | {"n1": ("x", "x", 1)})
    assert FILE_GROUPS in tasks, f"a lookup task per record-index file group: stages of {tasks} tasks"
    assert snapshot(path) == model
    assert_record_index_true(path)
    write([("k001", 3, "x", 0), ("k002", 3, "y", 0), ("gone", 3, "x", 0)], "delete")
    del model["k001"], model["k002"]
    write([("k004", 4, "z", 44)])  # stored in y: updated there
    model["k004"] = ("y", "z", 44)
    write([("k005", 5, "x", 55)], **{"hoodie.record.index.update.partition.path": "true"})  # moves from z
    model["k005"] = ("x", "x", 55)
    # keys in both input partitions, updates and inserts: each key's latest record, updated where it is stored
    write([("k010", 6, "y", 6), ("k011", 6, "z", 6), ("n2", 6, "y", 6)],
          also=[("k010", 7, "x", 7), ("n2", 5, "z", 5), ("n3", 7, "z", 7)])
    model.update({"k010": ("y", "x", 7), "k011": ("z", "z", 6), "n2": ("y", "y", 6), "n3": ("z", "z", 7)})
    assert snapshot(path) == model
    # a record without a key is refused where the records are keyed, after the shuffle: nothing is written
    keyless = spark.createDataFrame([("k012", 8, "x", 8), (None, 8, "x", 8)], "id string, ts long, p string, v long")
    with pytest.raises(Exception, match="Record key field 'id' is null or empty in 1 record"):
        keyless.write.format("hoodie").options(**opts).option("hoodie.datasource.write.operation", "upsert").mode(
            "append").save(path)
    assert snapshot(path) == model
    assert_record_index_true(path)


def test_spark_routes_keys_to_the_file_group_java_picks(spark):
    """The lookup task Spark computes from the key field (``lookup_routing``, Java's ``String.hashCode`` by
    reflection) is ``mapRecordKeyToFileGroupIndex``: Hudi 0.15's file groups for non-ASCII keys, a supplementary
    character, "polygenelubricants" (its hash is Integer.MIN_VALUE) and random keys, and ours for integer keys,
    whose key is Java's ``toString`` of the value."""
    strings = [*SHARD_KEYS, *(f"ключ-{i}-😀-{i * 7919}" for i in range(500))]
    longs = [0, 1, -1, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63), *range(-300, 300, 7)]
    df = spark.createDataFrame([(k, None) for k in strings] + [(None, n) for n in longs], "s string, n long")
    for count in (*JAVA_SHARDS, 3):
        got = df.select(F.expr(file_group_sql("s", count)).alias("s"), F.expr(file_group_sql("n", count)).alias("n"))
        rows = got.collect()
        assert [r.s for r in rows[:len(strings)]] == file_group_indexes(pa.array(strings), count).tolist()
        assert [r.n for r in rows[len(strings):]] == file_group_indexes(pa.array(map(str, longs)), count).tolist()
        if count in JAVA_SHARDS:
            assert [r.s for r in rows[:len(SHARD_KEYS)]] == JAVA_SHARDS[count]


@pytest.mark.parametrize(("key", "routed_by_spark"), [("id", True), ("n", True), ("id,n", False)])
def test_an_upsert_tags_its_records_in_the_tasks_that_look_their_keys_up(spark, tmp_path, key, routed_by_spark):
    """An upsert's one tagging shuffle: file group ``i`` of the record index is looked up by task ``i`` alone (Hudi's
    ``PartitionIdPassthrough``), which gets every record of its keys and combines them (a key arriving in two
    input partitions keeps its latest record), then tags them: every stored key with the file group holding it,
    updated in its stored partition, every new key with none, each key once. The plan has that one shuffle: no
    join, nothing broadcast. A key that is one string or integer field is routed by Spark (``lookup_routing``:
    the records reach Python once, after the shuffle); a complex key by the pass keying the records."""
    path = str(tmp_path / "t")
    opts = {**OPTS, "recordkey.field": key}
    stored = [Row(id=f"k{i:03d}", n=i, ts=1, p="xyz"[i % 3], v=i) for i in range(300)]
    spark.createDataFrame(stored).write.format("hoodie").options(**opts).option(
        "hoodie.datasource.write.operation", "bulk_insert").mode("append").save(path)
    table = read_table(path, ReadConfig())
    holding = {k: (f.split("_")[0], p) for k, f, p in zip(*(table.column(c).to_pylist() for c in (
        "_hoodie_record_key", "_hoodie_file_name", "_hoodie_partition_path")))}
    first = ([Row(id=f"k{i:03d}", n=i, ts=2, p="z", v=-i) for i in range(0, 300, 4)]
             + [Row(id=f"n{i}", n=1000 + i, ts=2, p="x", v=i) for i in range(20)])
    second = [Row(id="k000", n=0, ts=3, p="y", v=1000), Row(id="n0", n=1000, ts=1, p="y", v=1000),
              Row(id="n20", n=1020, ts=1, p="y", v=20)]  # a key in each input partition, a new key too
    incoming = in_partitions(spark, [first, second])
    key_of = {"id": lambda r: r.id, "n": lambda r: str(r.n), "id,n": lambda r: f"id:{r.id},n:{r.n}"}[key]
    latest = {key_of(r): r for r in sorted(first + second, key=lambda r: r.ts)}
    options = {**opts, "hoodie.datasource.write.operation": "upsert"}
    session = start_write(open_storage(path), options, to_arrow_schema(incoming.schema, timezone="UTC"))
    try:
        assert _tags_in_lookup_tasks(session)
        keyed_schema = _schema_with(incoming.schema, (RECORD_KEY_COLUMN, T.StringType()),
                                    (PARTITION_PATH_COLUMN, T.StringType()), (IS_DELETE_COLUMN, T.BooleanType()))
        writer = session.record_writer()
        located = _tagged_in_lookup_tasks(session, incoming, keyed_schema, writer, writer.key_ranges(None))
        plan = located._jdf.queryExecution().executedPlan().toString()
        assert plan.count("Exchange hashpartitioning") == 1 and "Join" not in plan and "Broadcast" not in plan, plan
        assert plan.count("MapInArrow") == (1 if routed_by_spark else 2), plan
        tagged = located.select(RECORD_KEY_COLUMN, "ts", "v", PARTITION_PATH_COLUMN, FILE_ID_COLUMN,
                                LOCATION_PARTITION_COLUMN, F.spark_partition_id().alias("task")).collect()
    finally:
        session.abort()
    keys = [r[0] for r in tagged]
    assert sorted(keys) == sorted(latest)
    assert [r.task for r in tagged] == file_group_indexes(pa.array(keys), FILE_GROUPS).tolist()
    assert {r[0]: (r.ts, r.v) for r in tagged} == {k: (r.ts, r.v) for k, r in latest.items()}
    assert {r[0]: (r[4], r[5]) for r in tagged} == {k: holding.get(k, (None, None)) for k in latest}
    assert {r[0]: r[3] for r in tagged} == {k: holding[k][1] if k in holding else r.p for k, r in latest.items()}
