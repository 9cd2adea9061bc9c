"""The table lock held in ZooKeeper, as Apache Hudi's ``ZookeeperBasedLockProvider`` holds it
(``org.apache.hudi.client.transaction.lock.BaseZookeeperBasedLockProvider``): a mutex at
``<base_path>/<lock_key>``, whose persistent parent nodes the provider creates when it connects, and
whose contenders are ephemeral sequential nodes under it. The lowest sequence number holds the lock;
a holder whose process dies loses its node, and so the lock, when its ZooKeeper session expires
(``session_timeout_ms`` after the server last heard from it).

The client is kazoo's (pure Python) and the mutex its ``Lock`` recipe, with the contender nodes named
as Curator's ``InterProcessMutex`` (Hudi's) names them, ``<uuid>-lock-<sequence>``, and Curator's nodes
counted as contenders, so this library and Hudi's Java writers wait for each other on the same path.
"""

from __future__ import annotations

import logging
import os
import socket
import threading

from hoodie_datasource.config.concurrency_config import ZookeeperLockConfig
from hoodie_datasource.errors import HoodieConfigError, LockError, PythonEnvironmentError
from hoodie_datasource.transaction.lock_provider import LockProvider

logger = logging.getLogger(__name__)

def _kazoo():
    try:
        from kazoo import client, exceptions, retry
        from kazoo.recipe import lock
    except ImportError as exc:
        raise PythonEnvironmentError(
            f"hoodie.write.lock.provider names the ZooKeeper lock, which needs kazoo ({exc}): "
            "pip install 'hoodie-datasource[zookeeper]'") from exc
    return client, exceptions, lock, retry


def _curator_compatible_lock(lock):
    class CuratorCompatibleLock(lock.Lock):
        """kazoo's mutex, its nodes named ``<uuid>-lock-<sequence>`` as Curator names them
        (``StandardLockInternalsDriver`` sorts every child by what follows its last ``lock-``)."""

        _NODE_NAME = "-lock-"
        _EXCLUDE_NAMES = ["-lock-"]

    return CuratorCompatibleLock


class ZookeeperLockProvider(LockProvider):
    """Connects (and creates the lock's parent nodes) when built; one session at a time.

    No call waits on an unreachable server for long: a lost connection is retried for at most the
    session timeout (past it, the session and any lock it held are gone anyway), and ``try_lock`` and
    ``unlock`` first wait at most ``connection_timeout_ms`` for a connection, else raise ``LockError``."""

    def __init__(self, config: ZookeeperLockConfig) -> None:
        if not config.base_path.startswith("/"):
            raise HoodieConfigError(
                f"hoodie.write.lock.zookeeper.base_path must be an absolute ZooKeeper path (start with '/'), "
                f"got {config.base_path!r}")
        if not config.lock_key or "/" in config.lock_key:
            raise HoodieConfigError(
                f"hoodie.write.lock.zookeeper.lock_key must be one node name (no '/'), got {config.lock_key!r}")
        self.config = config
        self._kazoo_client, self._errors, lock, self._retry = _kazoo()
        self._lock_class = _curator_compatible_lock(lock)
        self._lock = None
        self._connected = threading.Event()
        self._connect()
        try:
            self._client.ensure_path(config.lock_path)
        except self._errors.KazooException as exc:
            self._discard_client()
            raise LockError(f"Cannot create {config.lock_path} on ZooKeeper at {config.connect_string}: "
                            f"{type(exc).__name__}: {exc}") from exc

    def _unreachable(self) -> str:
        return (f"Cannot reach ZooKeeper at {self.config.connect_string} within {self.config.connection_timeout_ms} "
                "ms: check that the server is running and reachable from here, and "
                "hoodie.write.lock.zookeeper.url / port / connection_timeout_ms")

    def _connect(self) -> None:
        """A new client and session: the first, or one replacing a client that gave up on the server
        (kazoo's clients are not restarted once closed)."""
        session_s = self.config.session_timeout_ms / 1000
        # a lost connection is retried until the session would have expired anyway, then given up
        reconnect = self._retry.KazooRetry(max_tries=-1, delay=0.1, max_delay=1.0, deadline=session_s)
        self._connected.clear()
        client = self._kazoo_client.KazooClient(hosts=self.config.connect_string, timeout=session_s,
                                                connection_retry=reconnect, logger=logger)
        client.add_listener(lambda state: self._on_state(client, state))
        self._client = client
        try:
            self._client.start(timeout=self.config.connection_timeout_ms / 1000)
        except self._client.handler.timeout_exception as exc:  # kazoo stopped and closed the client
            raise LockError(self._unreachable()) from exc

    def _discard_client(self) -> None:
        self._client.stop()
        self._client.close()

    def _on_state(self, client, state) -> None:
        if client is not self._client:  # a discarded client's last words
            return
        if state == "CONNECTED":
            self._connected.set()
            return
        self._connected.clear()
        if state == "LOST" and self._lock is not None:
            logger.error("ZooKeeper session to %s expired while holding %s: the lock is lost",
                         self.config.connect_string, self.config.lock_path)

    def _ensure_connected(self) -> None:
        """A session within ``connection_timeout_ms``: the one in place, a reconnected one, or a new one
        when the client gave up reconnecting (its state CLOSED)."""
        if self._client.client_state == "CLOSED":
            self._discard_client()
            self._connect()
        elif not self._connected.wait(self.config.connection_timeout_ms / 1000):
            raise LockError(self._unreachable())

    def try_lock(self, timeout_s: float) -> bool:
        if self._lock is not None:
            raise LockError(f"{self.describe()} is already held by this provider (the lock is not re-entrant)")
        self._ensure_connected()
        lock = self._lock_class(self._client, self.config.lock_path, identifier=f"{socket.gethostname()}:{os.getpid()}")
        # kazoo waits up to its timeout for each predecessor in turn; the timer bounds the whole wait
        deadline = threading.Timer(timeout_s, lock.cancel)
        deadline.start()
        try:
            acquired = lock.acquire(timeout=timeout_s)
        except (self._errors.LockTimeout, self._errors.CancelledError):
            acquired = False
        except self._errors.KazooException as exc:
            raise LockError(f"Cannot acquire {self.describe()}: {type(exc).__name__}: {exc}") from exc
        finally:
            deadline.cancel()
        if acquired:
            self._lock = lock
            logger.info("Acquired %s", self.describe())
        else:
            logger.info("Not acquired within %.1f s: %s", timeout_s, self.describe())
        return acquired

    def unlock(self) -> None:
        if self._lock is None:
            return
        lock, self._lock = self._lock, None
        lost = (f"its node goes when the session expires ({self.config.session_timeout_ms} ms after the server "
                "last heard from this process)")
        try:
            self._ensure_connected()
            lock.release()
        except (LockError, self._errors.KazooException) as exc:
            # end the session on this side, so that a server that comes back expires it, and its node,
            # rather than this process reconnecting to it and keeping the node forever
            self._client.stop()
            raise LockError(f"Cannot release {self.describe()} ({exc}); {lost}") from exc
        logger.info("Released %s", self.describe())

    def close(self) -> None:
        try:
            self.unlock()
        except LockError as exc:
            logger.warning("%s", exc)
        finally:
            self._discard_client()

    def describe(self) -> str:
        return f"the ZooKeeper lock {self.config.lock_path} on {self.config.connect_string}"
