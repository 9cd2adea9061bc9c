"""A job started as ``.venv/bin/python job.py`` (venv not activated, no PYSPARK_PYTHON) whose PATH finds
a ``python3`` without pyarrow first: register() makes the local workers run the driver's interpreter, so
the job works; when the user does choose that interpreter (``spark.pyspark.python``), the write fails
with PythonEnvironmentError, its message first, naming the interpreter and the settings to change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

JOB = Path(__file__).with_name("worker_python_job.py")
BASE_PYTHON = Path(sys.base_prefix) / "bin" / "python3"


@pytest.fixture
def bare_python3(tmp_path: Path) -> Path:
    """A ``python3`` on a tmp bin dir that runs the base interpreter (no pyarrow there)."""
    if not BASE_PYTHON.is_file() or sys.base_prefix == sys.prefix:
        pytest.skip(f"no base interpreter apart from this venv ({sys.base_prefix})")
    lacks = subprocess.run([str(BASE_PYTHON), "-c", "import pyarrow"], capture_output=True)
    if lacks.returncode == 0:
        pytest.skip(f"the base interpreter {BASE_PYTHON} has pyarrow")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "python3"
    script.write_text(f'#!/bin/sh\nexec "{BASE_PYTHON}" "$@"\n')
    script.chmod(0o755)
    return script


def run_job(tmp_path: Path, bare: Path, *args: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env["PATH"] = f"{bare.parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run([sys.executable, str(JOB), str(tmp_path / "t"), *args], capture_output=True, text=True,
                          env=env, timeout=300, cwd=tmp_path)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT "):])


def test_local_workers_run_the_drivers_python_when_none_is_chosen(tmp_path, bare_python3):
    result = run_job(tmp_path, bare_python3)
    assert result == {"rows": [["a", 1.0], ["b", 2.0]], "worker": sys.executable}


def test_a_chosen_python_without_the_dependencies_fails_with_one_message(tmp_path, bare_python3):
    result = run_job(tmp_path, bare_python3, str(bare_python3))
    assert result["error"] == "PythonEnvironmentError", result
    message = result["message"]
    assert message.startswith(f"The Python interpreter {BASE_PYTHON}"), message
    assert "pyarrow" in message and "PYSPARK_PYTHON" in message and "spark.pyspark.python" in message
    assert "Traceback" not in message and "JVM" not in message
