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
from dataclasses import dataclass

from hoodie_datasource.errors import HoodieConfigError, LockError, PythonEnvironmentError
from hoodie_datasource.transaction.lock_provider import LockProvider

logger = logging.getLogger(__name__)

# Hudi's LockConfiguration.DEFAULT_ZK_SESSION_TIMEOUT_MS and DEFAULT_ZK_CONNECTION_TIMEOUT_MS
DEFAULT_SESSION_TIMEOUT_MS = 60_000
DEFAULT_CONNECTION_TIMEOUT_MS = 15_000


@dataclass(frozen=True)
class ZookeeperLockConfig:
    """``hoodie.write.lock.zookeeper.*``: ``url`` is one host or a comma-separated ensemble; a host
    without ``:port`` gets ``port``."""

    url: str
    port: int
    base_path: str
    lock_key: str
    session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS
    connection_timeout_ms: int = DEFAULT_CONNECTION_TIMEOUT_MS

    @property
    def connect_string(self) -> str:
        hosts = [h.strip() for h in self.url.split(",") if h.strip()]
        return ",".join(h if ":" in h else f"{h}:{self.port}" for h in hosts)

    @property
    def lock_path(self) -> str:
        return f"{self.base_path.rstrip('/')}/{self.lock_key}"


def _kazoo():
    try:
        from kazoo import client, exceptions, recipe
    except ImportError as exc:
        raise PythonEnvironmentError(
            f"hoodie.write.lock.provider names the ZooKeeper lock, which needs kazoo ({exc}): "
            "pip install 'hoodie-datasource[zookeeper]'") from exc
    return client, exceptions, recipe


def _curator_compatible_lock(recipe):
    class CuratorCompatibleLock(recipe.lock.Lock):
        """kazoo's mutex, its nodes named ``<uuid>-lock-<sequence>`` as Curator names them
        (``StandardLockInternalsDriver`` sorts every child by what follows its last ``lock-``)."""

        _NODE_NAME = "-lock-"
        _EXCLUDE_NAMES = ["-lock-"]

    return CuratorCompatibleLock


class ZookeeperLockProvider(LockProvider):
    """Connects (and creates the lock's parent nodes) when built; one provider, one session."""

    def __init__(self, config: ZookeeperLockConfig) -> None:
        if not config.base_path.startswith("/"):
            raise HoodieConfigError(
                f"hoodie.write.lock.zookeeper.base_path must be an absolute ZooKeeper path (start with '/'), "
                f"got {config.base_path!r}")
        if not config.lock_key or "/" in config.lock_key:
            raise HoodieConfigError(
                f"hoodie.write.lock.zookeeper.lock_key must be one node name (no '/'), got {config.lock_key!r}")
        self.config = config
        client, self._errors, recipe = _kazoo()
        self._lock_class = _curator_compatible_lock(recipe)
        self._lock = None
        self._client = client.KazooClient(hosts=config.connect_string, timeout=config.session_timeout_ms / 1000,
                                          logger=logger)
        self._client.add_listener(self._on_state)
        try:
            self._client.start(timeout=config.connection_timeout_ms / 1000)
            self._client.ensure_path(config.lock_path)
        except Exception as exc:
            self._client.stop()
            self._client.close()
            raise LockError(
                f"Cannot reach ZooKeeper at {config.connect_string} within {config.connection_timeout_ms} ms "
                f"({type(exc).__name__}: {exc}) to create {config.lock_path}: check that the server is running "
                "and reachable from here, and hoodie.write.lock.zookeeper.url / port / connection_timeout_ms"
            ) from exc

    def _on_state(self, state) -> None:
        if state == "LOST" and self._lock is not None:
            logger.error("ZooKeeper session to %s expired while holding %s: the lock is lost",
                         self.config.connect_string, self.config.lock_path)

    def try_lock(self, timeout_s: float) -> bool:
        if self._lock is not None:
            raise LockError(f"{self.describe()} is already held by this provider (the lock is not re-entrant)")
        lock = self._lock_class(self._client, self.config.lock_path, identifier=f"{socket.gethostname()}:{os.getpid()}")
        try:
            acquired = lock.acquire(timeout=timeout_s)
        except self._errors.LockTimeout:
            acquired = False
        except self._errors.KazooException as exc:
            raise LockError(f"Cannot acquire {self.describe()}: {type(exc).__name__}: {exc}") from exc
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
        try:
            lock.release()
        except self._errors.KazooException as exc:
            raise LockError(f"Cannot release {self.describe()}: {type(exc).__name__}: {exc}; its node goes when "
                            f"the session expires ({self.config.session_timeout_ms} ms)") from exc
        logger.info("Released %s", self.describe())

    def close(self) -> None:
        try:
            self.unlock()
        except LockError as exc:
            logger.warning("%s", exc)
        finally:
            self._client.stop()
            self._client.close()

    def describe(self) -> str:
        return f"the ZooKeeper lock {self.config.lock_path} on {self.config.connect_string}"
