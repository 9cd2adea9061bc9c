"""Exactly once across a crash: the query's driver is killed (SIGKILL) after the sink committed a
micro-batch and before Spark recorded the batch in its checkpoint's commit log. Restarted from the same
checkpoint, Spark runs that batch again; the sink finds its batch id in the table's last commit and
skips it, so every row is in the table once (the operation is ``insert``: a second write of the batch
would add its rows again) and each batch is one commit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from hoodie_datasource import fault_points
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.table_reader import read_table
from tests.conftest import REPO
from tests.spark.streams import batches, land, rows

pytestmark = pytest.mark.spark

KILL_AFTER_COMMIT = f"{fault_points.AFTER_STREAM_BATCH_COMMITTED}=tests.spark.stream_fault_hooks:kill_this_process"


def run_query(source, table, checkpoint, *, killed: bool) -> subprocess.CompletedProcess:
    """The query in a child process (a session of its own, as a restarted application has), killed at the
    fault point or not; then nothing of it is left running (its JVM shares its process group)."""
    env = {key: value for key, value in os.environ.items() if key != fault_points.ENV_VAR}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    if killed:
        env[fault_points.ENV_VAR] = KILL_AFTER_COMMIT
    child = subprocess.Popen([sys.executable, "-m", "tests.spark.stream_child", str(source), table, str(checkpoint)],
                             cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
    try:
        out, err = child.communicate(timeout=300)
    finally:
        _end_group(child.pid)
    return subprocess.CompletedProcess(child.args, child.returncode, out, err)


def _end_group(group: int) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            return
        assert time.monotonic() < deadline, f"process group {group} outlived SIGKILL"
        time.sleep(0.2)


def test_a_batch_replayed_after_a_crash_is_written_once(tmp_path, table_path):
    source, checkpoint = tmp_path / "in", tmp_path / "ckpt"
    land(source, "f0", rows(("a", 1, "sf", 1.0), ("b", 1, "nyc", 2.0)), 0)
    land(source, "f1", rows(("c", 1, "sf", 3.0)), 1)

    crashed = run_query(source, table_path, checkpoint, killed=True)

    assert crashed.returncode == -signal.SIGKILL, crashed.stderr[-3000:]
    assert batches(table_path) == ["0"]  # the sink committed batch 0 ...
    assert (checkpoint / "offsets" / "0").is_file()  # ... which Spark had planned ...
    assert not (checkpoint / "commits" / "0").exists()  # ... and never marked done

    restarted = run_query(source, table_path, checkpoint, killed=False)

    assert restarted.returncode == 0, restarted.stderr[-3000:]
    assert "Skipping micro-batch 0" in restarted.stderr  # Spark ran batch 0 again; the sink skipped it
    assert (checkpoint / "commits" / "1").is_file()
    assert batches(table_path) == ["0", "1"]
    table = read_table(table_path, ReadConfig())
    assert sorted(table.column("uuid").to_pylist()) == ["a", "b", "c"]
