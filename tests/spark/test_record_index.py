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
from hoodie_datasource.spark.write_dag import (
    _Batches,
    _schema_with,
    _tagged_in_lookup_tasks,
    _tags_in_lookup_tasks,
    _with_lookup_task,
)
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.meta_columns import (
    FILE_ID_COLUMN,
    IS_DELETE_COLUMN,
    LOCATION_PARTITION_COLUMN,
    PARTITION_PATH_COLUMN,
    RECORD_KEY_COLUMN,
)
from hoodie_datasource.write import record_keys
from tests.metadata_checks import assert_record_index_true
from tests.spark_stages import tasks_of
from tests.unit.test_record_index import snapshot

pytestmark = pytest.mark.spark

FILE_GROUPS = 5
OPTS = {"table.name": "ri", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
        "hoodie.index.type": "RECORD_INDEX", "hoodie.metadata.record.index.enable": "true",
        "hoodie.metadata.record.index.min.filegroup.count": str(FILE_GROUPS),
        "hoodie.metadata.record.index.max.filegroup.count": str(FILE_GROUPS), "hoodie.parquet.small.file.limit": "0"}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_spark_writes_tag_through_the_record_index(spark, tmp_path, table_type):
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.datasource.write.table.type": table_type}
    model: dict[str, tuple[str, str, int]] = {}

    def write(rows, operation="upsert", **extra):
        df = spark.createDataFrame([Row(id=i, ts=t, p=p, v=v) for i, t, p, v in rows])
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
    assert snapshot(path) == model
    assert_record_index_true(path)


def test_an_upsert_tags_its_records_in_the_tasks_that_look_their_keys_up(spark, tmp_path):
    """An upsert's one tagging shuffle: file group ``i`` of the record index is looked up by task ``i`` alone (Hudi's
    ``PartitionIdPassthrough``), which gets every record of its keys and combines them (a key arriving in two
    partitions keeps its latest record), then tags them: every stored key with the file group holding it, updated
    in its stored partition, every new key with none, each key once. The plan has that one shuffle: no join, nothing
    broadcast."""
    path = str(tmp_path / "t")
    stored = [Row(id=f"k{i:03d}", ts=1, p="xyz"[i % 3], v=i) for i in range(300)]
    spark.createDataFrame(stored).write.format("hoodie").options(**OPTS).option(
        "hoodie.datasource.write.operation", "bulk_insert").mode("append").save(path)
    table = read_table(path, ReadConfig())
    holding = {k: (f.split("_")[0], p) for k, f, p in zip(*(table.column(c).to_pylist() for c in (
        "id", "_hoodie_file_name", "_hoodie_partition_path")))}
    rows = ([Row(id=f"k{i:03d}", ts=2, p="z", v=-i) for i in range(0, 300, 4)]
            + [Row(id=f"n{i}", ts=2, p="x", v=i) for i in range(20)]
            + [Row(id="k000", ts=3, p="y", v=1000), Row(id="n0", ts=1, p="y", v=1000)])  # the second of each key
    incoming = spark.createDataFrame(rows)
    latest = {r.id: r for r in sorted(rows, key=lambda r: r.ts)}
    options = {**OPTS, "hoodie.datasource.write.operation": "upsert"}
    session = start_write(open_storage(path), options, to_arrow_schema(incoming.schema, timezone="UTC"))
    try:
        assert _tags_in_lookup_tasks(session)
        keyed_schema = _schema_with(incoming.schema, (RECORD_KEY_COLUMN, T.StringType()),
                                    (PARTITION_PATH_COLUMN, T.StringType()), (IS_DELETE_COLUMN, T.BooleanType()))
        keyed = _with_lookup_task(session, _Batches(incoming, incoming.schema).then(
            lambda records: record_keys.keyed(records, session.config), keyed_schema))
        writer = session.record_writer()
        located = _tagged_in_lookup_tasks(session, keyed, writer, writer.key_ranges(None))
        plan = located._jdf.queryExecution().executedPlan().toString()
        assert plan.count("Exchange hashpartitioning") == 1 and "Join" not in plan and "Broadcast" not in plan, plan
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
