"""Speculative task attempts on the standalone cluster: a write task's first attempt is slowed after it
wrote a data file, Spark starts a duplicate on the other executor (another host address), the
duplicate wins, and the commit holds exactly its files: the slow attempt's are removed by their
markers, also those it writes after the write committed (it finds its instant completed and removes them
itself)."""

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
    loaded,
    options,
    records,
    spark_rows,
    split_by_attempt,
    upsert_batch,
    write,
)
from tests.spark_cluster import cluster_session

pytestmark = pytest.mark.cluster
SLOW_SECONDS = 30
LATE_SLEEP_SECONDS = 15
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
    with spark_cluster.arm(partition=FAULTY, attempt=0, action="sleep", seconds=SLOW_SECONDS, once=True):
        instant = write(speculating_spark, path, upsert_batch(), options("t", table_type), "upsert")
    assert time.monotonic() - started < SLOW_SECONDS, "the write waited for the slow attempt"
    apply(model, upsert_batch())

    log = spark_cluster.hook_log()
    slow = next(e for e in log if e["action"] == "sleep")
    duplicates = [e for e in log if (e["stage"], e["task"]) == (slow["stage"], slow["task"]) and e["tid"] != slow["tid"]]
    assert duplicates, "no second attempt of the slowed task wrote a file"
    assert {e["partition"] for e in duplicates} >= {FAULTY}
    lost, won = split_by_attempt(log, "sleep")
    assert committed_files(path)[instant] == won
    assert not lost & data_files(path), "a file of the slow attempt is still in the table"
    assert_exact(path, spark_rows(speculating_spark, path), model)


def test_a_slow_attempt_writing_after_the_commit_leaves_no_file_and_no_marker(speculating_spark, spark_cluster,
                                                                               tmp_path):
    """The slowed attempt owns two file groups of its partition: it sleeps after the first, Spark's duplicate
    wins and the write commits, then it wakes and writes the second one. That late file is named with the
    committed instant and marked after the driver reconciled the markers; the attempt removes it (and its
    marker) when it finds its instant completed at its end."""
    path = str(tmp_path / "t")
    model: dict[int, tuple] = {}
    loaded(speculating_spark, path, "COPY_ON_WRITE", model)
    second = records(range(3000, 6000), 1)  # a second load: every partition gets file groups of its own
    write(speculating_spark, path, second, options("t"), "bulk_insert")
    apply(model, second)
    batch = pa.concat_tables([records(range(600), 2, bump=0.5), records(range(3000, 3600), 2, bump=0.5)])
    spark_cluster.clear_hook_log()
    with spark_cluster.arm(partition=FAULTY, attempt=0, action="sleep", seconds=LATE_SLEEP_SECONDS, once=True):
        instant = write(speculating_spark, path, batch, options("t"), "upsert")
        apply(model, batch)
        slow = next(e for e in spark_cluster.hook_log() if e["action"] == "sleep")
        late = wait_for(lambda: [e for e in spark_cluster.hook_log()
                                 if e["tid"] == slow["tid"] and e["at"] > slow["at"]], LATE_SLEEP_SECONDS + 60,
                        lambda: f"no file of the slow attempt after its sleep: {spark_cluster.hook_log()}")
        assert instant in Path(late[0]["path"]).name, late
        # the late attempt ends soon after its last file: until then its file and marker may still be there
        wait_for(lambda: not orphans(path, instant), 30, lambda: f"left by the late attempt: {orphans(path, instant)}")
    assert_exact(path, spark_rows(speculating_spark, path), model)


def orphans(path: str, instant: str) -> list[str]:
    """Data files in no commit's write stats, and the instant's marker folder if it is still there."""
    listed = set().union(*committed_files(path).values())
    left = sorted(data_files(path) - listed)
    marker_folder = Path(path, ".hoodie", ".temp", instant)
    return left + ([str(marker_folder)] if marker_folder.exists() else [])


def wait_for(probe, timeout: float, what=lambda: "nothing"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"after {timeout:.0f}s: {what()}")
