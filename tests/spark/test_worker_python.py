"""A job started as ``.venv/bin/python job.py`` (venv not activated, no PYSPARK_PYTHON) whose PATH finds
a ``python3`` without pyarrow first: register() makes the local workers run the driver's interpreter, so
the job works; when the user does choose that interpreter (``spark.pyspark.python``), the write fails
with PythonEnvironmentError, its message first, naming the interpreter and the settings to change."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.spark.child_results import named_results

JOB = Path(__file__).with_name("worker_python_job.py")
BASE_PYTHON = Path(sys.base_prefix) / "bin" / "python3"


@pytest.fixture(scope="module")
def bare_python3(tmp_path_factory) -> Path:
    """A ``python3`` on a tmp bin dir that runs the base interpreter (no pyarrow there)."""
    if not BASE_PYTHON.is_file() or sys.base_prefix == sys.prefix:
        pytest.skip(f"no base interpreter apart from this venv ({sys.base_prefix})")
    lacks = subprocess.run([str(BASE_PYTHON), "-c", "import pyarrow"], capture_output=True)
    if lacks.returncode == 0:
        pytest.skip(f"the base interpreter {BASE_PYTHON} has pyarrow")
    bin_dir = tmp_path_factory.mktemp("bin")
    script = bin_dir / "python3"
    script.write_text(f'#!/bin/sh\nexec "{BASE_PYTHON}" "$@"\n')
    script.chmod(0o755)
    return script


@pytest.fixture(scope="module")
def job_results(tmp_path_factory, bare_python3) -> dict[str, dict]:
    """The job's result for each case, from one run of it (both sessions in one process)."""
    work = tmp_path_factory.mktemp("worker-python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env["PATH"] = f"{bare_python3.parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run([sys.executable, str(JOB), str(work), str(bare_python3)], capture_output=True, text=True,
                          env=env, timeout=300, cwd=work)
    results = named_results(done.stdout)
    assert done.returncode == 0 and set(results) == {"none_chosen", "chosen"}, done.stderr[-3000:]
    return results


def test_local_workers_run_the_drivers_python_when_none_is_chosen(job_results):
    assert job_results["none_chosen"] == {"rows": [["a", 1.0], ["b", 2.0]], "worker": sys.executable}


def test_a_chosen_python_without_the_dependencies_fails_with_one_message(job_results):
    result = job_results["chosen"]
    assert result["error"] == "PythonEnvironmentError", result
    message = result["message"]
    assert message.startswith(f"The Python interpreter {BASE_PYTHON}"), message
    assert "pyarrow" in message and "PYSPARK_PYTHON" in message and "spark.pyspark.python" in message
    assert "Traceback" not in message and "JVM" not in message
