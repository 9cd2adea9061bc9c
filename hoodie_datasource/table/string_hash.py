"""Java's ``String.hashCode`` over whole Arrow string arrays: ``h = 31 * h + c`` from 0 over the UTF-16 code
units, wrapping at 32 bits. Hudi hashes record keys with it to pick a bucket (``BucketIdentifier``) and a
metadata-table file group (``HoodieTableMetadataUtil.mapRecordKeyToFileGroupIndex``). numpy throughout: no
Python loop per string."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_M31 = np.uint32(31)
_HASH_ROWS = 1 << 16


def java_string_hashes(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """``String.hashCode`` of every string as uint32 (the int's bits); null strings hash to 0."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    n = len(values)
    out = np.zeros(n, dtype=np.uint32)
    if n == 0:
        return out
    ascii_hashes = _ascii_string_hashes(values.cast(pa.large_string()))
    if ascii_hashes is not None:
        return ascii_hashes
    lengths = pc.fill_null(pc.utf8_length(values), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    width = int(lengths.max()) if n else 0
    if width == 0:
        return out
    # code points, padded with 0 (numpy drops trailing NULs; ``lengths`` still counts them)
    points = np.array(pc.fill_null(values, "").to_numpy(zero_copy_only=False), dtype=f"<U{width}")
    points = points.view(np.uint32).reshape(n, width)
    supplementary = points > 0xFFFF
    for j in range(width):
        live = j < lengths
        cp = points[:, j]
        wide = supplementary[:, j]
        high = np.where(wide, 0xD800 + ((cp - 0x10000) >> 10), cp).astype(np.uint32)
        folded = out * _M31 + high
        low = (0xDC00 + ((cp - 0x10000) & 0x3FF)).astype(np.uint32)
        folded = np.where(wide, folded * _M31 + low, folded)
        out = np.where(live, folded, out)
    return out


def _ascii_string_hashes(values: pa.LargeStringArray) -> np.ndarray | None:
    """``String.hashCode`` of strings that are all ASCII (each byte one UTF-16 code unit), from the
    bytes: sum(byte_i * 31^(length-1-i)) mod 2^32 per string, summed by ``np.add.reduceat`` (uint64
    sums wrap mod 2^64, which keeps them right mod 2^32); None when a string is not ASCII."""
    n = len(values)
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int64, count=n + 1, offset=values.offset * 8)
    first, last = int(offsets[0]), int(offsets[-1])
    data = values.buffers()[2]
    chars = np.frombuffer(data, dtype=np.uint8)[first:last] if data is not None else np.zeros(0, np.uint8)
    if chars.size and int(chars.max()) >= 0x80:
        return None
    lengths = np.diff(offsets)
    if not values.null_count and (lengths == lengths[0]).all():
        return _equal_length_hashes(chars.reshape(n, int(lengths[0])))
    out = np.zeros(n, dtype=np.uint64)
    powers = np.ones(int(lengths.max()) + 1, dtype=np.uint64)
    for i in range(1, len(powers)):
        powers[i] = (powers[i - 1] * np.uint64(31)) & np.uint64(0xFFFFFFFF)
    for lo in range(0, n, _HASH_ROWS):  # bounded temporaries: 16 bytes per character of a chunk of rows
        hi = min(n, lo + _HASH_ROWS)
        rows = np.flatnonzero(lengths[lo:hi]) + lo
        if len(rows) == 0:
            continue
        begin, end = int(offsets[lo]), int(offsets[hi])
        ends = np.repeat(offsets[rows + 1], lengths[rows])  # each character's string end
        exponents = ends - 1 - np.arange(begin, end)
        terms = chars[begin - first:end - first].astype(np.uint64) * powers[exponents]
        out[rows] = np.add.reduceat(terms, offsets[rows] - begin)
    if values.null_count:  # a null slot may still span bytes
        out[np.asarray(values.is_null())] = 0
    return (out & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def _equal_length_hashes(chars: np.ndarray) -> np.ndarray:
    """``String.hashCode`` of ASCII strings of one length (a row of ``chars`` each): ``h = 31 * h + c`` a column
    at a time over all rows, in uint32 (which wraps as Java's int does). Record keys of one length (uuids,
    zero-padded ids) hash 30x faster so than by the per-character terms."""
    out = np.zeros(len(chars), dtype=np.uint32)
    for column in range(chars.shape[1]):
        out *= _M31
        out += chars[:, column]
    return out
