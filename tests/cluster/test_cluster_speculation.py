"""Speculative task attempts on the standalone cluster: a write task's first attempt is slowed after it
wrote a data file, Spark starts a duplicate on the other executor (another host address), the
duplicate wins, and the commit holds exactly its files: the slow attempt's are removed by their
markers."""

from __future__ import annotations

import time

import pytest

from tests.cluster.tables import (
    FAULTY,
    apply,
    assert_exact,
    committed_files,
    data_files,
    latest_stage,
    loaded,
    options,
    spark_rows,
    split_by_attempt,
    upsert_batch,
    write,
)
from tests.spark_cluster import cluster_session

pytestmark = pytest.mark.cluster
SLOW_SECONDS = 30
SPECULATION = {
    "spark.speculation": "true",
    "spark.speculation.multiplier": "1",
    "spark.speculation.quantile": "0.1",
    "spark.speculation.interval": "100ms",
    "spark.speculation.minTaskRuntime": "0",
    # a slow attempt is speculated on its run time alone, not only when it reads records slowly
    "spark.speculation.efficiency.enabled": "false",
}


@pytest.fixture(scope="module")
def speculating_spark(spark_cluster):
    with cluster_session(spark_cluster, "hoodie-cluster-speculation", SPECULATION) as session:
        yield session


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_speculative_duplicate_wins_and_the_commit_holds_only_its_files(speculating_spark, spark_cluster,
                                                                          tmp_path, table_type):
    path = str(tmp_path / "t")
    model: dict[int, tuple] = {}
    loaded(speculating_spark, path, table_type, model)
    spark_cluster.clear_hook_log()
    started = time.monotonic()
    earlier = latest_stage(speculating_spark)  # no attempt of an earlier write takes the action
    with spark_cluster.arm(partition=FAULTY, after_stage=earlier, action="sleep", seconds=SLOW_SECONDS,
                           once=True):
        instant = write(speculating_spark, path, upsert_batch(), options("t", table_type), "upsert")
    assert time.monotonic() - started < SLOW_SECONDS, "the write waited for the slow attempt"
    apply(model, upsert_batch())

    log = spark_cluster.hook_log()
    slow = next(e for e in log if e["action"] == "sleep")
    # the upsert writes its files in the slowed task's stage; a speculative attempt of the load's bulk insert
    # may still log its own (deleted) files after the log was cleared
    log = [e for e in log if e["stage"] == slow["stage"]]
    duplicates = [e for e in log if (e["stage"], e["task"]) == (slow["stage"], slow["task"]) and e["tid"] != slow["tid"]]
    assert duplicates, "no second attempt of the slowed task wrote a file"
    assert {e["partition"] for e in duplicates} >= {FAULTY}
    lost, won = split_by_attempt(log, "sleep")
    assert committed_files(path)[instant] == won
    assert not lost & data_files(path), "a file of the slow attempt is still in the table"
    assert_exact(path, spark_rows(speculating_spark, path), model)
