"""The hooks the cluster's executors run at the library's fault points (``HOODIE_FAULT_POINTS``, set by
tests/spark_cluster.py). They do nothing unless a test armed them (``Cluster.arm``), which writes
``faults.json`` in the control folder named by ``HOODIE_TEST_FAULT_CONTROL``::

    {"partition": "p=2", "attempt": 0, "action": "fail"}         raise after the file is written
    {"partition": "p=2", "action": "sleep", "seconds": 20, "once": true, "after_stage": 7}

``partition`` and ``attempt`` (Spark's ``TaskContext.attemptNumber()``; left out: any attempt) select the
task attempts the action applies to; ``after_stage`` keeps it to stages started after that one (stage ids rise across the
application), so an attempt of an earlier write that Spark abandoned but whose Python worker still runs
(``spark.python.task.killTimeout``) cannot take the action meant for the write under test; ``once``
makes it apply to the first of them only (a stage attempt that Spark runs again after an executor loss
numbers its task attempts from 0 again). A ``sleep`` leaves ``attempt`` out: under aggressive speculation
a cold first attempt can lose to its duplicate before writing anything, and whichever attempt writes
first is the one to slow down. While armed, every call is
logged to ``hooks.jsonl`` (one JSON line per data file written: its path, the attempt, the task's
partition, its attempt id ``tid`` (unique in the application), the Python worker's pid, the action
taken) before the action runs, so a test sees what was written by which attempt, and when a slow
attempt is in its sleep.
"""

from __future__ import annotations

import json
import os
import posixpath
import time
from pathlib import Path

from pyspark import TaskContext


class InjectedTaskFailure(RuntimeError):
    """Raised by an armed ``fail`` action: a task attempt failing after it wrote a data file."""


def after_data_file_written(point: str, storage, path: str) -> None:
    control = Path(os.environ["HOODIE_TEST_FAULT_CONTROL"])
    try:
        armed = json.loads((control / "faults.json").read_text())
    except FileNotFoundError:
        return
    task = TaskContext.get()
    attempt = task.attemptNumber() if task else 0
    partition = posixpath.dirname(path)
    stage = task.stageId() if task else None
    chosen = (partition == armed.get("partition") and armed.get("attempt", attempt) == attempt
              and (stage is None or stage > armed.get("after_stage", -1)))
    if chosen and armed.get("once"):
        chosen = _first(control / "fired")
    action = armed["action"] if chosen else None
    entry = {"point": point, "path": path, "partition": partition, "attempt": attempt,
             "task": task.partitionId() if task else None, "stage": stage,
             "tid": task.taskAttemptId() if task else None,
             "pid": os.getpid(), "action": action, "at": time.time()}
    with open(control / "hooks.jsonl", "a") as log:
        log.write(json.dumps(entry) + "\n")
    if action == "fail":
        raise InjectedTaskFailure(f"injected failure of attempt {attempt} after writing {path}")
    if action == "sleep":
        time.sleep(float(armed["seconds"]))


def _first(flag: Path) -> bool:
    """True for the one caller that creates ``flag``, across every process of the cluster."""
    try:
        os.close(os.open(flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True
