"""A Spark standalone cluster on loopback for the ``cluster`` tests: one master and two workers, each
its own JVM started with pyspark's ``bin/spark-class`` (a pip install of pyspark ships no
``sbin/start-*.sh``), and a SparkSession against it whose executors run this repository's code.

The two workers listen on different loopback addresses, 127.0.0.1 and 127.0.0.2: Spark never starts a
speculative copy of a task on a host that already runs an attempt of it (``TaskSetManager``'s
``hasAttemptOnHost``), so with one address speculation would never duplicate anything.

Faults are injected through the library's named fault points (``hoodie_datasource.fault_points``):
the executors get ``HOODIE_FAULT_POINTS`` pointing at the hooks in ``tests/cluster/fault_hooks.py``,
which do nothing until a test arms them (``Cluster.arm``, a JSON file in the cluster's control folder).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pyspark
import pytest

from tests.conftest import REPO, TEST_JVM_OPTIONS
from tests.object_stores import Server, free_port

SPARK_HOME = Path(pyspark.__file__).parent
WORKER_HOSTS = ("127.0.0.1", "127.0.0.2")
FAULT_POINTS = "after_data_file_written=tests.cluster.fault_hooks:after_data_file_written"
CONTROL_ENV = "HOODIE_TEST_FAULT_CONTROL"
"""The executors' environment variable naming the folder of the armed faults and the hooks' log."""


def _spark_class(main: str, *args: str) -> list[str]:
    return [str(SPARK_HOME / "bin" / "spark-class"), main, *args]


def _json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as answer:
        return json.load(answer)


@dataclass
class Cluster:
    master: Server
    workers: list[Server]
    url: str  # spark://127.0.0.1:<port>
    control: Path  # armed faults (faults.json) and the hooks' log (hooks.jsonl)

    def state(self) -> dict:
        """The master's view (its web UI's JSON): workers, applications, cores."""
        return _json(self.master.url + "/json")

    def wait_alive_workers(self, count: int, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.state().get("aliveworkers") == count:
                return
            time.sleep(0.2)
        logs = "\n".join(w.log_tail() for w in self.workers)
        raise RuntimeError(f"{count} workers did not register with {self.url} within {timeout:.0f}s: {logs}")

    @contextlib.contextmanager
    def arm(self, **faults) -> Iterator[None]:
        """Arm the fault hooks for the block (see tests/cluster/fault_hooks.py), then disarm them."""
        armed = self.control / "faults.json"
        armed.write_text(json.dumps(faults))
        try:
            yield
        finally:
            armed.unlink()
            (self.control / "fired").unlink(missing_ok=True)

    def hook_log(self) -> list[dict]:
        """What the armed hooks did, one entry per data file a task wrote while they were armed."""
        log = self.control / "hooks.jsonl"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]

    def clear_hook_log(self) -> None:
        (self.control / "hooks.jsonl").unlink(missing_ok=True)

    def stop(self) -> None:
        for server in [*self.workers, self.master]:
            server.stop()


def start_cluster(base: Path) -> Cluster:
    """A master and two workers (1 core, 1 GB each), all registered, with their logs under ``base``."""
    # the web UIs bind every address (no SPARK_LOCAL_IP), so each answers on 127.0.0.1 too
    env = {"SPARK_HOME": str(SPARK_HOME), "SPARK_DAEMON_MEMORY": "256m", "PYSPARK_PYTHON": sys.executable,
           "SPARK_DAEMON_JAVA_OPTS": TEST_JVM_OPTIONS}
    port, ui = free_port(), free_port()
    master = Server("spark-master", _spark_class("org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                                 "--port", str(port), "--webui-port", str(ui)),
                    ui, base / "master.log", env=env, ready_path="/json")
    url = f"spark://127.0.0.1:{port}"
    workers: list[Server] = []
    control = base / "control"
    control.mkdir()
    cluster = Cluster(master, workers, url, control)
    try:
        for i, host in enumerate(WORKER_HOSTS):
            work = base / f"worker{i}"
            work.mkdir()
            wui = free_port()
            workers.append(Server(
                f"spark-worker{i}",
                _spark_class("org.apache.spark.deploy.worker.Worker", url, "--cores", "1", "--memory", "1g",
                             "--host", host, "--webui-port", str(wui), "--work-dir", str(work)),
                wui, base / f"worker{i}.log", env=env, ready_path="/json"))
        cluster.wait_alive_workers(len(WORKER_HOSTS))
    except BaseException:
        cluster.stop()
        raise
    return cluster


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory) -> Iterator[Cluster]:
    cluster = start_cluster(tmp_path_factory.mktemp("spark-cluster"))
    yield cluster
    cluster.stop()


@contextlib.contextmanager
def cluster_session(cluster: Cluster, app: str, conf: Mapping[str, str] = {}):  # noqa: B006 - never mutated
    """A SparkSession on ``cluster`` with ``hoodie_datasource.register``: two 1-core executors (one per
    worker), tasks retried up to 4 times, the executors' Python importing this repository and the
    fault hooks armed by the tests. One SparkContext per process: the block stops it."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the executors' Python: SparkContext reads it
    # a new Builder: ``SparkSession.builder`` is shared and keeps the settings of earlier sessions
    builder = (SparkSession.Builder().master(cluster.url).appName(app)
               .config("spark.ui.enabled", "false")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.default.parallelism", "4")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.memory", "1g")
               .config("spark.driver.extraJavaOptions", TEST_JVM_OPTIONS)
               .config("spark.executor.extraJavaOptions", TEST_JVM_OPTIONS)
               .config("spark.executor.cores", "1")
               .config("spark.executor.memory", "512m")
               .config("spark.cores.max", "2")
               .config("spark.task.maxFailures", "4")
               # the first session's settings are the driver JVM's system properties, which every later
               # SparkConf loads: a session after a speculating one must switch it off itself
               .config("spark.speculation", "false")
               .config("spark.pyspark.python", sys.executable)
               .config("spark.executorEnv.PYTHONPATH", str(REPO))
               .config("spark.executorEnv.HOODIE_FAULT_POINTS", FAULT_POINTS)
               .config(f"spark.executorEnv.{CONTROL_ENV}", str(cluster.control)))
    for key, value in conf.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    try:
        import hoodie_datasource

        hoodie_datasource.register(session)
        wait_executors(session, 2)
        yield session
    finally:
        session.stop()


def wait_executors(session, count: int, timeout: float = 60.0) -> None:
    """Until ``count`` executors registered with the driver (the first job would otherwise run on one)."""
    tracker = session.sparkContext.statusTracker()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        # the driver is listed among the executors' infos too
        if len(tracker.getExecutorInfos()) - 1 >= count:
            return
        time.sleep(0.2)
    raise RuntimeError(f"{count} executors did not start within {timeout:.0f}s")


def executor_pids() -> dict[int, str]:
    """The executor JVMs on this machine (``CoarseGrainedExecutorBackend``): pid -> command line."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "CoarseGrainedExecutorBackend" in cmdline:
            found[int(entry.name)] = cmdline
    return found


def executor_of(pid: int) -> int:
    """The executor JVM a Python worker process ``pid`` runs under (its nearest such ancestor)."""
    executors = executor_pids()
    current = pid
    while current > 1:
        if current in executors:
            return current
        stat = Path(f"/proc/{current}/stat").read_text()
        current = int(stat.rsplit(")", 1)[1].split()[1])  # the field after the state: the parent pid
    raise LookupError(f"process {pid} runs under no executor JVM")

