"""The cells of a data block, read out of it and written into it as Arrow binary arrays.

A cell is ``keyLength`` (int32), ``valueLength`` (int32), the key (``key_value``), the value, then, in an
HFile v3 whose file info says so, a 2-byte tags length and tags, and the MVCC timestamp as a Hadoop
variable-length long (one zero byte in every Hudi file: HBase's ``KeyValue`` and ``HFileWriterImpl``).

Reading takes two steps. Where each cell starts follows from the lengths of the cells before it, so one
loop walks the length fields (0.25 us a cell, 2.5 ms for a 1 MB block of 10,000 record-index cells). Measured
against it on the same blocks, numpy did no better: walking all the blocks of a lookup in step, one numpy step
per cell position, took 3x as long for 48 blocks (the steps are as many as a block's cells, each a few numpy
calls); splitting a block at the suffix every Hudi key ends with (``KEY_SUFFIX``) and checking the starts that
gives against the length fields took as long as the walk (the split alone, 1.5 ms). Then the cells' headers are
read for all cells at once, and rows and values are cut out only when asked: a lookup cuts every row of the
blocks it reads, to search them, and only the values of the cells it found. Writing lays out a whole block
with numpy."""

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
_HEADER_BYTES = np.arange(CELL_HEADER + ROW_LENGTH_SIZE)


@dataclass(frozen=True)
class Cells:
    """Cells in file order, as places in ``data`` (a block's inflated bytes): where each cell starts, and the
    lengths of its key, its row and its value."""

    data: np.ndarray
    starts: np.ndarray
    key_lengths: np.ndarray
    row_lengths: np.ndarray
    value_lengths: np.ndarray

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def rows(self) -> pa.Array:
        return slices(self.data, self.starts + CELL_HEADER + ROW_LENGTH_SIZE, self.row_lengths)

    @property
    def values(self) -> pa.Array:
        return slices(self.data, self.starts + CELL_HEADER + self.key_lengths, self.value_lengths)

    def take(self, indices: np.ndarray) -> Cells:
        return Cells(self.data, self.starts[indices], self.key_lengths[indices], self.row_lengths[indices],
                     self.value_lengths[indices])


def _walked_starts(block: bytes, mvcc: bool, tags: bool, where: str) -> np.ndarray:
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


def _head(data: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The key, value and row lengths of the cells at ``starts`` (a header cut short by the block's end reads its
    last byte again: its lengths are refused)."""
    head = np.take(data, starts[:, None] + _HEADER_BYTES, mode="clip")
    return (head[:, 0:4].copy().view(">u4")[:, 0].astype(np.int64),
            head[:, 4:8].copy().view(">u4")[:, 0].astype(np.int64),
            head[:, 8:10].copy().view(">u2")[:, 0].astype(np.int64))


def decode_cells(block: bytes, mvcc: bool, tags: bool, where: str) -> Cells:
    """Every cell of a data block's (inflated) data."""
    data = np.frombuffer(block, np.uint8)
    starts = _walked_starts(block, mvcc, tags, where)
    key_lengths, value_lengths, row_lengths = _head(data, starts)
    if (row_lengths + ROW_LENGTH_SIZE > key_lengths).any():
        raise CorruptFileError(f"{where}: a cell's row is longer than its key")
    return Cells(data, starts, key_lengths, row_lengths, value_lengths)


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
