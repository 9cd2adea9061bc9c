"""The ZooKeeper table lock against a real ZooKeeper server (tests/zookeeper_server.py): it excludes
other processes and Hudi's own Java lock (Curator's InterProcessMutex) on the same path, never loses an
update two processes make under it, is released when its holder is SIGKILLed and its session expires,
bounds every wait by its timeout, and fails fast and clearly when the server cannot be reached, stops,
or is cut off for a moment (that one is a ``fault`` test)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from hoodie_datasource.config.concurrency_config import ZookeeperLockConfig
from hoodie_datasource.errors import HoodieConfigError, LockError
from hoodie_datasource.transaction.zookeeper_lock import ZookeeperLockProvider
from tests.conftest import REPO, _missing, require_module
from tests.object_stores import free_port
from tests.zookeeper_server import Cuttable, ZookeeperServer, start_zookeeper

kazoo_client = require_module("kazoo.client")  # the test extra installs it

SESSION_MS = 1000  # the killed holder's session: its lock is free about this long after the kill


def _config(zookeeper: ZookeeperServer, base_path: str, lock_key: str = "table", session_ms: int = SESSION_MS,
            connection_ms: int = 5000) -> ZookeeperLockConfig:
    return ZookeeperLockConfig(zookeeper.host, zookeeper.port, base_path, lock_key, session_ms, connection_ms)


@pytest.fixture
def base_path() -> str:
    return f"/hoodie/test-{uuid.uuid4().hex[:12]}/locks"


@pytest.fixture
def inspector(zookeeper: ZookeeperServer):
    """A plain kazoo client, to look at the nodes the providers leave."""
    client = kazoo_client.KazooClient(hosts=f"{zookeeper.host}:{zookeeper.port}")
    client.start(timeout=10)
    yield client
    client.stop()
    client.close()


def _worker(zookeeper: ZookeeperServer, base_path: str, *job: str, session_ms: int = SESSION_MS) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "tests.storage.zookeeper_lock_worker", str(zookeeper.port), base_path, "table",
               str(session_ms), *job]
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=REPO, env=env)


def _line(worker: subprocess.Popen) -> str:
    line = worker.stdout.readline()
    assert line, f"the worker printed nothing: {worker.stderr.read()}"
    return line.strip()


def _finish(worker: subprocess.Popen) -> None:
    """Wait for a worker and fail the test with its stderr when it failed."""
    _, err = worker.communicate(timeout=60)
    assert worker.returncode == 0, err


def test_acquire_release_leaves_one_ephemeral_node_while_held(zookeeper, base_path, inspector):
    provider = ZookeeperLockProvider(_config(zookeeper, base_path))
    lock_path = f"{base_path}/table"
    try:
        assert provider.try_lock(5)
        [node] = inspector.get_children(lock_path)
        assert "-lock-" in node  # named as Curator's InterProcessMutex names its nodes (Hudi's Java writers)
        assert inspector.exists(f"{lock_path}/{node}").ephemeralOwner != 0
        with pytest.raises(LockError, match="already held"):
            provider.try_lock(1)
        provider.unlock()
        assert inspector.get_children(lock_path) == []
        provider.unlock()  # a no-op when not held
        assert provider.try_lock(5)
    finally:
        provider.close()
    assert inspector.get_children(lock_path) == []  # close released it
    assert lock_path in provider.describe() and f"127.0.0.1:{zookeeper.port}" in provider.describe()


def test_another_process_cannot_acquire_while_held(zookeeper, base_path):
    provider = ZookeeperLockProvider(_config(zookeeper, base_path))
    try:
        assert provider.try_lock(5)
        waiting = _worker(zookeeper, base_path, "try", "1.0")
        result = json.loads(_line(waiting))
        _finish(waiting)
        assert result["acquired"] is False
        assert 1.0 <= result["elapsed"] < 5.0
        provider.unlock()
        after = _worker(zookeeper, base_path, "try", "5")
        result = json.loads(_line(after))
        _finish(after)
        assert result["acquired"] is True
        assert result["elapsed"] < 1.0
    finally:
        provider.close()


def test_try_lock_waits_no_longer_than_its_timeout_behind_several_contenders(zookeeper, base_path, inspector):
    """kazoo's recipe waits its timeout anew each time its predecessor changes; the provider's bound is total."""
    holder = ZookeeperLockProvider(_config(zookeeper, base_path))
    waiter = ZookeeperLockProvider(_config(zookeeper, base_path))
    try:
        assert holder.try_lock(5)
        queued = _worker(zookeeper, base_path, "try", "1.0")  # queues behind the holder, gives up after 1 s
        deadline = time.monotonic() + 20
        while len(inspector.get_children(f"{base_path}/table")) < 2:
            assert time.monotonic() < deadline and queued.poll() is None, queued.stderr.read()
            time.sleep(0.02)
        start = time.monotonic()
        assert not waiter.try_lock(2.0)  # its predecessor leaves after ~1 s: then it waits on the holder
        assert time.monotonic() - start < 2.5
        assert json.loads(_line(queued))["acquired"] is False
        _finish(queued)
    finally:
        waiter.close()
        holder.close()


def test_two_processes_never_lose_an_increment(zookeeper, base_path, tmp_path: Path):
    counter = tmp_path / "counter"
    counter.write_text("0")
    workers = [_worker(zookeeper, base_path, "count", str(counter), "20") for _ in range(2)]
    for worker in workers:
        assert _line(worker) == "ready"
    for worker in workers:
        worker.stdin.write("go\n")
        worker.stdin.flush()
    for worker in workers:
        assert _line(worker) == "done"
        _finish(worker)
    assert int(counter.read_text()) == 40


def test_killed_holder_releases_the_lock_when_its_session_expires(zookeeper, base_path, inspector):
    provider = ZookeeperLockProvider(_config(zookeeper, base_path))
    holder = _worker(zookeeper, base_path, "hold")
    try:
        assert _line(holder) == "locked"
        assert not provider.try_lock(0.3)
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(10)
        killed = time.monotonic()
        assert provider.try_lock(15)
        waited = time.monotonic() - killed
        # the dead holder's node stayed until its session expired (not when its socket closed)
        assert SESSION_MS / 1000 * 0.5 <= waited < SESSION_MS / 1000 + 5
        assert len(inspector.get_children(f"{base_path}/table")) == 1
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        for stream in (holder.stdin, holder.stdout, holder.stderr):
            stream.close()
        provider.close()


def test_unreachable_server_raises_lock_error_naming_it_quickly():
    port = free_port()  # nothing listens there
    config = ZookeeperLockConfig("127.0.0.1", port, "/hoodie/locks", "table", SESSION_MS, 1000)
    start = time.monotonic()
    with pytest.raises(LockError, match=f"127.0.0.1:{port}.*check that the server is running"):
        ZookeeperLockProvider(config)
    assert time.monotonic() - start < 5


def test_server_stopping_under_a_holder_fails_fast_and_the_lock_comes_back_with_it(tmp_path, inspector):
    """A server of its own, stopped while the provider holds the lock and started again on the same port."""
    server = start_zookeeper(tmp_path)
    try:
        provider = ZookeeperLockProvider(_config(server, "/hoodie/locks", connection_ms=500))
        try:
            assert provider.try_lock(5)
            server.stop()
            start = time.monotonic()
            with pytest.raises(LockError, match=f"Cannot release .*127.0.0.1:{server.port}.*session expires"):
                provider.unlock()
            with pytest.raises(LockError, match=f"Cannot reach ZooKeeper at 127.0.0.1:{server.port}"):
                provider.try_lock(5)
            assert time.monotonic() - start < 5  # about two connection timeouts, never a hang
            server = start_zookeeper(tmp_path, server.port)
            start = time.monotonic()
            assert provider.try_lock(15)  # a new session, once the server expired the old one and its node
            assert time.monotonic() - start < SESSION_MS / 1000 + 5
        finally:
            provider.close()
    finally:
        server.stop()


@pytest.mark.fault
def test_a_release_lost_in_a_short_partition_does_not_leave_the_lock_held_forever(zookeeper, base_path):
    """The connection drops while the provider holds the lock and comes back within the session timeout:
    the release fails, and its node still goes (the provider ends that session) instead of the
    reconnected session keeping it and the provider waiting behind its own node."""
    session_ms = 3000
    cuttable = Cuttable(zookeeper.port)
    try:
        provider = ZookeeperLockProvider(ZookeeperLockConfig("127.0.0.1", cuttable.port, base_path, "table",
                                                             session_ms, 2000))
        try:
            assert provider.try_lock(5)
            cuttable.cut()
            with pytest.raises(LockError, match=f"Cannot release .*127.0.0.1:{cuttable.port}"):
                provider.unlock()
            cuttable.mend()
            start = time.monotonic()
            assert provider.try_lock(session_ms / 1000 + 5)
            assert time.monotonic() - start < session_ms / 1000 + 2
        finally:
            provider.close()
    finally:
        cuttable.close()


def test_base_path_is_created_when_absent_and_kept(zookeeper, base_path, inspector):
    assert inspector.exists(base_path) is None
    provider = ZookeeperLockProvider(_config(zookeeper, base_path, lock_key="trips"))
    provider.close()
    stat = inspector.exists(f"{base_path}/trips")
    assert stat is not None and stat.ephemeralOwner == 0  # persistent: it outlives the provider's session


def test_connect_string_gives_hosts_without_a_port_the_configured_one():
    config = ZookeeperLockConfig("zk1, zk2:2182", 2181, "/hoodie/locks", "table")
    assert config.connect_string == "zk1:2181,zk2:2182"
    assert config.lock_path == "/hoodie/locks/table"
    assert (config.session_timeout_ms, config.connection_timeout_ms) == (60_000, 15_000)  # Hudi's defaults


@pytest.mark.parametrize(("base", "key", "named"), [("hoodie/locks", "t", "base_path"), ("/hoodie", "a/b", "lock_key")])
def test_bad_paths_are_config_errors(base, key, named):
    with pytest.raises(HoodieConfigError, match=f"hoodie.write.lock.zookeeper.{named}"):
        ZookeeperLockProvider(ZookeeperLockConfig("127.0.0.1", 1, base, key))


CURATOR_JAR = Path("/usr/share/java/curator-recipes.jar")  # Debian's libcurator-recipes-java; its manifest names the rest


def _curator_worker(zookeeper: ZookeeperServer, lock_path: str) -> subprocess.Popen:
    if not CURATOR_JAR.is_file() or shutil.which("javac") is None:
        _missing(f"Curator ({CURATOR_JAR}) or a JDK (javac, to run a single-file Java program) is missing: "
                 "apt-get install libcurator-recipes-java openjdk-17-jdk-headless")
    source = Path(__file__).with_name("CuratorMutexWorker.java")
    return subprocess.Popen(["java", "-cp", str(CURATOR_JAR), str(source), f"{zookeeper.host}:{zookeeper.port}", lock_path],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _ask(worker: subprocess.Popen, command: str) -> str:
    worker.stdin.write(command + "\n")
    worker.stdin.flush()
    return _line(worker)


def test_hudi_java_writers_and_this_library_exclude_each_other(zookeeper, base_path):
    """Hudi's lock (Curator's InterProcessMutex, in a JVM) and this provider on the same path."""
    provider = ZookeeperLockProvider(_config(zookeeper, base_path))
    java = _curator_worker(zookeeper, f"{base_path}/table")
    try:
        assert _line(java) == "ready"
        assert _ask(java, "acquire 5000") == "true"
        assert not provider.try_lock(0.5)
        assert _ask(java, "release") == "released"
        assert provider.try_lock(5)
        assert _ask(java, "acquire 500") == "false"
        provider.unlock()
        assert _ask(java, "acquire 5000") == "true"
        assert _ask(java, "release") == "released"
    finally:
        provider.close()
        java.stdin.close()
        err = java.stderr.read()
        java.wait(30)
        java.stdout.close()
        java.stderr.close()
    assert java.returncode == 0, err


def test_occ_writes_take_the_zookeeper_lock(zookeeper, base_path, inspector, tmp_path: Path):
    """``hoodie.write.lock.provider=zookeeper`` (Hudi's class name works too) runs OCC writes under the
    ZooKeeper lock at ``<base_path>/<table name>``: both writes commit and no lock node is left held."""
    from hoodie_datasource.client.local_engine import write_local
    from tests.unit.small_tables import batch, read_pairs

    path = str(tmp_path / "t")
    options = {"table.name": "trips", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
               "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
               "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider",
               "hoodie.write.lock.zookeeper.url": zookeeper.host, "hoodie.write.lock.zookeeper.port": str(zookeeper.port),
               "hoodie.write.lock.zookeeper.base_path": base_path}
    write_local(path, batch([("a", 1, "x", 1)]), options)
    write_local(path, batch([("b", 1, "y", 2)]), options)
    assert read_pairs(path) == [("a", 1), ("b", 2)]
    assert inspector.exists(f"{base_path}/trips") and inspector.get_children(f"{base_path}/trips") == []
