"""Block indexes: where each data block (or meta block) is and the first key it holds.

An index entry is ``offset`` (int64), ``onDiskSize`` (int32, header and checksums included) and a key. In a
root index block (``IDXROOT2``: the root of the data index, and the whole meta index) the key has a Hadoop
``WritableUtils`` variable-length size before it; a data index key is a cell key (``key_value``), a meta
index key the meta block's name. A large HBase file has more levels (``IDXINTE2``, then ``IDXLEAF2``
pointing at data blocks): such a block holds its entry count, a table of entry offsets, then the entries,
whose key sizes follow from that table (HBase's ``HFileBlockIndex.BlockIndexChunk``). Hudi writes one level
only; so does this library."""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from hoodie_datasource.errors import CorruptFileError
from hoodie_datasource.hfile.key_value import row_of

_ENTRY = struct.Struct(">qi")


def encode_vlong(value: int) -> bytes:
    """Hadoop's ``WritableUtils.writeVLong``: one byte for -112..127, else a length byte and big-endian bytes."""
    if -112 <= value <= 127:
        return struct.pack(">b", value)
    length, magnitude = (-120, ~value) if value < 0 else (-112, value)
    size = (magnitude.bit_length() + 7) // 8
    return struct.pack(">b", length - size) + magnitude.to_bytes(size, "big")


def decode_vlong(data: bytes | memoryview, pos: int, where: str) -> tuple[int, int]:
    """The value of a ``writeVLong`` at ``pos`` and the position after it."""
    if pos >= len(data):
        raise CorruptFileError(f"{where}: an index entry runs past its block")
    (first,) = struct.unpack_from(">b", data, pos)
    if first >= -112:
        return first, pos + 1
    size = (-119 - first) if first < -120 else (-111 - first)
    if pos + size > len(data):
        raise CorruptFileError(f"{where}: an index entry runs past its block")
    value = int.from_bytes(data[pos + 1:pos + size], "big")
    return (~value if first < -120 else value), pos + size


@dataclass(frozen=True)
class IndexEntries:
    """Entries of one or more index blocks, in file order."""

    offsets: list[int]
    sizes: list[int]
    keys: list[bytes]


def parse_root_index(data: bytes, count: int, where: str) -> IndexEntries:
    """The first ``count`` entries of a root index block (a multi-level root has mid-key data after them)."""
    offsets, sizes, keys = [], [], []
    pos = 0
    for _ in range(count):
        if pos + _ENTRY.size > len(data):
            raise CorruptFileError(f"{where}: the root index holds fewer than the {count} entries its trailer says")
        offset, size = _ENTRY.unpack_from(data, pos)
        length, pos = decode_vlong(data, pos + _ENTRY.size, where)
        if length < 0 or pos + length > len(data):
            raise CorruptFileError(f"{where}: a root index key runs past its block")
        offsets.append(offset)
        sizes.append(size)
        keys.append(data[pos:pos + length])
        pos += length
    return IndexEntries(offsets, sizes, keys)


def parse_lower_index(data: bytes, where: str) -> IndexEntries:
    """The entries of an intermediate or leaf index block."""
    if len(data) < 4:
        raise CorruptFileError(f"{where}: an index block too short for its entry count")
    (count,) = struct.unpack_from(">i", data)
    table_end = 4 + 4 * (count + 1)
    if count < 0 or table_end > len(data):
        raise CorruptFileError(f"{where}: an index block says it holds {count} entries")
    relative = np.frombuffer(data, ">i4", count + 1, 4).astype(np.int64) + table_end
    if (np.diff(relative) < _ENTRY.size).any() or relative[-1] > len(data):
        raise CorruptFileError(f"{where}: the entry offsets of an index block do not fit it")
    offsets, sizes, keys = [], [], []
    for start, end in zip(relative[:-1].tolist(), relative[1:].tolist()):
        offset, size = _ENTRY.unpack_from(data, start)
        offsets.append(offset)
        sizes.append(size)
        keys.append(data[start + _ENTRY.size:end])
    return IndexEntries(offsets, sizes, keys)


def encode_root_index(entries: IndexEntries) -> bytes:
    return b"".join(_ENTRY.pack(offset, size) + encode_vlong(len(key)) + key
                    for offset, size, key in zip(entries.offsets, entries.sizes, entries.keys))


@dataclass(frozen=True)
class DataIndex:
    """The data blocks of a file, in order: where each is, and the row of its first key (or of the shorter
    key HBase may write in its place, between the previous block's last row and this block's first)."""

    offsets: np.ndarray
    sizes: np.ndarray
    rows: pa.Array

    @staticmethod
    def of(entries: IndexEntries, where: str) -> DataIndex:
        rows = pa.array([row_of(key, where) for key in entries.keys], pa.binary())
        return DataIndex(np.asarray(entries.offsets, np.int64), np.asarray(entries.sizes, np.int64), rows)

    def __len__(self) -> int:
        return len(self.offsets)
