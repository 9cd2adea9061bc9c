"""How several writers share a table, resolved once from the write options: the concurrency mode, the
failed-writes policy, heartbeats, the lock provider and its waits (Hudi's ``HoodieWriteConfig``,
``HoodieLockConfig``, ``LockConfiguration``; option names and defaults are Hudi's)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hoodie_datasource.config import keys as k
from hoodie_datasource.errors import HoodieConfigError

SINGLE_WRITER = "single_writer"
OCC = "optimistic_concurrency_control"


@dataclass(frozen=True)
class ZookeeperLockConfig:
    """What ``ZookeeperBasedLockProvider`` needs; ``base_path`` and ``url`` have no default in Hudi."""

    url: str  # one host or a comma-separated ensemble; a host without ``:port`` gets ``port``
    port: int
    base_path: str
    lock_key: str
    session_timeout_ms: int = 60_000  # Hudi's LockConfiguration.DEFAULT_ZK_SESSION_TIMEOUT_MS
    connection_timeout_ms: int = 15_000  # ... DEFAULT_ZK_CONNECTION_TIMEOUT_MS

    @property
    def connect_string(self) -> str:
        hosts = [h.strip() for h in self.url.split(",") if h.strip()]
        return ",".join(h if ":" in h else f"{h}:{self.port}" for h in hosts)

    @property
    def lock_path(self) -> str:
        return f"{self.base_path.rstrip('/')}/{self.lock_key}"


@dataclass(frozen=True)
class StorageLockConfig:
    """The lease of the storage-based lock (Hudi's ``StorageBasedLockConfig``): how long a lease is valid
    without renewal, and how often its holder renews it."""

    validity_s: float = 300.0
    renew_interval_s: float = 30.0


@dataclass(frozen=True)
class ConcurrencyConfig:
    mode: str = SINGLE_WRITER
    failed_writes_policy: str = "EAGER"
    heartbeat_interval_ms: int = 60_000
    heartbeat_misses: int = 2
    lock_provider: str = k.STORAGE_LOCK
    lock_wait_ms: int = 60_000
    lock_num_retries: int = 15
    lock_retry_wait_ms: int = 1_000
    retries_on_conflict: int = 0
    storage_lock: StorageLockConfig = StorageLockConfig()
    zookeeper: ZookeeperLockConfig | None = None

    @property
    def is_occ(self) -> bool:
        return self.mode == OCC

    @property
    def heartbeat_expiry_ms(self) -> int:
        """A heartbeat older than this is expired (``HoodieHeartbeatClient``: interval x tolerable misses)."""
        return self.heartbeat_interval_ms * self.heartbeat_misses


def _at_least(key: str, value: int, minimum: int) -> int:
    if value < minimum:
        raise HoodieConfigError(f"Option {key!r} must be >= {minimum}, got {value}")
    return value


def resolve_concurrency_config(options: Mapping[str, str], table_name: str = "") -> ConcurrencyConfig:
    get = lambda prop: k.CATALOG.resolve(options, prop)  # noqa: E731
    mode = get(k.CONCURRENCY_MODE)
    policy = get(k.FAILED_WRITES_POLICY) or ("LAZY" if mode == OCC else "EAGER")
    provider = get(k.LOCK_PROVIDER) or k.STORAGE_LOCK
    validity = _at_least(k.STORAGE_LOCK_VALIDITY_S.key, get(k.STORAGE_LOCK_VALIDITY_S), 1)
    renew = _at_least(k.STORAGE_LOCK_RENEW_S.key, get(k.STORAGE_LOCK_RENEW_S), 0)
    if renew >= validity:
        raise HoodieConfigError(f"Option {k.STORAGE_LOCK_RENEW_S.key!r} ({renew}) must be below "
                                f"{k.STORAGE_LOCK_VALIDITY_S.key!r} ({validity}): the lease would expire before renewal")
    return ConcurrencyConfig(
        mode=mode,
        failed_writes_policy=policy,
        # HoodieHeartbeatClient: "Cannot set heartbeat lower than 1 second"
        heartbeat_interval_ms=_at_least(k.HEARTBEAT_INTERVAL_MS.key, get(k.HEARTBEAT_INTERVAL_MS), 1000),
        heartbeat_misses=_at_least(k.HEARTBEAT_MISSES.key, get(k.HEARTBEAT_MISSES), 1),
        lock_provider=provider,
        lock_wait_ms=_at_least(k.LOCK_WAIT_MS.key, get(k.LOCK_WAIT_MS), 0),
        lock_num_retries=_at_least(k.LOCK_NUM_RETRIES.key, get(k.LOCK_NUM_RETRIES), 0),
        lock_retry_wait_ms=_at_least(k.LOCK_RETRY_WAIT_MS.key, get(k.LOCK_RETRY_WAIT_MS), 0),
        retries_on_conflict=_at_least(k.CONFLICT_RETRIES.key, get(k.CONFLICT_RETRIES), 0),
        storage_lock=StorageLockConfig(float(validity), float(renew)),
        zookeeper=_zookeeper(options, table_name) if provider == k.ZOOKEEPER_LOCK and mode == OCC else None,
    )


def _zookeeper(options: Mapping[str, str], table_name: str) -> ZookeeperLockConfig:
    get = lambda prop: k.CATALOG.resolve(options, prop)  # noqa: E731
    for prop in (k.ZK_URL, k.ZK_PORT, k.ZK_BASE_PATH):
        if get(prop) in (None, ""):
            raise HoodieConfigError(f"Option {prop.key!r} is required with the ZooKeeper lock provider")
    return ZookeeperLockConfig(
        url=get(k.ZK_URL), port=get(k.ZK_PORT), base_path=get(k.ZK_BASE_PATH),
        lock_key=get(k.ZK_LOCK_KEY) or table_name,  # Hudi: the table name when unset
        session_timeout_ms=_at_least(k.ZK_SESSION_TIMEOUT_MS.key, get(k.ZK_SESSION_TIMEOUT_MS), 1),
        connection_timeout_ms=_at_least(k.ZK_CONNECTION_TIMEOUT_MS.key, get(k.ZK_CONNECTION_TIMEOUT_MS), 1),
    )
