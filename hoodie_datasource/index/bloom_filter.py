"""Hudi's bloom filters (SIMPLE and DYNAMIC_V0), serialized byte-for-byte as Hudi writes them.

Layout (big-endian, Hadoop ``Filter``/``BloomFilter``/``DynamicBloomFilter`` writables):
header = int32 version (-1), int32 nbHash, int8 hashType (1 = murmur), int32 vectorSize;
SIMPLE = header + ceil(vectorSize/8) bytes of bits (bit i in byte i>>3, mask 1 << (i & 7));
DYNAMIC_V0 = header + int32 nr + int32 currentNbRecord + int32 rows + rows x (header + bits).
The footer value is that byte string in standard Base64.

Bit positions chain Hadoop's MurmurHash2: seed_0 = 0, h_i = murmur(key, seed = h_{i-1}),
position_i = abs(h_i % vectorSize) with Java's truncating ``%`` on int32.
"""

from __future__ import annotations

import base64
import logging
import math
import struct
from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow.parquet as pq

from hoodie_datasource.errors import CorruptFileError, HoodieConfigError
from hoodie_datasource.index.murmur_hash import KeyMatrix, key_bytes, length_groups
from hoodie_datasource.storage.parquet import read_parquet_metadata
from hoodie_datasource.storage.storage import Storage

logger = logging.getLogger(__name__)

FOOTER_BLOOM_KEY = "org.apache.hudi.bloomfilter"
FOOTER_LEGACY_BLOOM_KEY = "com.uber.hoodie.bloomfilter"
FOOTER_TYPE_KEY = "hoodie_bloom_filter_type_code"
FOOTER_MIN_KEY = "hoodie_min_record_key"
FOOTER_MAX_KEY = "hoodie_max_record_key"
FILTER_TYPES = ("SIMPLE", "DYNAMIC_V0")
MURMUR_HASH = 1
_VERSION = -1
_CHUNK = 131072


def bloom_positions(keys, num_hashes: int, vector_size: int) -> np.ndarray:
    """(n, num_hashes) bit positions of each key (int32: a Java int vector size bounds them), laid out
    a hash at a time (the transpose of a contiguous array), as probes read them."""
    data, starts, lengths = key_bytes(keys)
    out = np.empty((num_hashes, len(lengths)), np.int32)
    size = np.int32(vector_size)
    for length, rows in length_groups(lengths):
        for lo in range(0, len(rows), _CHUNK):
            part = rows[lo:lo + _CHUNK]
            matrix = KeyMatrix(data, starts[part], length)
            seeds = np.zeros(len(part), np.uint32)
            whole = len(part) == len(lengths)  # one group in key order: no scatter
            for i in range(num_hashes):
                seeds = matrix.hash(seeds)
                position = np.abs(np.fmod(seeds.view(np.int32), size))
                if whole:
                    out[i] = position
                else:
                    out[i, part] = position
    return out.T


