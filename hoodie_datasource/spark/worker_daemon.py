"""Spark's Python daemon (``pyspark.daemon``) with hoodie's task code imported before it forks workers.

Spark forks each Python worker of a task from a daemon process, keeps an idle worker for a minute
(``PythonWorkerFactory.IDLE_WORKER_TIMEOUT_NS``) and then stops it. A worker forked after that imports
pyspark's worker, pyarrow, numpy and this package before it runs a row: about 0.7 s of CPU, paid by each
of a local session's workers on the first write after any pause longer than a minute. A worker forked
from this daemon starts with them imported, as the daemon imported them once.

pyspark's own daemon imports nothing before it forks, because pyarrow and numpy start threads when
imported (jemalloc's background thread, OpenBLAS's pool) and a fork copies no thread. Both libraries
register fork handlers that stop or reset those threads around a fork (jemalloc's ``jemalloc_prefork`` /
``postfork_child``, OpenBLAS's ``blas_thread_shutdown_``), and no Python thread runs here. Random state
is the one other thing a fork shares: Python's ``random`` reseeds in each child, and this package draws
from nothing else. A module that fails to import is left to the worker, which reports it as it always
would.

The daemon then moves everything it holds into the collector's permanent generation (``gc.freeze``), as
Python's documentation advises a process that forks without exec. A reused worker runs a full collection
after each task (``pyspark.daemon.manager``), which walked the preloaded modules' 93,000 objects every time:
45 ms of CPU a task, most of the Python workers' CPU time in the test suite's small writes. Frozen, they are
not walked (and not written to, so the pages the workers share with the daemon stay shared).

Run as ``python -m hoodie_datasource.spark.worker_daemon <worker module>``, as Spark runs the module that
``spark.python.daemon.module`` names (``worker_python.preload_in_daemon`` sets it).
"""

from __future__ import annotations

import gc
import importlib

from pyspark import daemon

PRELOADED = (
    "pyspark.worker",
    "hoodie_datasource.spark.datasource",
    "hoodie_datasource.spark.partition_writer",
    "hoodie_datasource.spark.write_dag",
)


def preload() -> list[str]:
    """Import ``PRELOADED``; returns the names that failed."""
    failed = []
    for name in PRELOADED:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the worker imports it again and reports the error in its task
            failed.append(name)
    return failed


if __name__ == "__main__":
    preload()
    gc.freeze()
    daemon.manager()
