"""A table's real local storage that counts its listings, for the tests that pin how often an operation
lists the timeline, and one that logs the files it reads, for the tests that pin which files an operation reads
(every call still reaches the disk: nothing is mocked)."""

from __future__ import annotations

import posixpath
from collections import Counter

import pyarrow as pa

from hoodie_datasource.storage.local import LocalStorage
from hoodie_datasource.storage.storage import Listing
from hoodie_datasource.table.file_names import BaseFileName, LogFileName

TIMELINE = ".hoodie"  # the timeline's folder in layout 1
_LIVE: dict[int, CountingStorage] = {}


def _live(key: int) -> CountingStorage:
    return _LIVE[key]


class CountingStorage(LocalStorage):
    """Counts its listings by folder and its reads by file (a whole read, a mapped buffer or a random-access
    file: each a GET on an object store, or a few ranged ones). Unpickled in the process that made it, it is
    itself again, so what a pickled reader lists is counted."""

    def __init__(self, uri: str) -> None:
        super().__init__(uri)
        self.listed: Counter[str] = Counter()  # folder -> list_dir calls
        self.reads: Counter[str] = Counter()  # file -> reads
        _LIVE[id(self)] = self

    def __reduce__(self):
        return _live, (id(self),)

    def list_dir(self, rel: str = "") -> Listing:
        self.listed[rel] += 1
        return super().list_dir(rel)

    def read(self, rel: str) -> bytes:
        self.reads[rel] += 1
        return super().read(rel)

    def read_buffer(self, rel: str) -> pa.Buffer:
        self.reads[rel] += 1
        return super().read_buffer(rel)

    def open_input(self, rel: str, size: int | None = None) -> pa.NativeFile:
        self.reads[rel] += 1
        return super().open_input(rel, size)

    def timeline_listings(self) -> int:
        """The listings of the timeline's folder so far; then counting starts again."""
        count, self.listed[TIMELINE] = self.listed[TIMELINE], 0
        return count


class FileReadLog(LocalStorage):
    """A table's real local storage that appends the path of every file it reads to the file ``log``, in whatever
    process reads it (pickled into Spark's Python workers, it is a copy writing to the same log)."""

    def __init__(self, uri: str, log: str) -> None:
        super().__init__(uri)
        self.log = log

    def _note(self, rel: str) -> None:
        with open(self.log, "a") as out:  # one short append per read: lines of two processes never mix
            out.write(rel + "\n")

    def read(self, rel: str) -> bytes:
        self._note(rel)
        return super().read(rel)

    def read_buffer(self, rel: str) -> pa.Buffer:
        self._note(rel)
        return super().read_buffer(rel)

    def open_input(self, rel: str, size: int | None = None) -> pa.NativeFile:
        self._note(rel)
        return super().open_input(rel, size)

    def file_groups_read(self) -> set[tuple[str, str]]:
        """The (partition, file id) of every data base or log file read since the last call; then the log starts
        again."""
        try:
            with open(self.log) as log:
                paths = log.read().split()
        except FileNotFoundError:
            paths = []
        open(self.log, "w").close()
        groups = set()
        for path in paths:
            if path.startswith(".hoodie/"):  # the metadata table's files: an index's reads, not a file group's
                continue
            name = posixpath.basename(path)
            parsed = BaseFileName.parse(name) or LogFileName.parse(name)
            if parsed is not None:
                groups.add((posixpath.dirname(path), parsed.file_id))
        return groups
