"""The server's cache of files it makes: each key made once however many ask at once, superseded slices dropped once
no URL handed out for them can still be used, the bound kept by dropping the least recently served past that grace."""

from __future__ import annotations

import threading
import time

import pyarrow as pa

from hoodie_datasource.sharing.file_cache import CACHE_DIR, FileCache
from hoodie_datasource.storage.registry import open_storage


def _rows(n: int) -> pa.Table:
    return pa.table({"x": list(range(n))})


def _cached(storage) -> set[str]:
    return {f.path.rpartition("/")[2].removesuffix(".parquet") for f in storage.list_tree(CACHE_DIR)}


def test_a_key_is_made_once_while_many_ask(tmp_path):
    cache = FileCache(open_storage(str(tmp_path)), max_bytes=1 << 30, grace_ms=60_000)
    made = []

    def make():
        made.append(1)
        time.sleep(0.2)
        return _rows(10)

    answers = []
    threads = [threading.Thread(target=lambda: answers.append(cache.get("slices", "k1", make, "g", True)))
               for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made) == 1 and len(set(answers)) == 1
    # another server (or a restart) on the same store finds it: nothing is made again
    again = FileCache(open_storage(str(tmp_path)), max_bytes=1 << 30, grace_ms=60_000)
    assert again.get("slices", "k1", lambda: (_ for _ in ()).throw(AssertionError("made again")), "g", True) == answers[0]


def test_superseded_slices_go_after_the_grace_and_the_bound_holds(tmp_path):
    storage = open_storage(str(tmp_path))
    cache = FileCache(storage, max_bytes=1 << 30, grace_ms=300)
    cache.get("slices", "old", lambda: _rows(100), "g", True)
    cache.get("slices", "new", lambda: _rows(100), "g", True)  # g's latest slice is now "new"
    assert _cached(storage) == {"old", "new"}  # "old" was served a moment ago: a recipient may hold its URL
    time.sleep(0.4)
    cache.get("slices", "other", lambda: _rows(100), "h", True)  # any file made runs the clean-up
    assert _cached(storage) == {"new", "other"}



def test_the_bound_drops_the_least_recently_served_past_the_grace(tmp_path):
    storage = open_storage(str(tmp_path))
    cache = FileCache(storage, max_bytes=1 << 30, grace_ms=300)
    for key in ("a", "b"):
        cache.get("slices", key, lambda: _rows(100), f"group-{key}", True)
    cache.max_bytes = cache.total_bytes * 5 // 4  # room for two files and a half
    time.sleep(0.4)
    cache.get("slices", "b", lambda: _rows(100), "group-b", True)  # served again: b is recent, a is idle
    cache.get("slices", "c", lambda: _rows(100), "group-c", True)  # made: over the bound, a goes
    assert _cached(storage) == {"b", "c"} and cache.total_bytes <= cache.max_bytes
