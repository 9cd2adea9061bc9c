"""Per-file index metadata read from base-file footers: min/max record key.

This is the only thing the driver reads to tag records: a few footer fields per file. Bloom
filters are read later, by the task that checks that file's candidates.
"""

from __future__ import annotations

import posixpath
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from hoodie_datasource.index import base_file_cache
from hoodie_datasource.storage.storage import FileInfo, Storage
from hoodie_datasource.table.file_group import BaseFile, FileSlice, LogFile


@dataclass(frozen=True)
class FileKeyRange:
    partition: str
    file_id: str
    base_file: str | None  # relative path; None: a merge-on-read slice of log files only
    base_instant: str
    size: int
    num_records: int
    min_key: str | None
    max_key: str | None
    has_logs: bool = False
    next_log_version: int | None = None  # merge-on-read: the version a new log file of the slice takes
    logs: tuple[LogFile, ...] = ()  # merge-on-read: the slice's log files, in log order

    @property
    def log_files(self) -> tuple[str, ...]:
        """The names of the slice's log files."""
        return tuple(log.name for log in self.logs)

    @property
    def file_slice(self) -> FileSlice:
        """The slice this range was read from (its base file's size, not its name, is what a range keeps)."""
        base = (None if self.base_file is None
                else BaseFile(posixpath.basename(self.base_file), self.file_id, self.base_instant, self.size))
        return FileSlice(self.partition, self.file_id, self.base_instant, base, self.logs)


def _read_range(storage: Storage, file_slice: FileSlice) -> FileKeyRange:
    relative = file_slice.base_relative_path
    assert relative is not None and file_slice.base_file is not None
    # through the cache: the task that reads the range reads the bloom filter from the same footer
    low, high, rows = base_file_cache.key_range(storage, relative, FileInfo(relative, file_slice.base_file.size))
    return replace(unranged(file_slice), num_records=rows, min_key=low, max_key=high)


def unranged(file_slice: FileSlice) -> FileKeyRange:
    """A slice as a ``FileKeyRange`` without reading its footer: no key range, no record count (what a bucket
    index needs: the file ids alone place records). A slice of log files only has no base file, size 0."""
    size = file_slice.base_file.size if file_slice.base_file is not None else 0
    return FileKeyRange(file_slice.partition_path, file_slice.file_id, file_slice.base_relative_path,
                        file_slice.base_instant, size, 0, None, None, bool(file_slice.log_files),
                        logs=file_slice.log_files)


def load_key_ranges(storage: Storage, slices: list[FileSlice], threads: int = 8) -> list[FileKeyRange]:
    """The key range of every slice with a base file; footers not read before are read in parallel (on
    an object store each costs one GET, so threads hide the latency)."""
    with_base = [s for s in slices if s.base_file is not None]
    unread = sum(not base_file_cache.has_key_range(storage, s.base_relative_path,
                                                   FileInfo(s.base_relative_path, s.base_file.size))
                 for s in with_base)
    if unread < 4:
        return [_read_range(storage, s) for s in with_base]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(lambda s: _read_range(storage, s), with_base))
