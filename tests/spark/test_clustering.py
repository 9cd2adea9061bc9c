"""Clustering on Spark: each group a task of its own, the table read back through the data source the same; an
inline clustering after every few writes. (``CALL run_clustering`` is in tests/sql/test_sql_procedures.py.)"""

from __future__ import annotations

import os

import pytest
from chispa import assert_df_equality

from hoodie_datasource import HoodieTable
from hoodie_datasource.errors import ClusteringUpdateError
from hoodie_datasource.spark.clustering import cluster

OPTS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.parquet.small.file.limit": "0", "hoodie.index.bloom.num_entries": "500"}


def _write(spark, path, rows, **extra):
    df = spark.createDataFrame(rows, "id string, ts long, p string, v long")
    df.write.format("hoodie").options(**{**OPTS, **extra}).mode("append").save(path)


def _read(spark, path):
    return spark.read.format("hoodie").load(path).select("id", "ts", "p", "v", "_hoodie_commit_time")


def test_each_group_is_a_spark_task_and_the_table_reads_the_same(spark, tmp_path):
    path = str(tmp_path / "t")
    mor = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    for i in range(3):
        _write(spark, path, [(f"k{i}-{j}", i, f"p{j % 2}", i * 10 + j) for j in range(6)], **mor)
    _write(spark, path, [("k0-0", 5, "p0", -1)], **mor)  # a log file: merged by the task
    before = _read(spark, path).orderBy("id").collect()
    done = cluster(spark, path, **{"hoodie.clustering.plan.strategy.sort.columns": "v",
                                   "hoodie.clustering.plan.strategy.max.num.groups": "4",
                                   "hoodie.index.bloom.num_entries": "500"})
    assert len(done) == 1
    meta = HoodieTable(path).commit_metadata(done[0])
    assert sorted(meta["partitionToWriteStats"]) == ["p0", "p1"]
    # one task a group: its write token names the task's partition
    tokens = {s["path"].split("_")[1] for stats in meta["partitionToWriteStats"].values() for s in stats}
    assert len(tokens) == 2
    assert_df_equality(_read(spark, path).orderBy("id"), spark.createDataFrame(before, _read(spark, path).schema))
    assert len([n for n in os.listdir(os.path.join(path, "p0")) if done[0] in n]) == 1


def test_inline_clustering_after_every_n_commits(spark, tmp_path):
    path = str(tmp_path / "t")
    inline = {"hoodie.clustering.inline": "true", "hoodie.clustering.inline.max.commits": "2"}
    for i in range(4):
        _write(spark, path, [(f"k{i}", i, "p0", i)], **inline)
    table = HoodieTable(path)
    actions = [(i.action, table.commit_metadata(i.timestamp)["operationType"]) for i in table.instants()]
    assert actions == [("commit", "UPSERT")] * 2 + [("replacecommit", "CLUSTER")] + [("commit", "UPSERT")] * 2 + [
        ("replacecommit", "CLUSTER")]
    assert sorted(r.v for r in _read(spark, path).collect()) == [0, 1, 2, 3]
    # each group a Spark task of the write's session: its token names the task, not the local engine's 1-0-1
    stats = table.commit_metadata(table.instants()[2].timestamp)["partitionToWriteStats"]["p0"]
    assert [s["path"].split("_")[1] for s in stats] != ["1-0-1"]


def test_a_spark_update_of_a_pending_plan_is_rejected(spark, tmp_path):
    """A table without partitions is written file group by file group (``write_dag._write_by_file_group``): the
    update strategy refuses there too, before anything is written."""
    path = str(tmp_path / "t")
    flat = {"hoodie.datasource.write.partitionpath.field": ""}
    for i in range(2):
        _write(spark, path, [(f"k{i}", i, "p0", i)], **flat)
    instant = HoodieTable(path).schedule_clustering()
    files = sorted(os.listdir(path))
    with pytest.raises(ClusteringUpdateError, match=f"pending clustering {instant}"):
        _write(spark, path, [("k0", 5, "p0", 50)], **flat)
    assert sorted(os.listdir(path)) == files
    HoodieTable(path).run_clustering(instant)
    _write(spark, path, [("k0", 5, "p0", 50)], **flat)
    assert sorted(r.v for r in _read(spark, path).collect()) == [1, 50]
