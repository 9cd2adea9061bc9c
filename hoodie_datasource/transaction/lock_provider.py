"""The table lock, as Apache Hudi's ``org.apache.hudi.common.lock.LockProvider`` shapes it: ``try_lock``
waits up to a timeout and says whether it got the lock; ``unlock`` releases it; ``close`` frees what the
provider holds (a connection, a renewal thread). A provider instance belongs to one writer process and
is not shared between threads of it without its own guard."""

from __future__ import annotations

from abc import ABC, abstractmethod


class LockProvider(ABC):
    @abstractmethod
    def try_lock(self, timeout_s: float) -> bool:
        """Acquire the lock, waiting at most ``timeout_s`` seconds; False when another holder kept it.
        Raises ``LockError`` when the lock service cannot be used at all (misconfigured, unreachable)."""

    @abstractmethod
    def unlock(self) -> None:
        """Release the lock this provider holds (a no-op when it holds none)."""

    def close(self) -> None:  # noqa: B027 - most providers hold nothing beyond the lock
        """Release the lock if held and free the provider's resources."""
        self.unlock()

    def describe(self) -> str:
        """What the lock is, for messages (never a secret)."""
        return type(self).__name__
