"""Taking the table lock with bounded waits (Hudi's ``LockManager``): ``num_retries + 1`` attempts of
``try_lock(wait_time_ms)``, ``wait_time_ms_between_retry`` apart, then ``LockTimeoutError`` naming the
lock and its holder when known; never an unbounded wait. ``open_lock_provider`` turns
``hoodie.write.lock.provider`` into a provider."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

from hoodie_datasource.config import keys as k
from hoodie_datasource.config.concurrency_config import ConcurrencyConfig
from hoodie_datasource.errors import LockTimeoutError
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.transaction.in_process_lock import InProcessLockProvider
from hoodie_datasource.transaction.lock_provider import LockProvider
from hoodie_datasource.transaction.storage_lock import StorageLockProvider
from hoodie_datasource.transaction.zookeeper_lock import ZookeeperLockProvider

logger = logging.getLogger(__name__)


def open_lock_provider(config: ConcurrencyConfig, storage: Storage) -> LockProvider:
    if config.lock_provider == k.IN_PROCESS_LOCK:
        return InProcessLockProvider(storage.uri)
    if config.lock_provider == k.STORAGE_LOCK:
        return StorageLockProvider(storage, config.storage_lock.validity_s, config.storage_lock.renew_interval_s)
    return ZookeeperLockProvider(config.zookeeper)  # imports kazoo, an optional dependency, when it connects


class LockManager:
    def __init__(self, provider: LockProvider, config: ConcurrencyConfig):
        self.provider = provider
        self.config = config

    def lock(self) -> None:
        attempts = self.config.lock_num_retries + 1
        for attempt in range(attempts):
            if self.provider.try_lock(self.config.lock_wait_ms / 1000):
                return
            logger.info("Waiting for %s (attempt %d of %d)", self.provider.describe(), attempt + 1, attempts)
            if attempt + 1 < attempts:
                time.sleep(self.config.lock_retry_wait_ms / 1000)
        raise LockTimeoutError(
            f"Could not acquire the {self.provider.describe()} in {attempts} attempts of "
            f"{self.config.lock_wait_ms} ms ({k.LOCK_WAIT_MS.key}, {k.LOCK_NUM_RETRIES.key}, "
            f"{k.LOCK_RETRY_WAIT_MS.key})"
        )

    def unlock(self) -> None:
        self.provider.unlock()

    @contextmanager
    def locked(self) -> Iterator[None]:
        self.lock()
        try:
            yield
        finally:
            self.unlock()

    def close(self) -> None:
        self.provider.close()
