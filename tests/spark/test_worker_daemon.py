"""register() in local mode makes Spark fork its task workers from ``worker_daemon``, which imported hoodie's
task code once, and leaves a daemon the user chose alone."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator

import pyarrow as pa

from hoodie_datasource.spark import worker_daemon
from hoodie_datasource.spark.worker_python import DAEMON_MODULE, WORKER_DAEMON, preload_in_daemon


def _parent_command(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The command line of the process that forked this worker."""
    with open(f"/proc/{os.getppid()}/cmdline", "rb") as handle:
        command = handle.read().replace(b"\0", b" ").decode()
    for _ in batches:
        pass
    yield pa.RecordBatch.from_pydict({"command": [command]})


def test_local_task_workers_are_forked_from_the_preloading_daemon(spark):
    assert spark.sparkContext._jsc.sc().conf().get(DAEMON_MODULE) == WORKER_DAEMON
    commands = {r.command for r in spark.range(4, numPartitions=2).mapInArrow(_parent_command, "command string").collect()}
    assert commands and all(f"-m {WORKER_DAEMON} " in c for c in commands), commands


def _frozen_objects(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for _ in batches:
        pass
    yield pa.RecordBatch.from_pydict({"frozen": [gc.get_freeze_count()]})


def test_task_workers_start_with_the_preloaded_objects_frozen(spark):
    """A reused worker's collection after each task skips what the daemon imported (``gc.freeze``)."""
    counts = [r.frozen for r in spark.range(4, numPartitions=2).mapInArrow(_frozen_objects, "frozen long").collect()]
    assert counts and min(counts) > 50_000, counts


def test_the_daemon_imports_every_module_it_preloads():
    assert worker_daemon.preload() == []


def test_a_daemon_module_the_user_chose_is_kept(spark):
    conf = spark.sparkContext._jsc.sc().conf()
    conf.set(DAEMON_MODULE, "pyspark.daemon")
    try:
        preload_in_daemon(spark)
        assert conf.get(DAEMON_MODULE) == "pyspark.daemon"
    finally:
        conf.set(DAEMON_MODULE, WORKER_DAEMON)
