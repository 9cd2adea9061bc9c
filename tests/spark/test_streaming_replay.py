"""Exactly once across a crash: the query's driver is killed (SIGKILL) after the sink committed a
micro-batch and before Spark recorded the batch in its checkpoint's commit log. Restarted from the same
checkpoint, Spark runs that batch again; the sink finds its batch id in the table's last commit and
skips it, so every row is in the table once (the operation is ``insert``: a second write of the batch
would add its rows again) and each batch is one commit."""

from __future__ import annotations

import signal
import subprocess

import pytest

from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.table_reader import read_table
from tests.spark.streams import batches, land, rows, run_child

pytestmark = pytest.mark.spark


def run_query(source, table, checkpoint, *, killed: bool) -> subprocess.CompletedProcess:
    return run_child("tests.spark.stream_child", str(source), table, str(checkpoint), killed=killed)


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
