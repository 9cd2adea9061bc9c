"""What tagging reads from base files, remembered by the process: footers, bloom filters and record keys.

A base file never changes once written (a rewrite is a new file, with a new instant in its name),
so what was read from it stays true. Entries are keyed by the file's full URI and size, so a file
replaced in place by other content (a test, a hand-made repair) is read again. The size comes from
the listing the caller already has (a ``FileInfo``) when it passes one, so an object store is not
asked for a HEAD per file, else from ``storage.stat``. The modification time is left out of the key:
the file system view keeps only sizes, and a Hudi base file's name (file id, write token, instant)
is never reused for other content.

Merge-on-read upserts keep tagging against the same base files until compaction, and Spark reuses
its Python workers, so the keys and filters of a table's hot files are read once per worker instead
of once per write; within one copy-on-write write, the merge reuses the filter tagging decoded. A
process that has not seen a file yet (a new worker: they die after a minute idle) takes its key range
and decoded filter from the host's cache (``host_cache``), filled by the first process that decoded
the footer, before reading the footer itself. A task
reads a file's footer once for its key range and its bloom filter (one GET on an object store). A
small file (up to ``SMALL_FILE`` bytes, where the footer with its bloom filter is a third of the file)
is fetched whole instead, and its bytes kept for the key read and the copy-on-write merge of the same
task: one GET per small file for the whole write.

The memory is bounded (least recently used entries go first). The filters' budget holds those of about
200 files at Hudi's default sizing (DYNAMIC_V0 of 60,000 entries at fpp 1e-9, up to two 323 KB rows a
file): a budget smaller than a worker's share of the table's files is a cache every write misses
entirely, as tasks go through the files in the same order each time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import pyarrow as pa

from hoodie_datasource.index import host_cache
from hoodie_datasource.index.bloom_filter import (
    FOOTER_BLOOM_KEY,
    FOOTER_LEGACY_BLOOM_KEY,
    FOOTER_MAX_KEY,
    FOOTER_MIN_KEY,
    FOOTER_TYPE_KEY,
    BloomFilter,
    bloom_filter_in_footer,
)
from hoodie_datasource.storage.parquet import read_parquet, read_parquet_metadata
from hoodie_datasource.storage.storage import FileInfo, Storage
from hoodie_datasource.table.meta_columns import RECORD_KEY_COLUMN

KEYS_BUDGET = 128 << 20
BLOOM_BUDGET = 128 << 20
FOOTER_BUDGET = 64 << 20
RANGES_BUDGET = 8 << 20
SMALL_FILES_BUDGET = 256 << 20
SMALL_FILE = 2 << 20


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

    def pop(self, key: tuple) -> object | None:
        with self._lock:
            found = self._entries.pop(key, None)
            if found is None:
                return None
            self.used -= found[1]
            return found[0]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.used = 0


_KEYS = _LruCache(KEYS_BUDGET)
_BLOOMS = _LruCache(BLOOM_BUDGET)
_FOOTERS = _LruCache(FOOTER_BUDGET)
_RANGES = _LruCache(RANGES_BUDGET)
_SMALL_FILES = _LruCache(SMALL_FILES_BUDGET)
_NO_FILTER = object()
_FOOTER_KEYS = tuple(k.encode() for k in (FOOTER_MIN_KEY, FOOTER_MAX_KEY, FOOTER_BLOOM_KEY,
                                                    FOOTER_LEGACY_BLOOM_KEY, FOOTER_TYPE_KEY))


def _identity(storage: Storage, rel: str, info: FileInfo | None) -> tuple:
    if info is None:
        info = storage.stat(rel)
        if info is None:
            raise FileNotFoundError(f"Base file {storage.uri_of(rel)} does not exist")
    return storage.uri_of(rel), info.size


def _small_file(storage: Storage, rel: str, key: tuple) -> pa.Buffer | None:
    """The whole content of a small base file (None for a bigger one), fetched once."""
    if key[1] > SMALL_FILE:
        return None
    content = _SMALL_FILES.get(key)
    if content is None:
        # the bytes themselves, not ``read_buffer``'s memory map: thousands of small files kept mapped
        # would hold as many maps (and the disk space of files the cleaner deleted)
        content = pa.py_buffer(storage.read(rel))
        _SMALL_FILES.put(key, content, content.size)
    return content


def stored_keys(storage: Storage, rel: str, info: FileInfo | None = None) -> pa.Array:
    """The record keys stored in the base file ``rel`` (``info``: its listing entry, if known)."""
    key = _identity(storage, rel, info)
    keys = _KEYS.get(key)
    if keys is None:
        keys = read_parquet(storage, rel, columns=[RECORD_KEY_COLUMN], use_threads=False,
                            content=_small_file(storage, rel, key)).column(0).combine_chunks()
        _KEYS.put(key, keys, keys.nbytes)
    return keys


@dataclass(frozen=True)
class _FooterEntries:
    """What tagging reads from a base file's footer: its row count and the key/value entries of the
    key range and the bloom filter (the filter still serialized: a file whose candidates range pruning
    removed never decodes it). Converting a footer's key/value metadata to a dict copies every entry,
    the bloom filter's hundreds of KB among them, so it is done once per file."""

    num_rows: int
    kv: dict[bytes, bytes]

    @property
    def nbytes(self) -> int:
        return 100 + sum(len(k) + len(v) for k, v in self.kv.items())


