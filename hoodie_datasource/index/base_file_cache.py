"""What tagging reads from base files, remembered by the process: bloom filters and record keys.

A base file never changes once written (a rewrite is a new file, with a new instant in its name),
so what was read from it stays true. Entries are keyed by the file's full URI and size, so a file
replaced in place by other content (a test, a hand-made repair) is read again. The size comes from
the listing the caller already has (a ``FileInfo``) when it passes one, so an object store is not
asked for a HEAD per file, else from ``storage.stat``. The modification time is left out of the key:
the file system view keeps only sizes, and a Hudi base file's name (file id, write token, instant)
is never reused for other content.

Merge-on-read upserts keep tagging against the same base files until compaction, and Spark reuses
its Python workers, so the keys and filters of a table's hot files are read once per worker instead
of once per write; within one copy-on-write write, the merge reuses the filter tagging decoded.

The memory is bounded (least recently used entries go first).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import pyarrow as pa

from hoodie_datasource.index.bloom_filter import BloomFilter, read_bloom_filter
from hoodie_datasource.storage.parquet import read_parquet
from hoodie_datasource.storage.storage import FileInfo, Storage
from hoodie_datasource.table.meta_columns import RECORD_KEY_COLUMN

KEYS_BUDGET = 128 << 20
BLOOM_BUDGET = 32 << 20


class _LruCache:
    def __init__(self, budget: int):
        self.budget = budget
        self.used = 0
        self._entries: OrderedDict[tuple, tuple[object, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> object | None:
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return None
            self._entries.move_to_end(key)
            return found[0]

    def put(self, key: tuple, value: object, size: int) -> None:
        if size > self.budget:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.used -= old[1]
            self._entries[key] = (value, size)
            self.used += size
            while self.used > self.budget:
                _, (_, dropped) = self._entries.popitem(last=False)
                self.used -= dropped

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.used = 0


_KEYS = _LruCache(KEYS_BUDGET)
_BLOOMS = _LruCache(BLOOM_BUDGET)
_NO_FILTER = object()


def _identity(storage: Storage, rel: str, info: FileInfo | None) -> tuple:
    if info is None:
        info = storage.stat(rel)
        if info is None:
            raise FileNotFoundError(f"Base file {storage.uri_of(rel)} does not exist")
    return storage.uri_of(rel), info.size


def stored_keys(storage: Storage, rel: str, info: FileInfo | None = None) -> pa.Array:
    """The record keys stored in the base file ``rel`` (``info``: its listing entry, if known)."""
    key = _identity(storage, rel, info)
    keys = _KEYS.get(key)
    if keys is None:
        keys = read_parquet(storage, rel, columns=[RECORD_KEY_COLUMN], use_threads=False).column(0).combine_chunks()
        _KEYS.put(key, keys, keys.nbytes)
    return keys


def bloom_filter(storage: Storage, rel: str, max_entries: int | None = None,
                 info: FileInfo | None = None) -> BloomFilter | None:
    """The bloom filter in the footer of the base file ``rel`` (None without one), as a copy the
    caller may add keys to (``info``: its listing entry, if known)."""
    key = _identity(storage, rel, info)
    bloom = _BLOOMS.get(key)
    if bloom is None:
        bloom = read_bloom_filter(storage, rel)
        _BLOOMS.put(key, _NO_FILTER if bloom is None else bloom, 1 if bloom is None else bloom.nbytes)
    if bloom is _NO_FILTER or bloom is None:
        return None
    return bloom.copy(max_entries)


def clear() -> None:
    _KEYS.clear()
    _BLOOMS.clear()
