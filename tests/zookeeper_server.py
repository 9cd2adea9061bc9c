"""A real ZooKeeper server for the tests, started by the tests: Debian's ``zookeeper`` package
(``apt-get install zookeeper``; ``.ci/run`` installs it), run standalone from its jars with java.

The server runs for the whole test session on a free loopback port, with its data in a temp folder
and its own ``zoo.cfg``: a short tick (200 ms, so sessions can be as short as 400 ms and a killed
holder's lock is released in well under a second), a wide session-timeout range (so Hudi's 60 s
default is granted as asked), and no admin HTTP server. It is ready when it answers ``ruok`` with
``imok`` and has opened a first session. A missing package or java skips the tests locally and fails
them under ``CI=true``.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import _missing, require_module
from tests.object_stores import free_port
from tests.server_process import log_tail, stop_process

ZOOKEEPER_JAR = Path("/usr/share/java/zookeeper.jar")  # its manifest's Class-Path names the other jars
MAIN_CLASS = "org.apache.zookeeper.server.ZooKeeperServerMain"
TICK_MS = 200


def four_letter_word(port: int, word: str = "ruok", timeout: float = 1.0) -> str:
    """ZooKeeper's answer to a four-letter command ("" when nothing answers)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(word.encode())
            return sock.recv(64).decode(errors="replace")
    except OSError:
        return ""


@dataclass
class ZookeeperServer:
    port: int
    process: subprocess.Popen
    log_path: Path

    host = "127.0.0.1"

    def log_tail(self, lines: int = 20) -> str:
        return log_tail(self.log_path, lines)

    def stop(self) -> None:
        stop_process(self.process)


def start_zookeeper(work: Path, port: int | None = None, timeout: float = 60.0) -> ZookeeperServer:
    """A server with its data in ``work``: a new one, or (given the ``port`` of one that stopped) that
    server again, with its sessions."""
    java = shutil.which("java")
    if not ZOOKEEPER_JAR.is_file() or java is None:
        _missing(f"ZooKeeper is not installed ({ZOOKEEPER_JAR} or java missing): apt-get install zookeeper")
    port = port or free_port()
    (work / "data").mkdir(exist_ok=True)
    config = work / "zoo.cfg"
    config.write_text(
        f"tickTime={TICK_MS}\ndataDir={work / 'data'}\nclientPort={port}\nclientPortAddress=127.0.0.1\n"
        f"minSessionTimeout={2 * TICK_MS}\nmaxSessionTimeout=120000\nadmin.enableServer=false\n"
        "4lw.commands.whitelist=ruok,srvr\n")
    log_path = work / "zookeeper.log"
    with open(log_path, "ab") as log:
        process = subprocess.Popen([java, "-Xmx256m", "-cp", str(ZOOKEEPER_JAR), MAIN_CLASS, str(config)],
                                   stdout=log, stderr=subprocess.STDOUT, cwd=work)
    server = ZookeeperServer(port, process, log_path)
    deadline = time.monotonic() + timeout
    while four_letter_word(port) != "imok":
        if process.poll() is not None:
            raise RuntimeError(f"ZooKeeper exited with {process.returncode}: {server.log_tail()}")
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"ZooKeeper did not answer on 127.0.0.1:{port} within {timeout:.0f}s: {server.log_tail()}")
        time.sleep(0.1)
    # the first session on a new JVM can take a second or more (class loading, JIT): open one here, so
    # the tests' short connection timeouts measure the provider, not the server's warm-up
    client = require_module("kazoo.client").KazooClient(hosts=f"127.0.0.1:{port}")
    client.start(timeout=timeout)
    client.stop()
    client.close()
    return server


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory) -> Iterator[ZookeeperServer]:
    server = start_zookeeper(tmp_path_factory.mktemp("zookeeper"))
    yield server
    server.stop()


class Cuttable:
    """A TCP forwarder on a free loopback port in front of ``port``: ``cut()`` drops every connection
    through it and refuses new ones (a network partition between a client and the server, the server
    itself running on) until ``mend()``."""

    def __init__(self, port: int) -> None:
        self.upstream = port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self._open = threading.Event()
        self._open.set()
        self._sockets: list[socket.socket] = []
        self._guard = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                inbound, _ = self.listener.accept()
            except OSError:
                return  # closed
            if not self._open.is_set():
                inbound.close()
                continue
            try:
                outbound = socket.create_connection(("127.0.0.1", self.upstream), timeout=5)
            except OSError:
                inbound.close()
                continue
            with self._guard:
                self._sockets += [inbound, outbound]
            for source, target in ((inbound, outbound), (outbound, inbound)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, target: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                target.sendall(data)
        for sock in (source, target):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        self._open.clear()
        with self._guard:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def mend(self) -> None:
        self._open.set()

    def close(self) -> None:
        self.cut()
        self.listener.close()
