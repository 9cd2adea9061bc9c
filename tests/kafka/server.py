"""A real Kafka broker for the tests: Apache Kafka from Maven Central (``make kafka`` puts its jars in
``.tools/kafka/server-<version>``), run with java in KRaft mode as one process that is both broker and
controller, on two free loopback ports, with its log in a temp folder and a 256 MB heap.

Its storage is formatted first with Kafka's storage tool (``kafka.tools.StorageTool format``, a fresh cluster
id), then ``kafka.Kafka`` runs. It is ready when an admin client lists its topics. Topics are not created on
first use (``auto.create.topics.enable=false``): a test creates each, so a consumer asking for a missing
topic sees it missing. A missing jar folder or java skips the tests locally and fails them under ``CI=true``.

Spark's Kafka connector (``.tools/kafka/spark-sql-kafka-<version>``) is put on the test sessions' class path
by ``tests.conftest.local_builder`` when it is there.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO, _missing, require_module
from tests.object_stores import free_port
from tests.server_process import ServerProcess, wait_until_ready

KAFKA_VERSION = "4.4.0"  # as the Makefile's KAFKA_VERSION
SPARK_KAFKA_VERSION = "4.2.0"  # as the Makefile's SPARK_KAFKA_VERSION
KAFKA_DIR = REPO / ".tools" / "kafka"
SERVER_JARS = KAFKA_DIR / f"server-{KAFKA_VERSION}"
SPARK_KAFKA_JARS = KAFKA_DIR / f"spark-sql-kafka-{SPARK_KAFKA_VERSION}"
COMPLETE = ".complete"  # written by the Makefile once every jar is copied
HEAP = "-Xmx256m"


def spark_kafka_jars() -> list[Path]:
    """Spark's Kafka connector and what it needs beyond pyspark, once ``make kafka`` fetched them; else none."""
    return sorted(SPARK_KAFKA_JARS.glob("*.jar")) if (SPARK_KAFKA_JARS / COMPLETE).is_file() else []


def require_spark_kafka() -> None:
    if not spark_kafka_jars():
        _missing(f"Spark's Kafka connector is not installed in {SPARK_KAFKA_JARS.relative_to(REPO)}: "
                 "run `make kafka` (it needs mvn)")


class KafkaServer(ServerProcess):
    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"


def _properties(work: Path, port: int, controller_port: int) -> str:
    return "\n".join([
        "process.roles=broker,controller", "node.id=1", f"controller.quorum.voters=1@127.0.0.1:{controller_port}",
        f"listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        f"advertised.listeners=PLAINTEXT://127.0.0.1:{port}", "controller.listener.names=CONTROLLER",
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "inter.broker.listener.name=PLAINTEXT", f"log.dirs={work / 'logs'}",
        # one broker: every internal topic has one replica
        "offsets.topic.replication.factor=1", "offsets.topic.num.partitions=1",
        "transaction.state.log.replication.factor=1", "transaction.state.log.min.isr=1",
        "share.coordinator.state.topic.replication.factor=1", "share.coordinator.state.topic.min.isr=1",
        "group.initial.rebalance.delay.ms=0", "auto.create.topics.enable=false", "",
    ])


def start_kafka(work: Path, timeout: float = 90.0) -> KafkaServer:
    java = shutil.which("java")
    if not (SERVER_JARS / COMPLETE).is_file() or java is None:
        _missing(f"Kafka {KAFKA_VERSION} is not installed in {SERVER_JARS.relative_to(REPO)} (or java is missing): "
                 "run `make kafka` (it needs mvn)")
    admin_module = require_module("confluent_kafka.admin")
    port, controller_port = free_port(), free_port()
    config = work / "server.properties"
    config.write_text(_properties(work, port, controller_port))
    classpath = f"{SERVER_JARS}/*"
    cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
    log_path = work / "kafka.log"
    with open(log_path, "ab") as log:
        subprocess.run([java, "-Xmx128m", "-cp", classpath, "kafka.tools.StorageTool", "format", "-t", cluster_id,
                        "-c", str(config)], stdout=log, stderr=subprocess.STDOUT, check=True, timeout=timeout)
        process = subprocess.Popen([java, HEAP, "-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                                    "-cp", classpath, "kafka.Kafka", str(config)],
                                   stdout=log, stderr=subprocess.STDOUT, cwd=work)
    server = KafkaServer(port, process, log_path)
    admin = admin_module.AdminClient({"bootstrap.servers": server.bootstrap})
    wait_until_ready(process, "Kafka", server.bootstrap, lambda: admin.list_topics(timeout=2), log_path, timeout)
    return server


@pytest.fixture(scope="session")
def kafka(tmp_path_factory) -> Iterator[KafkaServer]:
    server = start_kafka(tmp_path_factory.mktemp("kafka"))
    yield server
    server.stop()
