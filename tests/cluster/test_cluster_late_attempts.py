"""A task attempt Spark abandoned that keeps writing after the write committed: it finds its instant
completed at its end and removes its files and markers itself (``write.task_attempt``).

Spark kills a losing speculative attempt, but a Python worker is only killed
``spark.python.task.killTimeout`` (2 s by default) after the kill, and a worker busy in a long
request may outlive it; the session here waits long enough for the slowed attempt to wake and write
again, which makes that window certain."""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
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
    records,
    spark_rows,
    write,
)
from tests.cluster.test_cluster_speculation import SPECULATION
from tests.spark_cluster import cluster_session

pytestmark = pytest.mark.cluster
SLEEP_SECONDS = 15


@pytest.fixture(scope="module")
def lingering_spark(spark_cluster):
    conf = {**SPECULATION, "spark.python.task.killTimeout": "300s"}
    with cluster_session(spark_cluster, "hoodie-cluster-late-attempts", conf) as session:
        yield session


def test_a_slow_attempt_writing_after_the_commit_leaves_no_file_and_no_marker(lingering_spark, spark_cluster,
                                                                               tmp_path):
    """The slowed attempt owns two file groups of its partition: it sleeps after the first, Spark's duplicate
    wins and the write commits, then it wakes and writes the second one, a file named with the committed
    instant and marked after the driver reconciled the markers."""
    path = str(tmp_path / "t")
    model: dict[int, tuple] = {}
    loaded(lingering_spark, path, "COPY_ON_WRITE", model)
    second = records(range(3000, 6000), 1)  # a second load: every partition gets more file groups
    write(lingering_spark, path, second, options("t"), "bulk_insert")
    apply(model, second)
    batch = pa.concat_tables([records(range(600), 2, bump=0.5), records(range(3000, 3600), 2, bump=0.5)])
    spark_cluster.clear_hook_log()
    earlier = latest_stage(lingering_spark)  # no attempt of an earlier write takes the action
    with spark_cluster.arm(partition=FAULTY, after_stage=earlier, action="sleep", seconds=SLEEP_SECONDS,
                           once=True):
        instant = write(lingering_spark, path, batch, options("t"), "upsert")
        apply(model, batch)
        slow = next(e for e in spark_cluster.hook_log() if e["action"] == "sleep")
        late = wait_for(lambda: [e for e in spark_cluster.hook_log() if e["tid"] == slow["tid"] and e["at"] > slow["at"]],
                        SLEEP_SECONDS + 60, lambda: f"the slow attempt wrote nothing after its sleep: "
                                                    f"{spark_cluster.hook_log()}")
        assert instant in Path(late[0]["path"]).name, late
        # the attempt's last step comes soon after its last file: until then its file and marker are there
        wait_for(lambda: not left_behind(path, instant), 30,
                 lambda: f"left by the late attempt: {left_behind(path, instant)}")
    assert_exact(path, spark_rows(lingering_spark, path), model)


def left_behind(path: str, instant: str) -> list[str]:
    """Data files in no commit's write stats, and the instant's marker folder if it is there."""
    listed = set().union(*committed_files(path).values())
    folder = Path(path, ".hoodie", ".temp", instant)
    return sorted(data_files(path) - listed) + ([str(folder)] if folder.exists() else [])


def wait_for(probe, timeout: float, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"after {timeout:.0f}s: {what()}")
