"""Tagging records with the file group that holds their key (Hudi's bloom index, columnar).

Step 1 ``range_candidates``: pair each record with the files of its partition (every partition for
a global index) whose [min, max] key range contains its key.
Step 2 ``confirm_in_file``: per file, keep candidates its bloom filter may contain, then read the
file's key column once and keep exact matches, so a bloom false positive never turns an insert
into a phantom update (or an update into a duplicate).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.index import base_file_cache
from hoodie_datasource.index.key_ranges import FileKeyRange
from hoodie_datasource.storage.storage import FileInfo, Storage


def range_candidates(
    keys: pa.Array,
    partitions: pa.Array,
    files: Sequence[FileKeyRange],
    prune_by_ranges: bool,
    global_index: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """(record row, file position) pairs worth checking."""
    rows_out: list[np.ndarray] = []
    files_out: list[np.ndarray] = []
    by_partition: dict[str, np.ndarray] = {}
    if not global_index:
        encoded = pc.dictionary_encode(partitions)
        if isinstance(encoded, pa.ChunkedArray):
            encoded = encoded.combine_chunks()
        codes = encoded.indices.to_numpy(zero_copy_only=False)
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(len(encoded.dictionary) + 1))
        for code, name in enumerate(encoded.dictionary.to_pylist()):
            by_partition[name] = order[bounds[code]:bounds[code + 1]]
    everything = np.arange(len(keys))
    for position, file in enumerate(files):
        rows = everything if global_index else by_partition.get(file.partition)
        if rows is None or len(rows) == 0:
            continue
        if prune_by_ranges and file.min_key is not None and file.max_key is not None:
            subset = pc.take(keys, pa.array(rows)) if len(rows) != len(keys) else keys
            inside = pc.and_(pc.greater_equal(subset, file.min_key), pc.less_equal(subset, file.max_key))
            rows = rows[inside.to_numpy(zero_copy_only=False)]
        if len(rows):
            rows_out.append(rows)
            files_out.append(np.full(len(rows), position, dtype=np.int64))
    if not rows_out:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    return np.concatenate(rows_out), np.concatenate(files_out)


def bloom_check(storage: Storage, base_file: str, candidate_keys: pa.Array,
                info: FileInfo | None = None) -> np.ndarray | None:
    """A bool per candidate key: may ``base_file``'s bloom filter hold it? None when it has no filter."""
    bloom = base_file_cache.bloom_filter(storage, base_file, info=info)
    if bloom is None:
        return None
    return np.asarray(bloom.might_contain(candidate_keys), dtype=bool)


def stored_key_check(storage: Storage, base_file: str, candidate_keys: pa.Array,
                     info: FileInfo | None = None) -> np.ndarray:
    """A bool per candidate key: is it stored in ``base_file``? Reads the file's key column (once per
    process: base files are immutable)."""
    stored = base_file_cache.stored_keys(storage, base_file, info)
    return pc.is_in(candidate_keys, value_set=stored).to_numpy(zero_copy_only=False)


def confirm_in_file(storage: Storage, base_file: str, candidate_keys: pa.Array, use_bloom: bool,
                    info: FileInfo | None = None) -> np.ndarray:
    """A bool per candidate key: is it really stored in ``base_file`` (``info``: its listing entry)?"""
    maybe = np.ones(len(candidate_keys), dtype=bool)
    if use_bloom and len(candidate_keys):
        checked = bloom_check(storage, base_file, candidate_keys, info)
        if checked is not None:
            maybe = checked
    if not maybe.any():
        return maybe
    subset = pc.filter(candidate_keys, pa.array(maybe)) if not maybe.all() else candidate_keys
    result = np.zeros(len(candidate_keys), dtype=bool)
    result[np.nonzero(maybe)[0][stored_key_check(storage, base_file, subset, info)]] = True
    return result
