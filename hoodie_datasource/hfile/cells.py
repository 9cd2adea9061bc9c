"""The cells of a data block, read out of it and written into it as Arrow binary arrays.

A cell is ``keyLength`` (int32), ``valueLength`` (int32), the key (``key_value``), the value, then, in an
HFile v3 whose file info says so, a 2-byte tags length and tags, and the MVCC timestamp as a Hadoop
variable-length long (one zero byte in every Hudi file: HBase's ``KeyValue`` and ``HFileWriterImpl``).

Reading takes two steps. Where each cell starts follows from the lengths of the cells before it, so one
loop walks the length fields (0.14 us a cell, 1.3 ms for a 1 MB block of 9,000 cells; finding the starts
with whole-block numpy passes over every byte measured ten times slower); the rows and values are then cut
out for all cells at once. Writing lays out a whole block with numpy."""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from hoodie_datasource.errors import CorruptFileError, InvalidRecordError
from hoodie_datasource.hfile.binary_arrays import lengths_of, parts, slices
from hoodie_datasource.hfile.key_value import KEY_OVERHEAD, KEY_SUFFIX, MAX_ROW_LENGTH, ROW_LENGTH_SIZE
from hoodie_datasource.log.avro_codec import scatter_ranges

_LENGTHS = struct.Struct(">II")
CELL_HEADER = _LENGTHS.size
MVCC_ZERO = 1  # a Hadoop vlong of 0 is one byte
# bytes a Hadoop vlong takes, by its first byte (WritableUtils.decodeVIntSize)
_VLONG_SIZE = bytes(1 if b < 0x80 or b >= 0x90 else (-119 - (b - 256) if b - 256 < -120 else -111 - (b - 256))
                    for b in range(256))


@dataclass(frozen=True)
class Cells:
    """Cells in file order: each key's row and each value."""

    rows: pa.Array
    values: pa.Array

    def __len__(self) -> int:
        return len(self.rows)

    def take(self, indices: np.ndarray) -> Cells:
        return Cells(self.rows.take(indices), self.values.take(indices))


def _starts(block: bytes, mvcc: bool, tags: bool, where: str) -> np.ndarray:
    size, unpack, starts = len(block), _LENGTHS.unpack_from, []
    pos = 0
    try:
        while pos < size:
            key_length, value_length = unpack(block, pos)
            starts.append(pos)
            pos += CELL_HEADER + key_length + value_length
            if tags:
                pos += 2 + int.from_bytes(block[pos:pos + 2], "big")
            if mvcc:
                pos += _VLONG_SIZE[block[pos]]
    except (struct.error, IndexError):
        pos = size + 1
    if pos != size:
        raise CorruptFileError(f"{where}: the cells of a data block do not end where the block does")
    return np.asarray(starts, np.int64)


def _be(bytes_at: np.ndarray) -> np.ndarray:
    """Big-endian unsigned integers from rows of bytes."""
    out = np.zeros(len(bytes_at), np.int64)
    for column in range(bytes_at.shape[1]):
        out = out << 8 | bytes_at[:, column]
    return out


def decode_cells(block: bytes, mvcc: bool, tags: bool, where: str) -> Cells:
    """Every cell of a data block's (inflated) data."""
    starts = _starts(block, mvcc, tags, where)
    raw = np.frombuffer(block, np.uint8)
    head = raw[starts[:, None] + np.arange(CELL_HEADER + ROW_LENGTH_SIZE)]
    key_lengths, value_lengths, row_lengths = _be(head[:, 0:4]), _be(head[:, 4:8]), _be(head[:, 8:10])
    if (row_lengths + ROW_LENGTH_SIZE > key_lengths).any():
        raise CorruptFileError(f"{where}: a cell's row is longer than its key")
    rows = slices(raw, starts + CELL_HEADER + ROW_LENGTH_SIZE, row_lengths)
    values = slices(raw, starts + CELL_HEADER + key_lengths, value_lengths)
    return Cells(rows, values)


def cell_sizes(rows: pa.Array, values: pa.Array) -> np.ndarray:
    """The bytes each cell takes in a block, as Hudi writes it (KeyValue key, MVCC byte, no tags)."""
    return CELL_HEADER + KEY_OVERHEAD + lengths_of(rows) + lengths_of(values) + MVCC_ZERO


def encode_cells(rows: pa.Array, values: pa.Array) -> bytes:
    """A data block's data: each row's KeyValue key with its value and a zero MVCC timestamp."""
    row_offsets, row_data = parts(rows)
    value_offsets, value_data = parts(values)
    row_lengths, value_lengths = np.diff(row_offsets), np.diff(value_offsets)
    if len(row_lengths) and int(row_lengths.max()) > MAX_ROW_LENGTH:
        raise InvalidRecordError(f"An HFile key is {int(row_lengths.max())} bytes; HBase's KeyValue takes at most "
                                 f"{MAX_ROW_LENGTH}")
    sizes = CELL_HEADER + KEY_OVERHEAD + row_lengths + value_lengths + MVCC_ZERO
    starts = np.zeros(len(sizes), np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    out = np.zeros(int(sizes.sum()), np.uint8)
    head = np.empty(len(sizes), [("key", ">u4"), ("value", ">u4"), ("row", ">u2")])
    head["key"], head["value"], head["row"] = row_lengths + KEY_OVERHEAD, value_lengths, row_lengths
    scatter_ranges(out, starts, head.view(np.uint8), np.full(len(sizes), head.itemsize, np.int64))
    row_starts = starts + CELL_HEADER + ROW_LENGTH_SIZE
    scatter_ranges(out, row_starts, row_data[row_offsets[0]:row_offsets[-1]], row_lengths)
    suffix_starts = row_starts + row_lengths
    out[suffix_starts[:, None] + np.arange(len(KEY_SUFFIX))] = np.frombuffer(KEY_SUFFIX, np.uint8)
    value_starts = suffix_starts + len(KEY_SUFFIX)
    scatter_ranges(out, value_starts, value_data[value_offsets[0]:value_offsets[-1]], value_lengths)
    return out.tobytes()
