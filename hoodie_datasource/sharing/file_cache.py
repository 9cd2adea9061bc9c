"""The server's cache of files it makes for a table: merge-on-read file slices merged into plain parquet, and
change files of the change feed. It lives on the table's own store, under ``.hoodie/.aux/sharing/`` (Hudi's
auxiliary folder, which no reader or listing of the table's data takes for data), so its URLs are the store's own
(pre-signed on S3, Azure, GCS) and every server sharing the table, and every restart, finds what was made.

A file is made once per key: the key names everything its content depends on (the file group, its files and the
latest write that touched it, for a slice), and a process makes each key under a lock of its own, so concurrent
queries wait for one merge; servers racing for the same key write the same bytes (a store's put is atomic).

Bounded and cleaned: after each file made, the cache drops files superseded (a slice of a file group whose
latest slice has another key) that no response handed out for ``grace_ms`` (the URL lifetime: a recipient still
holding a URL can read it), then, while above ``max_bytes``, the least recently served, again only past the grace.
"""

from __future__ import annotations

import io
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie_datasource.storage.storage import Storage, join

logger = logging.getLogger(__name__)

CACHE_DIR = ".hoodie/.aux/sharing"
_FREE = threading.Lock()


@dataclass
class _Entry:
    rel: str
    size: int
    group: str | None  # the file group a slice belongs to (None: a change file; "": a file earlier runs left)
    served_ms: int


class FileCache:
    """The cache of one table."""

    def __init__(self, storage: Storage, max_bytes: int, grace_ms: int) -> None:
        self.storage = storage
        self.max_bytes = max_bytes
        self.grace_ms = grace_ms
        self._entries: dict[str, _Entry] = {}
        self._latest_key: dict[str, str] = {}  # file group -> the key of its latest slice
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()
        self._loaded = False

    def _load(self) -> None:
        """What earlier runs (or other servers) left: counted against the bound, superseded until served."""
        if self._loaded:
            return
        self._loaded = True
        for info in self.storage.list_tree(CACHE_DIR):
            key = info.path.rpartition("/")[2].removesuffix(".parquet")
            self._entries.setdefault(key, _Entry(info.path, info.size, "", info.modified_ns // 1_000_000))

    def get(self, kind: str, key: str, make: Callable[[], pa.Table], group: str | None = None,
            latest: bool = False) -> tuple[str, int]:
        """The path and size of the file ``key`` (made by ``make()`` the first time), marked served now. ``group``
        and ``latest``: the file group of a slice, and whether this key is that group's latest slice."""
        with self._lock:
            self._load()
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            with self._lock:
                entry = self._entries.get(key)
            made = False
            if entry is None:
                rel = join(CACHE_DIR, kind, f"{key}.parquet")
                info = self.storage.stat(rel)
                if info is None:
                    started = time.monotonic()
                    sink = io.BytesIO()
                    pq.write_table(make(), sink)
                    self.storage.write(rel, sink.getvalue())
                    info = self.storage.stat(rel)
                    made = True
                    logger.info("sharing cache: made %s (%d bytes) in %.0f ms", rel, info.size,
                                (time.monotonic() - started) * 1000)
                entry = _Entry(rel, info.size, group, 0)
            with self._lock:
                entry.group = group
                entry.served_ms = _now_ms()
                self._entries[key] = entry
                if group is not None and latest:
                    self._latest_key[group] = key
        if made:
            self._evict()
        return entry.rel, entry.size

    def _evict(self) -> None:
        now = _now_ms()
        with self._lock:
            idle = sorted((e.served_ms, key) for key, e in self._entries.items()
                          if now - e.served_ms > self.grace_ms and not self._locks.get(key, _FREE).locked())
            superseded = [key for _, key in idle if self._superseded(key)]
            gone = set(superseded)
            total = sum(e.size for k, e in self._entries.items() if k not in gone)
            for _, key in idle:
                if total <= self.max_bytes:
                    break
                if key not in gone:
                    gone.add(key)
                    total -= self._entries[key].size
            dropped = [self._entries.pop(key) for key in gone]
        for entry in dropped:
            self.storage.delete(entry.rel)
        if dropped:
            logger.info("sharing cache of %s: dropped %d files (%d bytes)", self.storage.uri, len(dropped),
                        sum(e.size for e in dropped))

    def _superseded(self, key: str) -> bool:
        """A slice whose file group has a newer latest slice, or a file earlier runs left that is not served."""
        group = self._entries[key].group
        return group == "" or (group is not None and self._latest_key.get(group, key) != key)

    @property
    def total_bytes(self) -> int:
        with self._lock:
            return sum(e.size for e in self._entries.values())


def _now_ms() -> int:
    return int(time.time() * 1000)
