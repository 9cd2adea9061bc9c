"""Byte keys as numpy arrays that ``np.searchsorted`` orders exactly as the bytes order (unsigned,
lexicographic, a prefix before its extensions), so a block's cells and a batch of lookups meet in one
vectorized search instead of a comparison per cell.

Fixed-width ``S`` arrays are the fast form, but numpy pads them with NUL bytes and so cannot tell ``a`` from
``a\\x00``: they are exact only when no key ends with a NUL byte. Keys that do (no Hudi key does) are
searched as arrays of Python ``bytes`` instead, which compare exactly and more slowly."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from hoodie_datasource.hfile.binary_arrays import parts


def _ends_with_nul(offsets: np.ndarray, data: np.ndarray) -> bool:
    ends = offsets[1:][offsets[1:] > offsets[:-1]]
    return bool(ends.size) and bool((data[ends - 1] == 0).any())


def _fixed_width(offsets: np.ndarray, data: np.ndarray, width: int) -> np.ndarray:
    count = len(offsets) - 1
    lengths = np.diff(offsets)
    table = np.zeros((count, width), np.uint8)
    total = int(offsets[-1] - offsets[0])
    if total:
        rows = np.repeat(np.arange(count), lengths)
        columns = np.arange(total) - np.repeat(offsets[:-1] - offsets[0], lengths)
        table[rows, columns] = data[offsets[0]:offsets[-1]]
    return table.view(f"S{width}").reshape(count)


def searchable(*arrays: pa.Array) -> list[np.ndarray]:
    """``arrays`` (binary) as numpy arrays of one dtype, comparable with each other exactly."""
    taken = [parts(a) for a in arrays]
    if any(_ends_with_nul(offsets, data) for offsets, data in taken):
        return [np.array(a.to_pylist(), dtype=object) for a in arrays]
    width = max([1] + [int(np.diff(offsets).max()) for offsets, _ in taken if len(offsets) > 1])
    return [_fixed_width(offsets, data, width) for offsets, data in taken]
