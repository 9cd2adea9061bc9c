"""The Spark Connect scenarios' results, from one process for the whole session (``connect_scenarios.py``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, require_module, spark_connect_port_lock
from tests.spark.child_results import named_results


@pytest.fixture(scope="session")
def over_spark_connect(tmp_path_factory):
    """``result(scenario)``: what a scenario of ``connect_scenarios.py`` returned, and the folder it wrote in.
    All of them run in one subprocess, the first time a test asks (one JVM and Connect server instead of one each)."""
    require_module("grpc")  # Spark Connect's client (pyspark[connect])
    work = tmp_path_factory.mktemp("spark-connect")
    with spark_connect_port_lock():
        done = subprocess.run([sys.executable, "-m", "tests.spark.connect_scenarios", str(work)], capture_output=True,
                              text=True, timeout=900, cwd=REPO)
    results = named_results(done.stdout)

    def result(scenario: str) -> tuple[dict, Path]:
        found = results.get(scenario)
        assert found is not None, f"no result (exit code {done.returncode}): {done.stderr[-3000:]}"
        assert "traceback" not in found, found["traceback"] + done.stderr[-3000:]
        return found, work / scenario

    return result
