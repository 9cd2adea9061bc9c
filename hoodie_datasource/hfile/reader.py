"""Reading an HFile v3 as Hudi and HBase write it, through the table's ``Storage`` by ranged reads.

Opening reads the trailer (the last 4096 bytes) and the load-on-open section before it (the root data index,
the meta index and the file info, one read); a multi-level index (HBase's, for large files) has its lower
levels read then too, as Hudi's ``HFileReaderImpl`` does. A lookup then reads only the data blocks whose key
range may hold its keys, adjacent blocks in one read; a full scan reads the data section in reads of up to
``MAX_READ`` bytes. Every block's checksums are verified unless ``verify_checksums`` is off.

Keys are compared by their row (Hudi's record key) as unsigned bytes. Lookups and prefix scans answer for a
whole batch at once: the index and each block's rows are searched with ``np.searchsorted`` for all keys of the
batch. Every cell with a matching key is returned: HBase allows a key more than once (in one block), Hudi's
writers do not."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.errors import CorruptFileError
from hoodie_datasource.hfile import file_info as info
from hoodie_datasource.hfile.binary_arrays import as_binary
from hoodie_datasource.hfile.block import BlockType, read_block
from hoodie_datasource.hfile.block_index import DataIndex, IndexEntries, parse_lower_index, parse_root_index
from hoodie_datasource.hfile.cells import Cells, decode_cells
from hoodie_datasource.hfile.key_search import fixed_width, searchable
from hoodie_datasource.hfile.key_value import row_of
from hoodie_datasource.hfile.trailer import TRAILER_SIZE, Trailer, parse_trailer
from hoodie_datasource.storage.storage import Storage

logger = logging.getLogger(__name__)

MAX_READ = 16 << 20  # the most one read of adjacent blocks fetches
CELLS_SCHEMA = pa.schema([pa.field("key", pa.binary(), nullable=False), pa.field("value", pa.binary(), nullable=False)])


def _runs(offsets: np.ndarray, sizes: np.ndarray) -> Iterator[tuple[int, int, list[int]]]:
    """Blocks (by position in ``offsets``, ascending) grouped into reads of adjacent bytes: ``(start, length,
    positions)``, each read at most ``MAX_READ`` bytes unless one block is larger."""
    run: list[int] = []
    start = end = 0
    for i in range(len(offsets)):
        offset, size = int(offsets[i]), int(sizes[i])
        if run and (offset != end or offset + size - start > MAX_READ):
            yield start, end - start, run
            run = []
        if not run:
            start = offset
        run.append(i)
        end = offset + size
    if run:
        yield start, end - start, run


def _successor(prefix: bytes) -> bytes | None:
    """The least byte string greater than every string starting with ``prefix``; None when there is none."""
    stripped = prefix.rstrip(b"\xff")
    return stripped[:-1] + bytes([stripped[-1] + 1]) if stripped else None


class HFileReader:
    """One HFile opened for reading; ``requests`` and ``bytes_read`` count the reads it made."""

    def __init__(self, storage: Storage, rel: str, size: int | None = None, verify_checksums: bool = True) -> None:
        self._open(storage.open_input(rel, size), storage.uri_of(rel), verify_checksums)

    @classmethod
    def of_bytes(cls, data: bytes, where: str, verify_checksums: bool = True) -> HFileReader:
        """An HFile held in memory (the content of an HFILE_DATA log block); ``where`` names it in errors."""
        reader = cls.__new__(cls)
        reader._open(pa.BufferReader(data), where, verify_checksums)
        return reader

    def _open(self, file: pa.NativeFile, where: str, verify_checksums: bool) -> None:
        self.where = where
        self.verify_checksums = verify_checksums
        self.requests = self.bytes_read = 0
        self._file = file
        try:
            self.size = self._file.size()
            tail_start = max(0, self.size - TRAILER_SIZE)
            self.trailer: Trailer = parse_trailer(self._read(tail_start, self.size - tail_start), self.where)
            self._load_on_open()
        except BaseException:
            self._file.close()
            raise

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> HFileReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _read(self, offset: int, length: int) -> memoryview:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise CorruptFileError(f"{self.where}: bytes {offset}..{offset + length} lie outside its {self.size}")
        self.requests += 1
        self.bytes_read += length
        data = memoryview(self._file.read_at(length, offset))
        if len(data) != length:
            raise CorruptFileError(f"{self.where}: read {len(data)} bytes at {offset}, expected {length}")
        return data

    def _where(self, offset: int) -> str:
        return f"{self.where} at byte {offset}"

    def _block(self, raw: memoryview, offset: int, expected) -> tuple[bytes, int]:
        block = read_block(raw, self.trailer.compression, self.verify_checksums, self._where(offset), expected)
        return block.data, block.on_disk_size

    def _load_on_open(self) -> None:
        start, end = self.trailer.load_on_open_data_offset, self.size - TRAILER_SIZE
        if not 0 <= start <= end:
            raise CorruptFileError(f"{self.where}: its trailer puts the load-on-open section at {start}, past {end}")
        section = self._read(start, end - start)
        pos = 0
        blocks = []
        for expected in (BlockType.ROOT_INDEX, BlockType.ROOT_INDEX, BlockType.FILE_INFO):
            data, size = self._block(section[pos:], start + pos, expected)
            blocks.append(data)
            pos += size
        root, meta, file_info = blocks
        self.file_info: dict[bytes, bytes] = info.parse_file_info(file_info, self.where)
        self._mvcc, self._tags = info.cell_format(self.file_info, self.where)
        meta_entries = parse_root_index(meta, self.trailer.meta_index_count, f"{self.where} (meta index)")
        self._meta = {key: (offset, size) for key, offset, size in
                      zip(meta_entries.keys, meta_entries.offsets, meta_entries.sizes)}
        entries = parse_root_index(root, self.trailer.data_index_count, f"{self.where} (data index)")
        for level in range(self.trailer.num_data_index_levels - 1, 0, -1):
            entries = self._lower_level(entries, BlockType.INTERMEDIATE_INDEX if level > 1 else BlockType.LEAF_INDEX)
        self.index = DataIndex.of(entries, f"{self.where} (data index)")
        last = self.file_info.get(info.LAST_KEY)
        # Hudi 1.x's writer leaves an empty hfile.LASTKEY in a file without cells
        self.last_row = row_of(last, f"{self.where} (hfile.LASTKEY)") if last else None

    def _lower_level(self, parents: IndexEntries, block_type: BlockType) -> IndexEntries:
        offsets, sizes, keys = [], [], []
        for data in self._blocks(np.asarray(parents.offsets, np.int64), np.asarray(parents.sizes, np.int64),
                                 block_type):
            level = parse_lower_index(data, f"{self.where} ({block_type.name} block)")
            offsets += level.offsets
            sizes += level.sizes
            keys += level.keys
        return IndexEntries(offsets, sizes, keys)

    def _blocks(self, offsets: np.ndarray, sizes: np.ndarray, block_type: BlockType) -> Iterator[bytes]:
        """The data of the blocks at ``offsets`` (ascending), read in runs of adjacent blocks."""
        for start, length, positions in _runs(offsets, sizes):
            raw = self._read(start, length)
            for i in positions:
                offset = int(offsets[i])
                data, size = self._block(raw[offset - start:offset - start + int(sizes[i])], offset, block_type)
                if size != sizes[i]:
                    raise CorruptFileError(f"{self._where(offset)}: the block takes {size} bytes, its index "
                                           f"entry says {int(sizes[i])}")
                yield data

    def _data_blocks(self, positions: np.ndarray) -> Iterator[tuple[int, Cells]]:
        """``(position in the index, cells)`` of the data blocks at ``positions`` (ascending)."""
        blocks = self._blocks(self.index.offsets[positions], self.index.sizes[positions], BlockType.DATA)
        for position, data in zip(positions.tolist(), blocks):
            yield position, decode_cells(data, self._mvcc, self._tags, self._where(int(self.index.offsets[position])))

    # ---- what the file says about itself

    @property
    def entry_count(self) -> int:
        return self.trailer.entry_count

    def meta_block(self, name: str) -> bytes | None:
        """The content of the meta block ``name`` (Hudi's ``bloomFilter``), or None."""
        found = self._meta.get(name.encode())
        if found is None:
            return None
        offset, size = found
        return self._block(self._read(offset, size), offset, BlockType.META)[0]

    def avro_schema(self) -> str | None:
        """The Avro schema Hudi wrote its records with (file info ``schema``)."""
        schema = self.file_info.get(info.SCHEMA)
        return None if schema is None else schema.decode()

    def min_max_record_keys(self) -> tuple[str, str] | None:
        """Hudi's ``minRecordKey`` and ``maxRecordKey``, written beside its bloom filter."""
        low, high = self.file_info.get(info.MIN_RECORD_KEY), self.file_info.get(info.MAX_RECORD_KEY)
        return None if low is None or high is None else (low.decode(), high.decode())

    def bloom_filter(self) -> tuple[str, bytes] | None:
        """Hudi's bloom filter: its type code (``bloomFilterTypeCode``) and its serialized form (the meta
        block ``bloomFilter``), as ``index.bloom_filter`` reads a parquet footer's."""
        block = self.meta_block(info.BLOOM_FILTER_BLOCK)
        code = self.file_info.get(info.BLOOM_FILTER_TYPE_CODE)
        return None if block is None or code is None else (code.decode(), block)

    # ---- cells

    def scan(self) -> pa.Table:
        """Every cell, in file order, as a table of ``key`` (the row) and ``value``."""
        return self._table(cells for _, cells in self._data_blocks(np.arange(len(self.index))))

    def get(self, key: bytes | str) -> bytes | None:
        """The value of the first cell whose key is ``key``, or None."""
        found = self.lookup([key])
        return found["value"][0].as_py() if found.num_rows else None

    def lookup(self, keys: Iterable[bytes | str] | pa.Array) -> pa.Table:
        """The cells whose keys are among ``keys`` (in any order), in key order."""
        probes = as_binary(keys)
        if len(probes) > 1:
            probes = probes.unique()
            probes = probes.take(pc.sort_indices(probes))
        if self.last_row is not None and len(probes):
            beyond = searchable(probes, pa.array([self.last_row], pa.binary()))
            probes = probes.slice(0, int(np.searchsorted(beyond[0], beyond[1][0], "right")))
        return self._ranges(probes, probes, inclusive=True)

    def scan_prefixes(self, prefixes: Sequence[bytes | str]) -> pa.Table:
        """The cells whose keys start with any of ``prefixes``, in key order, each once."""
        kept: list[bytes] = []
        for prefix in sorted(as_binary(prefixes).to_pylist()):
            if not kept or not prefix.startswith(kept[-1]):
                kept.append(prefix)
        highs = [_successor(p) for p in kept]
        unbounded = np.array([h is None for h in highs], bool)
        return self._ranges(pa.array(kept, pa.binary()), pa.array([h or b"" for h in highs], pa.binary()),
                            inclusive=False, unbounded=unbounded)

    def _ranges(self, lows: pa.Array, highs: pa.Array, inclusive: bool,
                unbounded: np.ndarray | None = None) -> pa.Table:
        """The cells in the disjoint, ascending key ranges ``[lows[i], highs[i]]`` (``inclusive``) or
        ``[lows[i], highs[i])``; a range in ``unbounded`` has no upper end."""
        blocks = len(self.index)
        if not len(lows) or not blocks:
            return self._table([])
        unbounded = np.zeros(len(lows), bool) if unbounded is None else unbounded
        side = "right" if inclusive else "left"
        index_rows, low_keys, high_keys = searchable(self.index.rows, lows, highs)
        # every key of a block is above the previous block's keys: HBase keeps a key's repeated cells in one block
        # and its index keys fall between blocks; Hudi's writers and ours write each key once
        first = np.maximum(np.searchsorted(index_rows, low_keys, "right") - 1, 0)
        last = np.where(unbounded, blocks - 1, np.searchsorted(index_rows, high_keys, side) - 1)
        wanted = last >= first
        first, last, unbounded = first[wanted], last[wanted], unbounded[wanted]
        lows, highs = lows.filter(pa.array(wanted)), highs.filter(pa.array(wanted))
        low_keys, high_keys = low_keys[wanted], high_keys[wanted]
        counts = last - first + 1
        needed = np.unique(np.repeat(first - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum())))
        found = []
        for position, cells in self._data_blocks(needed):
            begin = int(np.searchsorted(last, position, "left"))
            end = int(np.searchsorted(first, position, "right"))
            rows = fixed_width(cells.rows) if low_keys.dtype != object else None
            if rows is None:  # a key ending with a NUL byte: search this block exactly
                rows, block_lows, block_highs = searchable(cells.rows, lows.slice(begin, end - begin),
                                                           highs.slice(begin, end - begin))
            else:
                block_lows, block_highs = low_keys[begin:end], high_keys[begin:end]
            starts = np.searchsorted(rows, block_lows, "left")
            ends = np.where(unbounded[begin:end], len(cells), np.searchsorted(rows, block_highs, side))
            counts = np.maximum(ends - starts, 0)
            if counts.sum():
                found.append(cells.take(np.repeat(starts - np.cumsum(counts) + counts, counts)
                                        + np.arange(int(counts.sum()))))
        return self._table(found)

    @staticmethod
    def _table(cells: Iterable[Cells]) -> pa.Table:
        parts = list(cells)
        if not parts:
            return CELLS_SCHEMA.empty_table()
        rows = pa.chunked_array([c.rows for c in parts], pa.binary())
        values = pa.chunked_array([c.values for c in parts], pa.binary())
        return pa.Table.from_arrays([rows, values], schema=CELLS_SCHEMA)

