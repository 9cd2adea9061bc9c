"""A host-local scratch directory that every Python process of the host shares, for caches of what is
costly to decode (``index.host_cache``: bloom filters; ``read.log_changes_cache``: merge-on-read decisions).

Spark gives each task a Python worker that may be new (workers die after a minute idle) and may run on
any core, so what one worker decoded is found by the next one only on local disk. A cache's directory is
``tempfile.gettempdir()/<name>`` (so ``TMPDIR`` moves it), never a table path, so plain file calls are
right here. It is private to the user (created 0700; one owned by someone else or open to others is not
used). An entry is written to a temporary name and renamed into place, so a reader sees a whole entry or
none. A directory holds at most its budget in bytes: after a new entry the least recently used ones (by
modification time, which ``touch`` refreshes when an entry is loaded) are removed until it is back under
90% of that.
"""

from __future__ import annotations

import functools
import logging
import mmap
import os
import random
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

logger = logging.getLogger(__name__)

SUFFIX = ".entry"


@functools.cache
def directory(name: str) -> Path | None:
    """The scratch directory ``name``, made if missing; None when it cannot be used (not private to this user)."""
    path = Path(tempfile.gettempdir()) / name
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        info = path.lstat()
    except OSError as exc:
        logger.info("No host cache %s: %s", path, exc)
        return None
    owner = os.getuid() if hasattr(os, "getuid") else info.st_uid  # no owner to check on Windows
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != owner or info.st_mode & 0o077:
        logger.info("No host cache: %s is not a directory private to this user", path)
        return None
    return path


def entry_path(name: str, digest: str) -> Path | None:
    """Where the entry ``digest`` (a hash of what it caches) of scratch directory ``name`` lives."""
    found = directory(name)
    return None if found is None else found / (digest + SUFFIX)


def read(path: Path) -> mmap.mmap:
    """The entry at ``path``, mapped read-only (the page cache holds one copy for every process; the map
    outlives its file descriptor, and a reader holding a view keeps it)."""
    with open(path, "rb") as f:
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def touch(path: Path) -> None:
    """``path`` was used: eviction removes it last."""
    os.utime(path)


def write(name: str, digest: str, chunks: Iterable[bytes | memoryview], budget: int, evict_one_in: int = 1) -> None:
    """Write the entry ``digest`` of scratch directory ``name`` from ``chunks``, in place at once, then keep
    the directory within ``budget`` bytes (best effort: a failure only logs). Keeping it lists the whole
    directory: a cache of many small entries does it after one write in ``evict_one_in`` (at random, as
    every process writes), and may go over its budget by that many entries in between."""
    path = entry_path(name, digest)
    if path is None:
        return
    try:
        try:
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        except FileNotFoundError:  # the directory was removed since (a scratch cleaner): made again
            directory.cache_clear()
            if entry_path(name, digest) != path:
                return
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                for chunk in chunks:
                    f.write(chunk)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        if random.randrange(evict_one_in) == 0:
            _evict(path.parent, budget)
    except OSError as exc:
        logger.warning("Cannot write host cache entry %s: %s", path, exc)


def _evict(found: Path, budget: int) -> None:
    entries = []
    with os.scandir(found) as listing:
        for item in listing:
            if item.name.endswith(SUFFIX):
                try:
                    info = item.stat()
                except FileNotFoundError:
                    continue
                entries.append((info.st_mtime_ns, info.st_size, item.path))
    used = sum(size for _, size, _ in entries)
    if used <= budget:
        return
    for _, size, path in sorted(entries):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass  # another worker evicted it
        used -= size
        if used <= budget * 0.9:
            break
