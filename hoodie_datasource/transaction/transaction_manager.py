"""What one writer holds for coordinating with others (Hudi's ``TransactionManager`` plus the writer's
``HoodieHeartbeatClient``): the table lock, taken only under optimistic concurrency control, and the
heartbeat of its pending instant, in both modes.

A write session travels to Spark tasks by pickling; threads and locks do not. The copy a task gets is
detached (no heartbeat, no lock): only the driver's session starts, commits or aborts the instant."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from hoodie_datasource import fault_points
from hoodie_datasource.config.concurrency_config import ConcurrencyConfig
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.timeline.heartbeat import Heartbeat
from hoodie_datasource.transaction.lock_manager import LockManager, open_lock_provider

logger = logging.getLogger(__name__)


class TransactionManager:
    def __init__(self, storage: Storage, config: ConcurrencyConfig):
        self.storage = storage
        self.config = config
        self._lock: LockManager | None = None
        self._heartbeat: Heartbeat | None = None

    def __reduce__(self):  # a detached copy for Spark tasks
        return TransactionManager, (self.storage, self.config)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the table lock for the block under optimistic concurrency control; a no-op otherwise."""
        if not self.config.is_occ:
            yield
            return
        if self._lock is None:
            self._lock = LockManager(open_lock_provider(self.config, self.storage), self.config)
        with self._lock.locked():
            fault_points.reach(fault_points.WHILE_HOLDING_LOCK, storage=self.storage)
            yield

    def start_heartbeat(self, instant_time: str) -> None:
        self._heartbeat = Heartbeat(self.storage, instant_time, self.config.heartbeat_interval_ms).start()

    def stop_heartbeat(self, delete: bool = True) -> None:
        if self._heartbeat is not None:
            self._heartbeat.stop(delete)
            self._heartbeat = None

    def close(self) -> None:
        """Free the lock provider (its connection, its renewal thread). Best effort: it runs after the
        commit or the rollback, whose outcome a failing release must not change (a lock left held expires
        with its lease or session)."""
        if self._lock is not None:
            lock, self._lock = self._lock, None
            try:
                lock.close()
            except Exception:
                logger.exception("Could not release the table lock cleanly")