class _BitVector:
    """One Hadoop bloom filter row. Probing reads the packed bytes as stored; adding keys works on
    an unpacked bool-per-bit copy (made on first add) so numpy can set bits in one pass."""

    def __init__(self, vector_size: int, num_hashes: int, packed: np.ndarray | None = None):
        self.vector_size = vector_size
        self.num_hashes = num_hashes
        self._packed = packed
        self._bits = np.zeros(vector_size, dtype=bool) if packed is None else None

    def add(self, positions: np.ndarray) -> None:
        if self._bits is None:
            self._bits = np.unpackbits(self._packed, bitorder="little")[: self.vector_size].astype(bool)
        self._bits[positions.ravel()] = True
        self._packed = None

    def _set(self, positions: np.ndarray) -> np.ndarray:
        if self._bits is not None:
            return self._bits[positions]
        return (self._packed[positions >> 3] >> (positions & 7).astype(np.uint8)) & 1 == 1

    def contains(self, positions: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Whether every bit of the ``positions`` rows ``rows`` is set, per row asked. A hash at a time,
        over the keys still in: a key the filter lacks is out after a few bits, so absent keys cost a
        few gathers."""
        asked = len(rows)
        alive = np.arange(asked)
        for column in positions.T:
            kept = self._set(column[rows])
            alive, rows = alive[kept], rows[kept]
            if not len(alive):
                break
        found = np.zeros(asked, dtype=bool)
        found[alive] = True
        return found

    def packed(self) -> np.ndarray:
        if self._packed is None:
            self._packed = np.packbits(self._bits, bitorder="little")
        return self._packed

    def header(self) -> bytes:
        return struct.pack(">ibi", self.num_hashes, MURMUR_HASH, self.vector_size)

    def to_bytes(self) -> bytes:
        return struct.pack(">i", _VERSION) + self.header() + self.packed().tobytes()

    @staticmethod
    def parse(raw: memoryview, offset: int) -> tuple[_BitVector, int]:
        version, num_hashes, hash_type, vector_size = struct.unpack_from(">iibi", raw, offset)
        if version != _VERSION or hash_type != MURMUR_HASH or vector_size <= 0 or num_hashes <= 0:
            raise CorruptFileError(
                f"Unsupported bloom filter header (version {version}, hash type {hash_type}, size {vector_size})"
            )
        offset += 13
        nbytes = (vector_size + 7) // 8
        if offset + nbytes > len(raw):
            raise CorruptFileError("Bloom filter is truncated")
        packed = np.frombuffer(raw, dtype=np.uint8, count=nbytes, offset=offset)
        return _BitVector(vector_size, num_hashes, packed), offset + nbytes


def _sizing(num_entries: int, fpp: float) -> tuple[int, int]:
    bits = int(math.ceil(num_entries * (-math.log(fpp) / (math.log(2) ** 2))))
    return bits, int(math.ceil(math.log(2) * bits / num_entries))


class BloomFilter:
    """A Hudi bloom filter: one row (SIMPLE) or a growing list of rows (DYNAMIC_V0)."""

    def __init__(self, type_code: str, rows: list[_BitVector], nr: int = 0, max_entries: int = 0,
                 current: int = 0):
        self.type_code = type_code
        self.rows = rows
        self.nr = nr
        self.max_entries = max_entries
        self.current = current  # keys in the active row (DYNAMIC_V0)
        self._reached_max = False
        self._cycle = 0

    @property
    def vector_size(self) -> int:
        return self.rows[0].vector_size

    @property
    def num_hashes(self) -> int:
        return self.rows[0].num_hashes

    def _row_of_each(self, n: int) -> np.ndarray:
        """The row each of the next ``n`` added keys goes to (Hadoop DynamicBloomFilter.add order)."""
        assigned = np.empty(n, np.int64)
        done = 0
        while done < n:
            if self._reached_max:
                count = n - done
                assigned[done:] = (self._cycle + np.arange(count)) % len(self.rows)
                self._cycle += count
                self.current += count
                break
            if self.current < self.nr:
                count = min(self.nr - self.current, n - done)
                assigned[done:done + count] = len(self.rows) - 1
                self.current += count
                done += count
            elif len(self.rows) * self.nr < self.max_entries:
                self.rows.append(_BitVector(self.vector_size, self.num_hashes))
                self.current = 0
            else:
                self._reached_max = True
                assigned[done] = 0
                self.current += 1
                done += 1
        return assigned

    def add_keys(self, keys) -> None:
        positions = bloom_positions(keys, self.num_hashes, self.vector_size)
        if self.type_code == "SIMPLE":
            self.rows[0].add(positions)
            return
        rows = self._row_of_each(len(positions))
        for row in np.unique(rows):
            self.rows[row].add(positions[rows == row])

    def might_contain(self, keys) -> np.ndarray:
        positions = bloom_positions(keys, self.num_hashes, self.vector_size)
        return self.contains_positions(positions, np.arange(len(positions)))

    def contains_positions(self, positions: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """``might_contain`` of the keys whose ``bloom_positions`` are rows ``rows`` of ``positions``
        (keys hashed once for every filter of this geometry), per row asked."""
        found = np.zeros(len(rows), dtype=bool)
        for row in self.rows:
            pending = np.nonzero(~found)[0]
            if not len(pending):
                break
            found[pending] = row.contains(positions, rows[pending])
        return found

    @property
    def nbytes(self) -> int:
        return sum((row.vector_size + 7) // 8 for row in self.rows)

    def packed_rows(self) -> list[np.ndarray]:
        """The bits of each row as stored (``vector_size`` bits packed little-endian into bytes)."""
        return [row.packed() for row in self.rows]

    @staticmethod
    def from_packed(type_code: str, vector_size: int, num_hashes: int, rows: Sequence[np.ndarray], nr: int,
                    max_entries: int, current: int) -> BloomFilter:
        """A filter over rows of ``packed_rows`` (kept as given, e.g. read-only memory maps: adding keys
        works on an unpacked copy)."""
        return BloomFilter(type_code, [_BitVector(vector_size, num_hashes, packed) for packed in rows], nr,
                           max_entries, current)

    def copy(self, max_entries: int | None = None) -> BloomFilter:
        """An independent filter with the same bits (``max_entries`` replaces the growth bound)."""
        rows = [_BitVector(row.vector_size, row.num_hashes, row.packed()) for row in self.rows]
        return BloomFilter(self.type_code, rows, self.nr, self.max_entries if max_entries is None else max_entries,
                           self.current)

    def serialize(self) -> str:
        if self.type_code == "SIMPLE":
            raw = self.rows[0].to_bytes()
        else:
            first = self.rows[0]
            raw = (struct.pack(">i", _VERSION) + first.header()
                   + struct.pack(">iii", self.nr, self.current, len(self.rows))
                   + b"".join(row.to_bytes() for row in self.rows))
        return base64.b64encode(raw).decode("ascii")


def new_bloom_filter(filter_type: str = "DYNAMIC_V0", num_entries: int = 60000, fpp: float = 1e-9,
                     max_entries: int = 100000) -> BloomFilter:
    kind = filter_type.upper()
    if kind not in FILTER_TYPES:
        raise HoodieConfigError(f"Unknown bloom filter type {filter_type!r}; valid values: {', '.join(FILTER_TYPES)}")
    bits, hashes = _sizing(num_entries, fpp)
    return BloomFilter(kind, [_BitVector(bits, hashes)], nr=num_entries, max_entries=max_entries)


def bloom_filter_from_footer(serialized: str | bytes, type_code: str | None,
                             max_entries: int | None = None) -> BloomFilter:
    """Deserialize a footer filter. ``max_entries`` (DYNAMIC_V0's growth bound, which the bytes do
    not record) matters only when more keys are added to it."""
    kind = (type_code or "SIMPLE").upper()
    if kind not in FILTER_TYPES:
        raise HoodieConfigError(f"Unknown bloom filter type {type_code!r}; valid values: {', '.join(FILTER_TYPES)}")
    try:
        raw = memoryview(base64.b64decode(serialized, validate=True))
        if kind == "SIMPLE":
            row, _ = _BitVector.parse(raw, 0)
            return BloomFilter("SIMPLE", [row])
        nr, current, count = struct.unpack_from(">iii", raw, 13)
        offset = 25
        rows = []
        for _ in range(count):
            row, offset = _BitVector.parse(raw, offset)
            rows.append(row)
        if not rows:
            raise CorruptFileError("Dynamic bloom filter has no rows")
        bound = max_entries if max_entries is not None else max(nr * count, nr)
        return BloomFilter("DYNAMIC_V0", rows, nr=nr, max_entries=bound, current=current)
    except (ValueError, struct.error) as exc:
        raise CorruptFileError(f"Cannot decode bloom filter: {exc}") from exc


def read_bloom_filter(storage: Storage, rel: str, metadata: pq.FileMetaData | None = None,
                      max_entries: int | None = None) -> BloomFilter | None:
    """The bloom filter in the footer of base file ``rel``, or None when it has none."""
    kv = (metadata or read_parquet_metadata(storage, rel)).metadata or {}
    return bloom_filter_in_footer(kv, max_entries)


def bloom_filter_in_footer(kv: Mapping[bytes, bytes], max_entries: int | None = None) -> BloomFilter | None:
    """The bloom filter among a footer's key/value entries ``kv``, or None when it has none."""
    serialized = kv.get(FOOTER_BLOOM_KEY.encode()) or kv.get(FOOTER_LEGACY_BLOOM_KEY.encode())
    if serialized is None:
        return None
    code = kv.get(FOOTER_TYPE_KEY.encode())
    return bloom_filter_from_footer(serialized, code.decode() if code else None, max_entries)