def _footer(storage: Storage, rel: str, key: tuple) -> _FooterEntries:
    entries = _FOOTERS.get(key)
    if entries is None:
        metadata = read_parquet_metadata(storage, rel, key[1], _small_file(storage, rel, key))
        kv = metadata.metadata or {}
        entries = _FooterEntries(metadata.num_rows, {k: kv[k] for k in _FOOTER_KEYS if k in kv})
        _FOOTERS.put(key, entries, entries.nbytes)
    return entries


def key_range(storage: Storage, rel: str, info: FileInfo | None = None) -> tuple[str | None, str | None, int]:
    """(min record key, max record key, row count) of the base file ``rel`` from its footer (``info``:
    its listing entry, if known). Kept apart from the footer, whose bloom filter makes it big: every
    write's tasks ask for the ranges of their partitions' files, and a footer budget smaller than the
    table's footers would read every footer again each time."""
    return _key_range(storage, rel, _identity(storage, rel, info))


def _key_range(storage: Storage, rel: str, key: tuple) -> tuple[str | None, str | None, int]:
    found = _RANGES.get(key)
    if found is None and _from_host_cache(key):
        found = _RANGES.get(key)
    if found is None:
        entries = _footer(storage, rel, key)
        low, high = entries.kv.get(FOOTER_MIN_KEY.encode()), entries.kv.get(FOOTER_MAX_KEY.encode())
        found = (low.decode() if low is not None else None, high.decode() if high is not None else None,
                 entries.num_rows)
        _put_range(key, found)
    return found


def _put_range(key: tuple, found: tuple[str | None, str | None, int]) -> None:
    _RANGES.put(key, found, 100 + len(found[0] or "") + len(found[1] or ""))


def _put_bloom(key: tuple, bloom: BloomFilter | None) -> None:
    _BLOOMS.put(key, _NO_FILTER if bloom is None else bloom, 1 if bloom is None else bloom.nbytes)


def _from_host_cache(key: tuple) -> bool:
    """Fill the process's key range and filter of a base file from the host's cache (``host_cache``):
    whether it had them."""
    entry = host_cache.load(*key)
    if entry is None:
        return False
    _put_range(key, (entry.min_key, entry.max_key, entry.num_rows))
    _put_bloom(key, entry.bloom)
    return True


def has_key_range(storage: Storage, rel: str, info: FileInfo) -> bool:
    """Whether the key range of the base file ``rel`` (``info``: its listing entry) is known already: in
    this process, or in the host's cache (then taken into the process caches: a local read, which
    needs no thread to hide its latency)."""
    key = (storage.uri_of(rel), info.size)
    return _RANGES.get(key) is not None or _from_host_cache(key)


def base_file_for_rewrite(storage: Storage, rel: str, info: FileInfo | None = None,
                          skip: tuple[str, ...] = (), dictionary: tuple[str, ...] = ()) -> pa.Table:
    """The whole base file ``rel`` but the columns ``skip`` names (the rewrite replaces them), read for a
    rewrite that supersedes it: its kept bytes, if tagging fetched them, are released. The columns
    ``dictionary`` names are read as dictionary arrays (``read_parquet``)."""
    key = _identity(storage, rel, info) if info is not None else None
    content = _SMALL_FILES.pop(key) if key is not None else None
    return read_parquet(storage, rel, content=content, skip=skip, dictionary=dictionary)


def bloom_filter(storage: Storage, rel: str, max_entries: int | None = None,
                 info: FileInfo | None = None) -> BloomFilter | None:
    """The bloom filter in the footer of the base file ``rel`` (None without one), as a copy the
    caller may add keys to (``info``: its listing entry, if known)."""
    key = _identity(storage, rel, info)
    bloom = _BLOOMS.get(key)
    if bloom is None and _from_host_cache(key):
        bloom = _BLOOMS.get(key)
    if bloom is None:
        bloom = bloom_filter_in_footer(_footer(storage, rel, key).kv)
        _put_bloom(key, bloom)
        low, high, rows = _key_range(storage, rel, key)  # the file is not looked up again
        host_cache.store(*key, host_cache.FooterIndex(rows, low, high, bloom))
    if bloom is _NO_FILTER or bloom is None:
        return None
    return bloom.copy(max_entries)


def clear() -> None:
    _KEYS.clear()
    _BLOOMS.clear()
    _FOOTERS.clear()
    _RANGES.clear()
    _SMALL_FILES.clear()
