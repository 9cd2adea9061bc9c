"""hoodie SQL over Spark Connect: the shim and the Python source run in the server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("grpc", reason="Spark Connect client dependencies (pyspark[connect]) are not installed")


@pytest.mark.usefixtures("spark_connect_port")
def test_sql_over_spark_connect(tmp_path):
    script = Path(__file__).with_name("connect_sql.py")
    done = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-3000:]
    result = json.loads(lines[-1][len("RESULT "):])
    assert result["session"].startswith("pyspark.sql.connect")
    assert result["rt"] == [["a", 1, 9.0, "sf"]]  # updated; b deleted by the MERGE
    assert result["ro"] == [["a", 1.0], ["b", 2.0]]  # MOR base files: before the update and the delete
