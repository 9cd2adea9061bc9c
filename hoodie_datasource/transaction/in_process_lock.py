"""Hudi's ``InProcessLockProvider``: one lock per table URI shared by every writer thread of this Python
process (several writes from one driver). It does not guard against writers in other processes."""

from __future__ import annotations

import threading

from hoodie_datasource.transaction.lock_provider import LockProvider

_LOCKS: dict[str, threading.Lock] = {}
_REGISTRY_GUARD = threading.Lock()


def _table_lock(uri: str) -> threading.Lock:
    with _REGISTRY_GUARD:
        return _LOCKS.setdefault(uri.rstrip("/"), threading.Lock())


class InProcessLockProvider(LockProvider):
    def __init__(self, table_uri: str):
        self.table_uri = table_uri
        self._lock = _table_lock(table_uri)
        self._held = False

    def try_lock(self, timeout_s: float) -> bool:
        self._held = self._lock.acquire(timeout=max(timeout_s, 0))
        return self._held

    def unlock(self) -> None:
        if self._held:
            self._held = False
            self._lock.release()

    def describe(self) -> str:
        return f"in-process lock of {self.table_uri}"
