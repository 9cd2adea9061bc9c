"""Byte keys as numpy arrays that ``np.searchsorted`` orders exactly as the bytes order (unsigned,
lexicographic, a prefix before its extensions), so a block's cells and a batch of lookups meet in one
vectorized search instead of a comparison per cell.

Fixed-width ``S`` arrays are the fast form, but numpy pads them with NUL bytes and so cannot tell ``a`` from
``a\\x00``: they are exact only when no key ends with a NUL byte (then two keys compare as their padded forms
do, whatever their widths). Keys that do (no Hudi key does) are searched as arrays of Python ``bytes``
instead, which compare exactly and more slowly."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from hoodie_datasource.hfile.binary_arrays import parts


def fixed_width(values: pa.Array) -> np.ndarray | None:
    """``values`` as an ``S`` array, or None when one of them ends with a NUL byte."""
    offsets, data = parts(values)
    lengths = np.diff(offsets)
    ends = offsets[1:][lengths > 0]
    if ends.size and (data[ends - 1] == 0).any():
        return None
    count, width = len(lengths), max(1, int(lengths.max()) if len(lengths) else 1)
    if count and (lengths == width).all():
        table = data[offsets[0]:offsets[-1]].reshape(count, width)
    else:
        table = np.zeros((count, width), np.uint8)
        for column in range(width):  # a pass per byte position: widths are short, counts long
            rows = np.flatnonzero(lengths > column)
            table[rows, column] = data[offsets[rows] + column]
    return np.ascontiguousarray(table).view(f"S{width}").reshape(count)


def exact_objects(values: pa.Array) -> np.ndarray:
    return np.array(values.to_pylist(), dtype=object)


def searchable(*arrays: pa.Array) -> list[np.ndarray]:
    """``arrays`` (binary) as numpy arrays comparable with each other exactly: all fixed-width, or all objects."""
    fixed = [fixed_width(a) for a in arrays]
    if any(f is None for f in fixed):
        return [exact_objects(a) for a in arrays]
    return fixed
