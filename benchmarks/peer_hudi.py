"""Apache Hudi 0.15.0 (its Spark 3.5 bundle) as a peer: writes and reads of the same data, timed in its own process.

Hudi 0.15 needs Spark 3.5 and Scala 2.12 and our venv has pyspark 4, so Hudi runs in a process of its own:
``hudi_driver.py`` under the venv ``make oracle`` creates (``.tools/hudi-oracle/venv``, pyspark 3.5) with the
bundle it fetches. The process lives for the whole benchmark (its JVM warms up like ours). Data crosses as
parquet files, staged once per batch into a cached DataFrame on each side; the driver times only the write or
the read, so a Hudi case's seconds are measured on its side of the pipe.

Hudi's settings: its defaults apart from what the workload names (key, ordering and partition fields, table
type, operation) and ``hoodie.index.type=BLOOM`` (the index ours uses), the Spark session its quick start gives
(Kryo, ``HoodieSparkSessionExtension``), and the parquet codec of ours (snappy; 0.15's default is gzip). Two
configurations: the metadata table on (Hudi's default since 0.11) and ``hoodie.metadata.enable=false``.
"""

from __future__ import annotations

import json
import logging
import os
import select
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.copies import restore
from benchmarks.cpu_time import CpuClock
from benchmarks.memory import PeakMemory
from benchmarks.ours import commit_facts
from benchmarks.timing import Case
from benchmarks.workload import KEY, ORDERING, PARTITION

logger = logging.getLogger(__name__)

VERSION = "0.15.0"
HUDI_DIR = Path(__file__).resolve().parents[1] / ".tools" / "hudi-oracle"
PYTHON = HUDI_DIR / "venv" / "bin" / "python"
BUNDLE = HUDI_DIR / "jars" / f"hudi-spark3.5-bundle_2.12-{VERSION}.jar"
DRIVER = Path(__file__).with_name("hudi_driver.py")
START_SECONDS = 300
COMMAND_SECONDS = 3600
COW, MOR = "COPY_ON_WRITE", "MERGE_ON_READ"
COMMON_OPTIONS = {"hoodie.index.type": "BLOOM", "hoodie.parquet.compression.codec": "snappy"}


@dataclass(frozen=True)
class HudiConfig:
    """One configuration of Hudi the benchmark runs: ``key`` prefixes its case keys."""

    key: str
    label: str
    options: dict[str, str]


METADATA_ON = HudiConfig("hudi", "metadata table on", {"hoodie.metadata.enable": "true"})
METADATA_OFF = HudiConfig("hudi_nomdt", "metadata table off", {"hoodie.metadata.enable": "false"})
CONFIGS = (METADATA_ON, METADATA_OFF)


class HudiPeerError(RuntimeError):
    """Hudi's process failed a command or could not start; the message has Java's text or the log's tail."""


def write_options(table_type: str, operation: str, config: HudiConfig) -> dict[str, str]:
    """The options of a Hudi write of the workload, by Hudi's names."""
    return {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": KEY,
            "hoodie.datasource.write.precombine.field": ORDERING,
            "hoodie.datasource.write.partitionpath.field": PARTITION,
            "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": operation,
            **COMMON_OPTIONS, **config.options}


def incremental_options(begin: str, config: HudiConfig) -> dict[str, str]:
    """Hudi's incremental query of the commits after ``begin``."""
    return {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": begin,
            **config.options}


