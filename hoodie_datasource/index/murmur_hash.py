"""Hadoop's MurmurHash (version 2, 32-bit), vectorized over many keys with numpy.

Hudi's bloom filters hash keys with ``org.apache.hudi.common.util.hash.MurmurHash``, a port of
Hadoop's MurmurHash2 (not MurmurHash3, which is what the ``mmh3`` package implements). Keys are
grouped by byte length so each group is a matrix; the seed is a vector because bloom filter
hashing chains rounds (the seed of round i is the hash of round i-1).

Java reads the 1-3 tail bytes as *signed* bytes and sign-extends them before shifting; that is
reproduced here (it matters for UTF-8 bytes >= 0x80).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

M = np.uint32(0x5BD1E995)


def key_bytes(keys: pa.Array | pa.ChunkedArray | list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(data, starts, lengths) of UTF-8 keys, without a Python loop per key."""
    if isinstance(keys, list):
        keys = pa.array(keys, pa.string())
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    if pa.types.is_large_string(keys.type) or pa.types.is_string_view(keys.type):
        keys = keys.cast(pa.string())
    keys = keys.fill_null("")
    offsets = np.frombuffer(keys.buffers()[1], dtype=np.int32)[keys.offset:keys.offset + len(keys) + 1]
    data_buffer = keys.buffers()[2]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    starts = offsets[:-1].astype(np.int64)
    return data, starts, (offsets[1:] - offsets[:-1]).astype(np.int64)


def length_groups(lengths: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """(length, row indices) for each distinct key length."""
    order = np.argsort(lengths, kind="stable")
    sorted_lengths = lengths[order]
    cuts = np.flatnonzero(np.diff(sorted_lengths)) + 1
    for rows in np.split(order, cuts):
        if len(rows):
            yield int(lengths[rows[0]]), rows


class KeyMatrix:
    """Keys of one byte length, pre-split into little-endian 32-bit words and a signed tail. A word's
    mixing (``k *= m; k ^= k >>> 24; k *= m``) does not depend on the seed, so it is done once here:
    chained hashing of the same keys (bloom filter rounds) pays two operations per word a round."""

    def __init__(self, data: np.ndarray, starts: np.ndarray, length: int):
        self.length = length
        n_words = length // 4
        tail_len = length - n_words * 4
        first = int(starts[0]) if len(starts) else 0
        if length and np.array_equal(starts, first + length * np.arange(len(starts))):
            block = data[first:first + length * len(starts)].reshape(len(starts), length)  # keys side by side
        elif length:
            block = data[starts[:, None] + np.arange(length)[None, :]]
        else:
            block = np.zeros((len(starts), 0), np.uint8)
        # word c of every key, contiguous: (n_words, n) little-endian uint32, mixed
        # (a copy: the block may be the keys' own buffer, which the mixing below must not change)
        words = np.array(np.ascontiguousarray(block[:, : n_words * 4]).view("<u4").reshape(len(starts), n_words).T,
                         order="C")
        with np.errstate(over="ignore"):
            words *= M
            words ^= words >> np.uint32(24)
            words *= M
        self.mixed = words
        # tail bytes, sign-extended as Java's (int) byte, then shifted: h ^= b[len-3] << 16 ...
        tail = block[:, n_words * 4:].astype(np.int8).astype(np.int32).astype(np.uint32)
        self.tail = np.zeros(len(starts), np.uint32)
        for position in range(tail_len):
            shift = 8 * (tail_len - 1 - position)
            self.tail ^= tail[:, position] << np.uint32(shift)
        self.has_tail = tail_len > 0

    def __len__(self) -> int:
        return len(self.tail)

    def take(self, rows: np.ndarray) -> KeyMatrix:
        """The keys ``rows`` of this matrix."""
        taken = object.__new__(KeyMatrix)
        taken.length, taken.has_tail = self.length, self.has_tail
        taken.mixed, taken.tail = self.mixed[:, rows], self.tail[rows]
        return taken

    def hash(self, seeds: np.ndarray) -> np.ndarray:
        """MurmurHash2 of every key with its own seed; uint32 results."""
        with np.errstate(over="ignore"):
            h = seeds.astype(np.uint32) ^ np.uint32(self.length)
            for k in self.mixed:
                h *= M
                h ^= k
            if self.has_tail:
                h ^= self.tail
                h *= M
            h ^= h >> np.uint32(13)
            h *= M
            h ^= h >> np.uint32(15)
        return h


def murmur2(keys: pa.Array | pa.ChunkedArray | list[str], seed: int = 0) -> np.ndarray:
    """MurmurHash2 of each key (UTF-8 bytes) as Java int32 values."""
    data, starts, lengths = key_bytes(keys)
    out = np.zeros(len(lengths), np.uint32)
    for length, rows in length_groups(lengths):
        out[rows] = KeyMatrix(data, starts[rows], length).hash(np.full(len(rows), seed & 0xFFFFFFFF, np.uint32))
    return out.view(np.int32)


def hash_strings(keys: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A stable 32-bit hash per key (for deterministic bucketing); uint32."""
    return murmur2(keys).view(np.uint32)
