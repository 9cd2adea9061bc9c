"""A writer's heartbeat (Hudi's ``HoodieHeartbeatClient``): while an instant is pending, a daemon thread
rewrites ``.hoodie/.heartbeat/<instant>`` every interval, so other writers and the cleaner can tell a
live writer's pending instant from a dead one's (``timeline.heartbeat.is_heartbeat_expired``).

The first beat is written before ``start`` returns, as Hudi does, so a requested instant created after
it always has a fresh heartbeat. ``stop`` ends the thread and deletes the file, at commit and abort."""

from __future__ import annotations

import logging
import threading

from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.timeline.heartbeat import delete_heartbeat, write_heartbeat

logger = logging.getLogger(__name__)


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
