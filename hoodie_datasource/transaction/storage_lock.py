"""A table lock kept on the table's own storage, needing only ``Storage.create_once`` (exclusive create on
local disk and object stores), ``list_dir``, ``read`` and ``delete``: Hudi's ``StorageBasedLockProvider``
idea (a lease under ``.hoodie``), with a protocol of our own.

The lock is a sequence of numbered *generations* ``.hoodie/.lock/lock.<n>`` (``n`` zero-padded, so names
sort as numbers). Each holds JSON ``{"owner", "state": "held" | "released", "expires_ms"}``. The state of
the lock is the highest generation: held by its owner until ``expires_ms``, unless it says released.

- acquire: list; when the highest generation ``n`` is released or expired (or there is none), create
  ``lock.<n+1>`` (held, expiring after the validity); then list again and hold the lock only when
  ``n+1`` is still the highest generation.
- renew: the holder, every renew interval, creates ``lock.<n+1>`` with a later expiry (same owner).
- release: the holder creates ``lock.<n+1>`` released.
- clean-up: every ``KEEP``-th release deletes the generations more than ``KEEP`` below it (one listing
  per ``KEEP`` releases, not one per release).

Race analysis. Generations are never rewritten and the highest is never deleted, so each number has one
creator, and every transition of the lock is the creation of the next number, which ``create_once``
grants to exactly one contender: two takers of an expired lease both try ``n+1`` and one wins; a holder
renewing or releasing after its lease expired and was taken over fails to create ``n+1`` (the taker made
it) and learns it lost the lock. The one hole ``create_once`` alone leaves is a contender that read the
state long ago and creates a number the clean-up already deleted (far below the top): the second
listing finds a higher generation and the contender backs off, leaving its file below the top, where it
means nothing. What no lease can exclude: a holder paused (GC, swap, stopped VM) for longer than the
validity, whose lease is taken over meanwhile, acts as holder until its next renewal fails. Keep the
validity (``hoodie.write.lock.storage.validity.timeout.secs``, 300 s) far above such pauses and above the
clock difference between writers' machines: ``expires_ms`` is the holder's clock, read by others' clocks.
The whole argument rests on ``create_once`` being exclusive: true on local disks and on S3, Azure and
GCS (conditional puts), not on pyarrow file systems such as HDFS, where it is check-then-move (the
``hoodie.storage.conditional.create.unsafe`` case): there, use the ZooKeeper lock.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass

from hoodie_datasource.config.table_config import METAFOLDER
from hoodie_datasource.errors import CommitConflictError
from hoodie_datasource.storage.storage import Storage, join
from hoodie_datasource.transaction.lock_provider import LockProvider

logger = logging.getLogger(__name__)

LOCK_FOLDER = join(METAFOLDER, ".lock")
PREFIX = "lock."
DIGITS = 20
KEEP = 16  # generations kept below the latest release (a contender's stale view is caught by relisting)
POLL_S = 0.2


def generation_path(n: int) -> str:
    return join(LOCK_FOLDER, f"{PREFIX}{n:0{DIGITS}d}")


@dataclass(frozen=True)
class Lease:
    generation: int
    owner: str
    state: str
    expires_ms: int

    def free(self, now_ms: int) -> bool:
        return self.state == "released" or now_ms >= self.expires_ms


def _now_ms() -> int:
    return int(time.time() * 1000)


def _generations(storage: Storage) -> list[int]:
    found = []
    for f in storage.list_dir(LOCK_FOLDER).files:
        suffix = f.name[len(PREFIX):]
        if f.name.startswith(PREFIX) and suffix.isdigit():
            found.append(int(suffix))
    return sorted(found)


class StorageLockProvider(LockProvider):
    def __init__(self, storage: Storage, validity_s: float, renew_interval_s: float):
        self.storage = storage
        self.validity_ms = int(validity_s * 1000)
        self.renew_interval_s = renew_interval_s
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._guard = threading.Lock()
        self._held: int | None = None  # our latest generation while we hold the lock
        self._last_seen: Lease | None = None
        self._stop_renewal = threading.Event()
        self._renewal: threading.Thread | None = None

    def current(self) -> Lease | None:
        """The highest generation, or None before the first lock."""
        generations = _generations(self.storage)
        if not generations:
            return None
        n = generations[-1]
        body = json.loads(self.storage.read(generation_path(n)))
        return Lease(n, body["owner"], body["state"], int(body["expires_ms"]))

    def _create(self, n: int, state: str) -> bool:
        body = {"owner": self.owner, "state": state, "expires_ms": _now_ms() + self.validity_ms}
        try:
            self.storage.create_once(generation_path(n), json.dumps(body).encode())
        except CommitConflictError:
            return False
        return True

    def try_lock(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + max(timeout_s, 0)
        while True:
            lease = self.current()
            self._last_seen = lease
            if lease is None or lease.free(_now_ms()):
                n = 1 if lease is None else lease.generation + 1
                if self._create(n, "held") and _generations(self.storage)[-1] == n:
                    with self._guard:
                        self._held = n
                    self._start_renewal()
                    logger.debug("Took %s at generation %d", self.describe(), n)
                    return True
                continue  # another contender moved the lock on: look again at once
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            time.sleep(min(POLL_S, remaining))

    def _start_renewal(self) -> None:
        self._stop_renewal = threading.Event()
        self._renewal = threading.Thread(target=self._renew_loop, args=(self._stop_renewal,),
                                         name="hoodie-storage-lock-renewal", daemon=True)
        self._renewal.start()

    def _renew_loop(self, stop: threading.Event) -> None:
        while not stop.wait(self.renew_interval_s):
            with self._guard:
                if self._held is None:
                    return
                try:
                    renewed = self._create(self._held + 1, "held")
                except Exception:  # a failed renewal is retried at the next interval, while the lease lasts
                    logger.warning("Could not renew %s", self.describe(), exc_info=True)
                    continue
                if not renewed:
                    logger.error("Lost %s: the lease expired and another writer took it over", self.describe())
                    self._held = None
                    return
                self._held += 1

    def unlock(self) -> None:
        self._stop_renewal.set()
        if self._renewal is not None and self._renewal is not threading.current_thread():
            self._renewal.join()
        with self._guard:
            held, self._held = self._held, None
        if held is None:
            return
        if not self._create(held + 1, "released"):
            logger.warning("%s had been taken over before its release (lease expired)", self.describe())
            return
        released = held + 1
        if released % KEEP == 0:
            for n in _generations(self.storage):
                if n < released - KEEP:
                    self.storage.delete(generation_path(n))

    def describe(self) -> str:
        where = f"storage lock {self.storage.uri_of(LOCK_FOLDER)}"
        seen = self._last_seen
        if seen is not None and seen.state == "held" and seen.owner != self.owner:
            return f"{where} (held by {seen.owner}, lease until {seen.expires_ms} ms)"
        return where