class HudiPeer:
    """The ``hudi_driver.py`` process: a local[2] Spark 3.5 session with the Hudi 0.15.0 bundle."""

    def __init__(self, work: Path, driver_memory: str, shuffle_partitions: int):
        for needed in (BUNDLE, PYTHON):
            if not needed.exists():
                raise HudiPeerError(f"Apache Hudi {VERSION} is not installed: {needed} is missing; run `make oracle` "
                                    "(it needs mvn and Java 17)")
        work.mkdir(parents=True, exist_ok=True)
        self.log_path = work / "hudi-driver.log"
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_HOME", "PYSPARK_PYTHON")}
        env["PYSPARK_PYTHON"] = str(PYTHON)  # our pyspark 4 and package stay out of the Spark 3.5 process
        started = time.perf_counter()
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(
                [str(PYTHON), str(DRIVER), "--bundle", str(BUNDLE), "--driver-memory", driver_memory,
                 "--shuffle-partitions", str(shuffle_partitions)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, env=env, cwd=work)
        ready = self._receive(START_SECONDS)
        self.spark_version, self.java_version, self.jvm_pid = ready["spark"], ready["java"], ready["jvm_pid"]
        self.memory = PeakMemory(self.jvm_pid)
        self.cpu = CpuClock(self.process.pid, self.jvm_pid)
        logger.info("Apache Hudi %s on Spark %s started in %.1f s (log: %s)", VERSION, self.spark_version,
                    time.perf_counter() - started, self.log_path)

    def _receive(self, timeout: float) -> dict:
        readable, _, _ = select.select([self.process.stdout], [], [], timeout)
        line = self.process.stdout.readline() if readable else ""
        if not line:
            self.process.kill()
            self.process.wait()
            tail = "\n".join(self.log_path.read_text(errors="replace").splitlines()[-30:])
            raise HudiPeerError(f"Hudi's process {'exited' if readable else 'did not answer in time'}; "
                                f"{self.log_path} ends with:\n{tail}")
        answer = json.loads(line)
        if not answer.pop("ok"):
            raise HudiPeerError(answer["error"])
        return answer

    def call(self, cmd: str, **args: object) -> dict:
        self.process.stdin.write(json.dumps({"cmd": cmd, **args}) + "\n")
        self.process.stdin.flush()
        return self._receive(COMMAND_SECONDS)

    def stage(self, name: str, path: Path) -> tuple[int, int]:
        """The parquet file at ``path`` cached under ``name``; its rows and the DataFrame's partitions."""
        answer = self.call("stage", name=name, path=str(path))
        return answer["rows"], answer["partitions"]

    def unstage(self, name: str) -> None:
        self.call("unstage", name=name)

    def write(self, name: str, path: Path, options: dict[str, str]) -> float:
        """Seconds of Hudi's write of the rows staged as ``name`` into the table at ``path``."""
        return self.call("write", name=name, path=str(path), options=options)["seconds"]

    def scan(self, path: Path, options: dict[str, str]) -> float:
        """Seconds of a read of every row and column of the table at ``path``."""
        return self.call("read", path=str(path), options=options, action="scan")["seconds"]

    def aggregate(self, path: Path, options: dict[str, str]) -> tuple[float, int, float]:
        """Seconds, ``count(*)`` and ``sum(fare)`` of a read of the table at ``path``."""
        answer = self.call("read", path=str(path), options=options, action="aggregate")
        return answer["seconds"], answer["count"], answer["sum"]

    def close(self) -> None:
        if self.process.poll() is not None:
            return
        try:
            self.process.stdin.write(json.dumps({"cmd": "stop"}) + "\n")
            self.process.stdin.close()
            self.process.wait(timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()


def case_key(config: HudiConfig, name: str) -> str:
    """The key of Hudi's case in ``config`` that matches our case ``name``."""
    return f"{config.key}_{name}"


def _case(peer: HudiPeer, config: HudiConfig, name: str, what: str, run: Callable[[], float], **more: Any) -> Case:
    """A case run in Hudi's process: its seconds, memory and CPU time are that process's."""
    return Case(case_key(config, name), f"Apache Hudi {VERSION} {what} ({config.label})", run=run, memory=peer.memory,
                cpu=peer.cpu, timed_by_peer=True, **more)


def upsert_case(peer: HudiPeer, config: HudiConfig, name: str, what: str, staged: str, pristine: Path, target: Path,
                table_type: str) -> Case:
    """Hudi's upsert of the rows staged as ``staged`` into a copy of ``pristine`` restored at ``target``."""
    options = write_options(table_type, "upsert", config)
    return _case(peer, config, name, what, lambda: peer.write(staged, target, options),
                 prepare=lambda: restore(pristine, target), facts=lambda: commit_facts(target))


def bulk_insert_case(peer: HudiPeer, config: HudiConfig, name: str, what: str, staged: str, target: Path,
                     table_type: str) -> Case:
    """Hudi's ``bulk_insert`` of the rows staged as ``staged`` into a new table at ``target``."""
    options = write_options(table_type, "bulk_insert", config)
    return _case(peer, config, name, what, lambda: peer.write(staged, target, options),
                 prepare=lambda: shutil.rmtree(target, ignore_errors=True), facts=lambda: commit_facts(target))


def scan_case(peer: HudiPeer, config: HudiConfig, name: str, what: str, path: Path,
              options: dict[str, str] | None = None) -> Case:
    read = options or config.options
    return _case(peer, config, name, what, lambda: peer.scan(path, read))


def aggregate_case(peer: HudiPeer, config: HudiConfig, name: str, what: str, path: Path) -> Case:
    return _case(peer, config, name, what, lambda: peer.aggregate(path, config.options)[0])
