"""Heartbeats, as Apache Hudi lays them out: ``.hoodie/.heartbeat/<instant time>``, rewritten by a live
writer (or compactor) every ``hoodie.client.heartbeat.interval_in_ms`` (``Heartbeat`` runs the beat, as
Hudi's ``HoodieHeartbeatClient``: a daemon thread; its first beat is written before ``start`` returns, so
an instant created after it always has a fresh heartbeat; ``stop`` ends it and deletes the file). Whether
a pending instant's writer is alive is read from the file's last-modified time.

Hudi's rule (``HoodieHeartbeatClient.isHeartbeatExpired``): expired when ``now - last beat`` exceeds
``interval x tolerable misses``; a missing file counts as a beat at time 0, so an instant without a
heartbeat (its writer died before its first beat, or wrote before heartbeats existed) is expired.
The age is read against this machine's clock: the object store's ``LastModified`` (one-second
precision on S3) must agree with it to well within the expiry."""

from __future__ import annotations

import logging
import threading
import time

from hoodie_datasource.config.table_config import METAFOLDER
from hoodie_datasource.storage.storage import Storage, join

logger = logging.getLogger(__name__)
HEARTBEAT_FOLDER = join(METAFOLDER, ".heartbeat")


def heartbeat_path(instant_time: str) -> str:
    return join(HEARTBEAT_FOLDER, instant_time)


def write_heartbeat(storage: Storage, instant_time: str) -> None:
    """One beat: (re)write the file; its content (the beat's epoch milliseconds) is informational."""
    storage.write(heartbeat_path(instant_time), str(int(time.time() * 1000)).encode())


def delete_heartbeat(storage: Storage, instant_time: str) -> bool:
    return storage.delete(heartbeat_path(instant_time))


def last_heartbeat_ms(storage: Storage, instant_time: str) -> int:
    """Epoch milliseconds of the instant's last beat; 0 without a heartbeat file (Hudi's ``getLastHeartbeatTime``)."""
    info = storage.stat(heartbeat_path(instant_time))
    return 0 if info is None else info.modified_ns // 1_000_000


def is_heartbeat_expired(storage: Storage, instant_time: str, expiry_ms: int, now_ms: int | None = None) -> bool:
    """Whether the writer of ``instant_time`` is taken for dead: its last beat is older than ``expiry_ms``
    (``ConcurrencyConfig.heartbeat_expiry_ms``: interval x tolerable misses)."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    return now - last_heartbeat_ms(storage, instant_time) > expiry_ms


class Heartbeat:
    def __init__(self, storage: Storage, instant_time: str, interval_ms: int):
        self.storage = storage
        self.instant_time = instant_time
        self.interval_s = interval_ms / 1000
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"hoodie-heartbeat-{instant_time}", daemon=True)

    def start(self) -> Heartbeat:
        write_heartbeat(self.storage, self.instant_time)
        self._thread.start()
        return self

    def _beat(self) -> None:
        while not self._stopped.wait(self.interval_s):
            try:
                write_heartbeat(self.storage, self.instant_time)
            except Exception:  # a missed beat; the next one may succeed, else others take the writer for dead
                logger.warning("Heartbeat of %s failed", self.instant_time, exc_info=True)

    def stop(self, delete: bool = True) -> None:
        """End the beat; ``delete=False`` leaves the file (another writer's, when the instant turned out to be
        theirs). Idempotent."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join()
        if delete:
            try:
                delete_heartbeat(self.storage, self.instant_time)
            except Exception:  # an expired heartbeat of a finished instant harms nobody
                logger.warning("Could not delete the heartbeat of %s", self.instant_time, exc_info=True)
