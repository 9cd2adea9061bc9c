"""Per-file index metadata read from base-file footers: min/max record key.

This is the only thing the driver reads to tag records: a few footer fields per file. Bloom
filters are read later, by the task that checks that file's candidates.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pyarrow.parquet as pq

from hoodie_datasource.index.bloom_filter import FOOTER_MAX_KEY, FOOTER_MIN_KEY
from hoodie_datasource.table.file_group import FileSlice


@dataclass(frozen=True)
class FileKeyRange:
    partition: str
    file_id: str
    base_file: str  # relative path
    base_instant: str
    size: int
    num_records: int
    min_key: str | None
    max_key: str | None
    has_logs: bool = False


def _read_range(base_path: str, file_slice: FileSlice) -> FileKeyRange:
    relative = file_slice.base_relative_path
    assert relative is not None and file_slice.base_file is not None
    metadata = pq.read_metadata(os.path.join(base_path, relative))
    kv = metadata.metadata or {}
    low = kv.get(FOOTER_MIN_KEY.encode())
    high = kv.get(FOOTER_MAX_KEY.encode())
    return FileKeyRange(
        file_slice.partition_path,
        file_slice.file_id,
        relative,
        file_slice.base_instant,
        file_slice.base_file.size,
        metadata.num_rows,
        low.decode() if low is not None else None,
        high.decode() if high is not None else None,
        bool(file_slice.log_files),
    )


def load_key_ranges(base_path: str, slices: list[FileSlice], threads: int = 8) -> list[FileKeyRange]:
    with_base = [s for s in slices if s.base_file is not None]
    if len(with_base) < 4:
        return [_read_range(base_path, s) for s in with_base]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(lambda s: _read_range(base_path, s), with_base))
