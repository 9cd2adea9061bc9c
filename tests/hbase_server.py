"""A real HBase for the HBase index's tests, started by the tests: HBase 2.x from Maven Central (``make hbase``
copies its jars into ``.tools/hbase/<version>``), run standalone with java.

Two JVMs on free loopback ports: ``HMaster start`` in local mode (the master, a region server and an embedded
ZooKeeper in one process, its root on the local file system in a temp folder), and the Thrift gateway
(``ThriftServer``), which this library's client speaks to while Java Hudi's HBase client reaches the same cluster
through the ZooKeeper port (the server's class path has ``hbase/codec_alias``, which Hudi's relocated client needs).
Heaps are small (512 MB and 256 MB). The server is ready when a table can be created
through the gateway. A missing install or java skips the tests locally and fails them under ``CI=true``.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO, _missing, require_module
from tests.object_stores import free_port
from tests.server_process import log_tail, stop_process

HBASE_VERSION = "2.6.1"  # also in the Makefile (HBASE_VERSION)
HBASE_JARS = REPO / ".tools" / "hbase" / HBASE_VERSION
CODEC_ALIAS = Path(__file__).parent / "hbase" / "codec_alias" / "KeyValueCodec.java"
# what HBase's own bin/hbase adds on Java 17
JAVA_OPTIONS = [
    "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.net.preferIPv4Stack=true",
    "-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true", "--add-modules", "jdk.unsupported",
    *[f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in ("java.nio", "sun.nio.ch", "java.lang", "jdk.internal.ref",
                                                         "java.lang.reflect")],
    *[f"--add-exports={p}=ALL-UNNAMED" for p in ("java.base/jdk.internal.misc", "java.security.jgss/sun.security.krb5",
                                                 "java.base/sun.net.dns", "java.base/sun.net.util")],
]
LOG4J = """log4j.rootLogger=INFO,console
log4j.logger.org.apache.hadoop.hbase=INFO
log4j.logger.org.apache.zookeeper=WARN
log4j.logger.org.apache.hadoop=WARN
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n
"""


def _site(work: Path, zk_port: int) -> str:
    settings = {
        "hbase.cluster.distributed": "false",
        "hbase.rootdir": (work / "root").as_uri(),
        "hbase.tmp.dir": str(work / "tmp"),
        "hbase.zookeeper.property.dataDir": str(work / "zookeeper"),
        "hbase.zookeeper.property.clientPort": str(zk_port),
        "hbase.zookeeper.quorum": "127.0.0.1",
        "hbase.master.port": "0", "hbase.master.info.port": "-1",
        "hbase.regionserver.port": "0", "hbase.regionserver.info.port": "-1",
        "hbase.master.ipc.address": "127.0.0.1", "hbase.regionserver.ipc.address": "127.0.0.1",
        "hbase.unsafe.stream.capability.enforce": "false",
        # a request of the gateway to a region server that stopped answering gives up in seconds, not minutes
        "hbase.client.retries.number": "3", "hbase.client.operation.timeout": "10000",
    }
    body = "".join(f"<property><name>{k}</name><value>{v}</value></property>\n" for k, v in settings.items())
    return f"<configuration>\n{body}</configuration>\n"


@dataclass
class HBaseServer:
    work: Path
    zk_port: int
    thrift_port: int
    master: subprocess.Popen
    thrift: subprocess.Popen | None = None

    host = "127.0.0.1"

    def _java(self, main: list[str], heap: str, log: str) -> subprocess.Popen:
        classpath = os.pathsep.join([str(self.work / "conf"), str(self.work / "classes"), f"{HBASE_JARS}/*"])
        with open(self.work / log, "ab") as out:
            return subprocess.Popen([shutil.which("java") or "java", f"-Xmx{heap}", *JAVA_OPTIONS, "-cp", classpath,
                                     *main], stdout=out, stderr=subprocess.STDOUT, cwd=self.work)

    def connection(self, timeout_ms: int = 10_000):
        return require_module("happybase").Connection(self.host, self.thrift_port, timeout=timeout_ms)

    def log_tail(self, lines: int = 20) -> str:
        return "\n".join(log_tail(self.work / name, lines) for name in ("master.log", "thrift.log")
                         if (self.work / name).exists())

    def start_thrift(self, timeout: float = 180.0) -> None:
        """The gateway, started and answering (the master too: a table can be created)."""
        self.thrift = self._java(["org.apache.hadoop.hbase.thrift.ThriftServer", "-p", str(self.thrift_port),
                                  "--bind", self.host, "--infoport", "-1", "start"], "256m", "thrift.log")
        deadline = time.monotonic() + timeout
        while True:
            for process in (self.master, self.thrift):
                if process.poll() is not None:
                    raise RuntimeError(f"HBase exited with {process.returncode}: {self.log_tail()}")
            try:  # a table can be created once hbase:meta is online
                connection = self.connection(10_000)
                if b"hoodie_ready" not in connection.tables():
                    connection.create_table("hoodie_ready", {"_s": {}})
                connection.close()
                return
            except Exception:  # not listening yet, or the master not yet initialized
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"HBase did not answer within {timeout:.0f}s: {self.log_tail()}") from None
                time.sleep(0.5)

    def stop_thrift(self) -> None:
        if self.thrift is not None:
            stop_process(self.thrift)
            self.thrift = None

    def freeze_gateway(self) -> None:
        """Stop the gateway's process (SIGSTOP): it still accepts connections, but answers nothing. (Freezing the
        master instead outlasts its region server's ZooKeeper session on a busy machine, which then aborts.)"""
        assert self.thrift is not None
        os.kill(self.thrift.pid, signal.SIGSTOP)

    def thaw_gateway(self, timeout: float = 120.0) -> None:
        """Let the gateway go on, and wait until a read goes through it again."""
        assert self.thrift is not None
        os.kill(self.thrift.pid, signal.SIGCONT)
        deadline = time.monotonic() + timeout
        while True:
            try:
                connection = self.connection(10_000)
                connection.table("hoodie_ready").row(b"probe")
                connection.close()
                return
            except Exception:  # still catching up
                if time.monotonic() > deadline:
                    raise RuntimeError(f"HBase did not answer again within {timeout:.0f}s: {self.log_tail()}") from None
                time.sleep(0.5)

    def stop(self) -> None:
        self.stop_thrift()
        stop_process(self.master)

    def create_table(self, name: str, versions: int = 2) -> str:
        connection = self.connection()
        try:
            if name.encode() in connection.tables():
                connection.delete_table(name, disable=True)
            connection.create_table(name, {"_s": {"max_versions": versions}})
        finally:
            connection.close()
        return name

    def index_options(self, table: str, **more: str) -> dict[str, str]:
        """The write options of an HBase index on ``table`` of this server."""
        return {"hoodie.index.type": "HBASE", "hoodie.index.hbase.zkquorum": self.host,
                "hoodie.index.hbase.zkport": str(self.zk_port), "hoodie.index.hbase.table": table,
                "hoodie.index.hbase.thrift.address": f"{self.host}:{self.thrift_port}", **more}


