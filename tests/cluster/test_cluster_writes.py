"""The write DAG on a Spark standalone cluster (tests/spark_cluster.py: a master, two workers, one
executor each): results equal local mode's, and task attempts that fail after writing files or die
with their executor leave no duplicate key and no orphan file in the committed table."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.table_reader import read_table
from tests.cluster.tables import (
    FAULTY,
    apply,
    assert_exact,
    committed_files,
    data_files,
    latest_stage,
    loaded,
    options,
    records,
    rows_of,
    spark_rows,
    split_by_attempt,
    upsert_batch,
    write,
)
from tests.spark_cluster import cluster_session, executor_of, wait_executors

pytestmark = pytest.mark.cluster
TABLE_TYPES = ["COPY_ON_WRITE", "MERGE_ON_READ"]


@pytest.fixture(scope="module")
def cluster_spark(spark_cluster):
    with cluster_session(spark_cluster, "hoodie-cluster-writes") as session:
        yield session


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_the_write_dag_on_the_cluster_equals_local_mode(cluster_spark, tmp_path, table_type):
    cluster, local = str(tmp_path / "cluster"), str(tmp_path / "local")
    opts = options("t", table_type)
    steps = [("bulk_insert", records(range(3000), 1)), ("upsert", upsert_batch()),
             ("delete", records(range(2000, 2300), 3))]
    model: dict[int, tuple] = {}
    firsts = []
    for operation, batch in steps:
        write(cluster_spark, cluster, batch, opts, operation)
        write_local(local, batch, {**opts, "hoodie.datasource.write.operation": operation})
        apply(model, batch, delete=operation == "delete")
        firsts.append((HoodieTable(cluster).latest_commit(), HoodieTable(local).latest_commit()))

    snapshot = spark_rows(cluster_spark, cluster)
    assert snapshot == rows_of(read_table(local)) == sorted(model.values())
    assert_exact(cluster, snapshot, model)

    after_bulk, local_after_bulk = firsts[0]
    pulled = spark_rows(cluster_spark, cluster, query="incremental", **{"begin.instant": after_bulk})
    local_pulled = rows_of(read_table(local, ReadConfig(query_type="incremental", begin_instant=local_after_bulk)))
    changed = {r["id"] for r in upsert_batch().to_pylist()} - set(range(2000, 2300))
    assert pulled == local_pulled == sorted(model[i] for i in changed)
    assert len(committed_files(cluster)) == 3


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_task_attempts_failing_after_their_files_are_written_are_retried_exactly(cluster_spark, spark_cluster,
                                                                                 tmp_path, table_type):
    path = str(tmp_path / "t")
    model: dict[int, tuple] = {}
    loaded(cluster_spark, path, table_type, model)
    spark_cluster.clear_hook_log()
    earlier = latest_stage(cluster_spark)  # no attempt of an earlier write takes the action
    with spark_cluster.arm(partition=FAULTY, attempt=0, after_stage=earlier, action="fail"):
        instant = write(cluster_spark, path, upsert_batch(), options("t", table_type), "upsert")
    apply(model, upsert_batch())

    log = spark_cluster.hook_log()
    lost, won = split_by_attempt(log, "fail")
    assert any(e["attempt"] > 0 and e["partition"] == FAULTY for e in log), "the failed task was not retried"
    assert committed_files(path)[instant] == won  # exactly the winning attempts' files
    assert not lost & data_files(path), "a failed attempt's file is still in the table"
    assert_exact(path, spark_rows(cluster_spark, path), model)


def test_an_executor_killed_mid_write_is_retried_elsewhere_and_the_commit_is_exact(cluster_spark, spark_cluster,
                                                                                    tmp_path):
    path = str(tmp_path / "t")
    model: dict[int, tuple] = {}
    loaded(cluster_spark, path, "COPY_ON_WRITE", model)
    spark_cluster.clear_hook_log()
    outcome: dict[str, object] = {}

    def upsert():
        try:
            outcome["instant"] = write(cluster_spark, path, upsert_batch(), options("t"), "upsert")
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            outcome["error"] = exc

    earlier = latest_stage(cluster_spark)  # no attempt of an earlier write takes the action

    with spark_cluster.arm(partition=FAULTY, after_stage=earlier, action="sleep", seconds=120, once=True):
        writer = threading.Thread(target=upsert)
        writer.start()
        sleeping = wait_for(lambda: [e for e in spark_cluster.hook_log() if e["action"] == "sleep"]
                            or not writer.is_alive(), 120)
        assert writer.is_alive(), (outcome, spark_cluster.hook_log())
        victim = executor_of(sleeping[0]["pid"])
        os.kill(victim, signal.SIGKILL)
        writer.join(240)
    assert not writer.is_alive() and "error" not in outcome, outcome
    apply(model, upsert_batch())

    log = spark_cluster.hook_log()
    lost, won = split_by_attempt(log, "sleep")
    retried = [e for e in log if e["partition"] == FAULTY and e["action"] is None]
    assert retried, "the killed executor's task was not run again"
    assert not lost & data_files(path), "a file of the killed attempt is still in the table"
    assert committed_files(path)[outcome["instant"]] == won
    assert_exact(path, spark_rows(cluster_spark, path), model)
    wait_executors(cluster_spark, 2)  # the worker started a new executor for the application


def wait_for(probe, timeout: float):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.1)
    raise TimeoutError(f"nothing after {timeout:.0f}s")
