"""register() makes the Hudi save modes, reads and the streaming sink work over Spark Connect, not only classic."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytest.importorskip("grpc", reason="Spark Connect client dependencies (pyspark[connect]) are not installed")
pytestmark = pytest.mark.usefixtures("spark_connect_port")


def test_write_modes_and_reads_over_spark_connect(tmp_path):
    script = Path(__file__).with_name("connect_roundtrip.py")
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "t")], capture_output=True, text=True,
                          timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-3000:]
    result = json.loads(lines[-1][len("RESULT "):])
    assert result["session"].startswith("pyspark.sql.connect")
    assert result["snapshot"] == [["a", 5.0]]
    assert result["incremental"] == ["a"]
    assert result["filtered"] == ["a"]


def test_stream_into_a_table_over_spark_connect(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tests.spark.connect_streaming", str(tmp_path)], capture_output=True,
                          text=True, timeout=300, cwd=REPO)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-3000:]
    result = json.loads(lines[-1][len("RESULT "):])
    assert result["session"].startswith("pyspark.sql.connect")
    assert result["error"] is None
    assert result["batches"] == ["0", "1"]  # one deltacommit per micro-batch, each with its checkpoint
    assert result["rows"] == [["a", 2, 5.0], ["b", 1, 2.0]]
