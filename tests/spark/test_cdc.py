"""CDC queries through ``format("hoodie")`` (``hoodie.datasource.query.incremental.format=cdc``): tables
written by the distributed write DAG with ``hoodie.table.cdc.enabled``, COW and MOR; the rows equal
the core reader's, which the no-JVM tests check against the expected changes (tests/unit/test_cdc.py)."""

from __future__ import annotations

import json

import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.table_reader import read_table

OPTS = {"table.name": "cdc", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
        "hoodie.table.cdc.enabled": "true"}
SCHEMA = "id int, ts int, p string, v string, _hoodie_is_deleted boolean"


def write(spark, path, rows, **extra):
    spark.createDataFrame(rows, SCHEMA).write.format("hoodie").options(**OPTS, **extra).mode("upsert").save(path)
    return HoodieTable(path).latest_commit()


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_cdc_query_through_spark(spark, table_path, table_type):
    kind = {"storage.type": table_type}
    first = write(spark, table_path, [(1, 1, "a", "v1", False), (2, 1, "a", "v2", False), (3, 1, "b", "v3", False)],
                  **kind)
    write(spark, table_path, [(1, 2, "a", "v1b", False), (4, 2, "a", "v4", False)], **kind)
    last = write(spark, table_path, [(2, 3, "a", "v2b", False), (3, 3, "b", "v3", True)], **kind)
    df = (spark.read.format("hoodie").option("hoodie.datasource.query.type", "incremental")
          .option("hoodie.datasource.query.incremental.format", "cdc")
          .option("hoodie.datasource.read.begin.instanttime", first).load(table_path))
    assert df.columns == ["op", "ts_ms", "before", "after"]
    got = sorted(tuple(r) for r in df.collect())
    core = read_table(table_path, ReadConfig(query_type="incremental", begin_instant=first,
                                             incremental_format="cdc"))
    assert got == sorted(tuple(r.values()) for r in core.to_pylist())
    summary = sorted((r[0], json.loads(r[2] or r[3])["id"]) for r in got)
    assert summary == [("d", 3), ("i", 4), ("u", 1), ("u", 2)]
    assert {r[1] for r in got if r[0] == "d"} == {last}
    # a projection and a filter, as Spark pushes them
    assert df.filter("op = 'u'").select("before").count() == 2
    # a later read of the open range sees a later commit
    later = write(spark, table_path, [(4, 4, "a", "v4", True)], **kind)
    again = (spark.read.format("hoodie").option("query", "incremental").option("incremental.format", "cdc")
             .option("begin.instant", last).load(table_path))
    assert [(r.op, r.ts_ms, json.loads(r.before)["id"]) for r in again.collect()] == [("d", later, 4)]