def _compile_codec_alias(classes: Path) -> None:
    """``codec_alias/KeyValueCodec.java`` onto the server's class path, so that Java Hudi's relocated HBase client
    can talk to it (what the file says); a JDK's javac compiles it."""
    javac = shutil.which("javac")
    if javac is None:
        _missing("javac is missing (apt-get install openjdk-17-jdk-headless): the test HBase needs the codec alias")
    subprocess.run([javac, "-nowarn", "-cp", f"{HBASE_JARS}/*", "-d", str(classes), str(CODEC_ALIAS)], check=True,
                   capture_output=True)


def start_hbase(work: Path, heap: str = "512m") -> HBaseServer:
    if not (HBASE_JARS / ".complete").is_file() or shutil.which("java") is None:
        _missing(f"HBase is not installed ({HBASE_JARS} or java missing): make hbase")
    require_module("happybase")
    (work / "conf").mkdir(parents=True, exist_ok=True)
    _compile_codec_alias(work / "classes")
    zk_port = free_port()
    (work / "conf" / "hbase-site.xml").write_text(_site(work, zk_port))
    (work / "conf" / "log4j.properties").write_text(LOG4J)
    server = HBaseServer(work, zk_port, free_port(), master=None)  # type: ignore[arg-type]
    server.master = server._java(["org.apache.hadoop.hbase.master.HMaster", "start"], heap, "master.log")
    server.start_thrift()
    return server


@pytest.fixture(scope="session")
def hbase(tmp_path_factory) -> Iterator[HBaseServer]:
    server = start_hbase(tmp_path_factory.mktemp("hbase"))
    yield server
    server.stop()
