"""Fresh copies of a prepared table, and the bytes a run wrote into one.

Every measured write starts from a copy of the table restored at the same path (pyiceberg's
metadata holds absolute paths), made with plain file copies: new modification times. Hoodie's caches
of what tagging reads from base files (``index.base_file_cache`` per process, ``index.host_cache`` per
host) key a file by its path and size, not its modification time (a Hudi base file's name is never
reused), so a restored copy finds them filled: a run after the first tags with the decoded bloom
filters of the run before (at least the host's, when Spark replaced its Python workers), and only the
first run of a table on a host reads and decodes the footers.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from benchmarks.timing import Case


def restore(pristine: Path, target: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(pristine, target, copy_function=shutil.copyfile)


def listing(root: Path) -> dict[str, tuple[int, int]]:
    """(size, modification time) of every file under ``root`` by relative path."""
    found = {}
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            stat = os.stat(path)
            found[os.path.relpath(path, root)] = (stat.st_size, stat.st_mtime_ns)
    return found


def bytes_written(before: dict[str, tuple[int, int]], root: Path) -> int:
    """Bytes of the files under ``root`` that are new or changed since ``before`` was listed."""
    return sum(size for path, (size, mtime) in listing(root).items() if before.get(path) != (size, mtime))


def tree_bytes(root: Path) -> int:
    return sum(size for size, _ in listing(root).values())


def restored_write(key: str, label: str, run: Callable[[], object], pristine: Path, target: Path,
                   spark: bool = True) -> Case:
    """A write case whose table is restored from ``pristine`` before each run; it reports the bytes the run wrote."""
    before: dict = {}

    def prepare() -> None:
        restore(pristine, target)
        before.clear()
        before.update(listing(target))

    return Case(key, label, run=run, prepare=prepare, facts=lambda: {"bytes": bytes_written(before, target)},
                spark=spark)
