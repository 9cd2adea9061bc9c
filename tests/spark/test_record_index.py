"""``hoodie.index.type=RECORD_INDEX`` through Spark (``format("hoodie")``): the keys are shuffled to a task per file
group of the record index, which looks them up there (``RecordIndex.lookup_task_of`` / ``confirm``), and the
locations found are joined back to the records by a shuffle join, not broadcast through the driver; upserts, deletes
and a key moving partition both ways of ``hoodie.record.index.update.partition.path``, on copy-on-write and
merge-on-read tables, against a model; the record index holds exactly the table's keys after each write."""

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
from hoodie_datasource.spark.write_dag import LOOKUP_TASK_COLUMN, _Batches, _looked_up, _schema_with, _with_lookup_task
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


def test_the_lookup_is_a_task_per_file_group_and_its_locations_are_joined_without_the_driver(spark, tmp_path):
    """An upsert's tagging: file group ``i`` of the record index is looked up by task ``i`` alone (Hudi's
    ``PartitionIdPassthrough``), every stored key comes back at the file group holding it and in its partition,
    every new key with none, each record once, and the plan has a shuffle hash join and no broadcast."""
    path = str(tmp_path / "t")
    stored = [Row(id=f"k{i:03d}", ts=1, p="xyz"[i % 3], v=i) for i in range(300)]
    spark.createDataFrame(stored).write.format("hoodie").options(**OPTS).option(
        "hoodie.datasource.write.operation", "bulk_insert").mode("append").save(path)
    table = read_table(path, ReadConfig())
    holding = {k: (f.split("_")[0], p) for k, f, p in zip(*(table.column(c).to_pylist() for c in (
        "id", "_hoodie_file_name", "_hoodie_partition_path")))}
    incoming = spark.createDataFrame([Row(id=f"k{i:03d}", ts=2, p="z", v=-i) for i in range(0, 300, 4)]
                                     + [Row(id=f"n{i}", ts=2, p="x", v=i) for i in range(20)])
    options = {**OPTS, "hoodie.datasource.write.operation": "upsert"}
    session = start_write(open_storage(path), options, to_arrow_schema(incoming.schema, timezone="UTC"))
    try:
        keyed_schema = _schema_with(incoming.schema, (RECORD_KEY_COLUMN, T.StringType()),
                                    (PARTITION_PATH_COLUMN, T.StringType()), (IS_DELETE_COLUMN, T.BooleanType()))
        keyed = _with_lookup_task(session, _Batches(incoming, incoming.schema).then(
            lambda records: record_keys.keyed(records, session.config), keyed_schema)).frame()
        tasks = keyed.select(RECORD_KEY_COLUMN, LOOKUP_TASK_COLUMN).repartition(FILE_GROUPS, LOOKUP_TASK_COLUMN) \
            .select(RECORD_KEY_COLUMN, F.spark_partition_id().alias("task")).collect()
        groups = file_group_indexes(pa.array([r[0] for r in tasks]), FILE_GROUPS).tolist()
        assert [r[1] for r in tasks] == groups and set(groups) == set(range(FILE_GROUPS))

        writer = session.record_writer()
        located = _looked_up(session, keyed, writer, writer.key_ranges(None))
        plan = located._jdf.queryExecution().executedPlan().toString()
        assert "ShuffledHashJoin" in plan and "Broadcast" not in plan, plan
        rows = located.select(RECORD_KEY_COLUMN, FILE_ID_COLUMN, LOCATION_PARTITION_COLUMN).collect()
    finally:
        session.abort()
    assert sorted(r[0] for r in rows) == sorted(r.id for r in incoming.collect())
    assert {r[0]: (r[1], r[2]) for r in rows} == {
        r.id: holding.get(r.id, (None, None)) for r in incoming.collect()}
