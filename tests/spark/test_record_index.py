"""``hoodie.index.type=RECORD_INDEX`` through Spark (``format("hoodie")``): the keys are shuffled to a task per file
group of the record index, which looks them up there (``RecordIndex.candidates`` / ``confirm``); upserts, deletes and
a key moving partition both ways of ``hoodie.record.index.update.partition.path``, on copy-on-write and merge-on-read
tables, against a model; the record index holds exactly the table's keys after each write."""

from __future__ import annotations

import pytest
from pyspark.sql import Row

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
