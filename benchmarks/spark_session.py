"""The one local Spark session every benchmark measures in."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping

from pyspark.sql import SparkSession

import hoodie_datasource

NATIVE_READS = "spark.hoodie.read.native"
SHUFFLE_PARTITIONS = 8
DRIVER_MEMORY = "8g"


def start(app: str = "hoodie-bench", shuffle_partitions: int = SHUFFLE_PARTITIONS, driver_memory: str = DRIVER_MEMORY,
          conf: Mapping[str, str] | None = None) -> SparkSession:
    """local[2] session with ``format("hoodie")`` registered and the SQL shim; executors run this interpreter.
    ``conf``: more settings of the session, given before it starts."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (SparkSession.builder.master("local[2]").appName(app)
               .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.session.timeZone", "UTC").config("spark.driver.memory", driver_memory))
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = hoodie_datasource.session(builder)  # register() plus the jvm-shim, for the SQL read cases
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def jvm_pid(spark: SparkSession) -> int:
    """Process id of the session's JVM (the Python workers are its descendants)."""
    return int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())


def python_reader(spark: SparkSession, run: Callable[[], object]) -> object:
    """``run()`` with every row read by our Python reader (as before the jvm-shim handed base files to
    Spark's parquet scan)."""
    spark.conf.set(NATIVE_READS, "false")
    try:
        return run()
    finally:
        spark.conf.unset(NATIVE_READS)
