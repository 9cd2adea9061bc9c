"""Which Python Spark's workers run, and what they start with: in local mode, the driver's own, unless the
user chose one, forked from a daemon that imported hoodie's task code (``worker_daemon``).

Spark starts its Python workers with ``spark.pyspark.python`` or ``PYSPARK_PYTHON``, else ``python3``
from the PATH (PySpark's ``SparkContext.pythonExec``). A script run as ``.venv/bin/python job.py``
without activating the venv then has workers without pyarrow. In local mode the workers run on this
machine, so the driver's interpreter is always right: ``register()`` sets it when nothing was chosen.
On a cluster the executors' Python is the user's to choose; a worker lacking the dependencies fails
with one line naming its interpreter (``hoodie_datasource.dependencies``).
"""

from __future__ import annotations

import logging
import os
import sys

from pyspark.sql import SparkSession

logger = logging.getLogger(__name__)

DAEMON_MODULE = "spark.python.daemon.module"
USE_DAEMON = "spark.python.use.daemon"
WORKER_DAEMON = "hoodie_datasource.spark.worker_daemon"


def use_driver_python_locally(spark: SparkSession) -> None:
    """In classic local mode with no interpreter configured, make the workers run ``sys.executable``."""
    try:
        context = spark.sparkContext  # not available over Spark Connect: the server chooses there
    except Exception:  # noqa: BLE001 - PySparkNotImplementedError / attribute errors over Connect
        return
    if not context.master.startswith("local") or os.environ.get("PYSPARK_PYTHON"):
        return
    if context.getConf().get("spark.pyspark.python"):
        return
    if context.pythonExec != sys.executable:
        logger.info("Spark's Python workers will run %s (this driver's interpreter; local mode and neither "
                    "PYSPARK_PYTHON nor spark.pyspark.python is set)", sys.executable)
        context.pythonExec = sys.executable


def preload_in_daemon(spark: SparkSession) -> None:
    """In classic local mode, with workers running this driver's interpreter and neither a daemon module
    chosen nor the daemon turned off, make Spark fork its task workers from ``worker_daemon`` (a worker then
    starts with pyarrow and this package imported). Set on the context's live configuration, which Spark's
    Python runners read when they start workers (``BasePythonRunner.daemonModule``), so it holds for the
    workers started from now on; workers already running finish as they are."""
    try:
        context = spark.sparkContext
    except Exception:  # noqa: BLE001 - not available over Spark Connect: the server chooses there
        return
    if not context.master.startswith("local") or context.pythonExec != sys.executable:
        return
    conf = context._jsc.sc().conf()  # the live SparkConf; getConf() returns a copy
    if conf.contains(DAEMON_MODULE) or conf.get(USE_DAEMON, "true").lower() != "true":
        return
    conf.set(DAEMON_MODULE, WORKER_DAEMON)
