"""Writing an HFile v3 that Java Hudi reads (0.14/0.15 through HBase 2.4, and 1.x's own reader), laid out as
HBase's ``HFileWriterImpl`` lays out the metadata-table files Hudi 0.15 writes (``HoodieAvroHFileWriter``):

- data blocks of cells in key order, each closed once it holds ``block_size`` bytes or more;
- meta blocks (Hudi's ``bloomFilter``), then the load-on-open section: a one-level root data index keyed by
  each block's first key, the meta index, and the file info (HBase's entries, then Hudi's ``schema``,
  ``minRecordKey``, ``maxRecordKey`` and ``bloomFilterTypeCode``), then the trailer;
- every block compressed with the file's codec and followed by CRC32C checksums per 16 KB;
- the comparator Hudi names (``HoodieHBaseKVComparator``), and a creation time of 0 as HBase leaves it, so
  the same cells always give the same bytes.

Byte-for-byte identity with Java is not the aim: HBase writes a shorter "midpoint" key in its index where this
writer writes the block's first key, which both readers accept."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.errors import InvalidRecordError
from hoodie_datasource.hfile import file_info as info
from hoodie_datasource.hfile.binary_arrays import as_binary
from hoodie_datasource.hfile.block import HEADER_SIZE, BlockType, encode_block
from hoodie_datasource.hfile.block_index import IndexEntries, encode_root_index
from hoodie_datasource.hfile.cells import cell_sizes, encode_cells
from hoodie_datasource.hfile.checksum import BYTES_PER_CHECKSUM, ChecksumType
from hoodie_datasource.hfile.compression import Compression
from hoodie_datasource.hfile.key_value import KEY_OVERHEAD, full_key
from hoodie_datasource.hfile.trailer import HUDI_COMPARATOR, TRAILER_SIZE, Trailer

DEFAULT_BLOCK_SIZE = 1 << 20  # hoodie.hfile.block.size


@dataclass(frozen=True)
class HFileWriterConfig:
    """How a file is cut and encoded: ``block_size`` is Hudi's ``hoodie.hfile.block.size``, ``compression`` its
    ``hoodie.hfile.compression.algorithm`` (``compression_named`` parses the option's value)."""

    block_size: int = DEFAULT_BLOCK_SIZE
    compression: Compression = Compression.GZ
    checksum: ChecksumType = ChecksumType.CRC32C
    bytes_per_checksum: int = BYTES_PER_CHECKSUM


@dataclass(frozen=True)
class HudiBloomFilter:
    """A bloom filter as Hudi stores it in an HFile: its type code and its serialized string
    (``index.bloom_filter``'s ``BloomFilter.filter_type`` and ``serialize()``)."""

    type_code: str
    serialized: str


def _block_ends(sizes: np.ndarray, block_size: int) -> list[int]:
    """Where each block's cells end: a block takes cells until it holds ``block_size`` bytes or more (HBase's
    ``checkBlockBoundary``, before each new cell)."""
    ends: list[int] = []
    totals = np.cumsum(sizes)
    start = 0
    while start < len(sizes):
        before = int(totals[start - 1]) if start else 0
        start = min(int(np.searchsorted(totals, before + block_size, "left")) + 1, len(sizes))
        ends.append(start)
    return ends


def _check_sorted(keys: pa.Array) -> None:
    if len(keys) < 2:
        return
    ascending = pc.greater(keys.slice(1), keys.slice(0, len(keys) - 1))
    if not pc.all(ascending).as_py():
        at = int(pc.index(ascending, False).as_py())
        raise InvalidRecordError(f"HFile keys must be unique and ascending; key {keys[at + 1].as_py()!r} follows "
                                 f"{keys[at].as_py()!r}")


def write_hfile(keys, values, config: HFileWriterConfig = HFileWriterConfig(), *, avro_schema: str | None = None,
                bloom_filter: HudiBloomFilter | None = None) -> bytes:
    """The bytes of an HFile holding ``values[i]`` under ``keys[i]`` (unique and ascending; ``str`` keys are
    their UTF-8 bytes). ``avro_schema`` is stored as Hudi's ``schema`` entry; ``bloom_filter`` as Hudi's
    ``bloomFilter`` meta block with its type code and the first and last keys (``HoodieAvroHFileWriter.close``)."""
    keys, values = as_binary(keys), as_binary(values)
    if len(keys) != len(values):
        raise InvalidRecordError(f"{len(keys)} HFile keys for {len(values)} values")
    _check_sorted(keys)
    codec = config.compression
    out: list[bytes] = []
    offset = 0
    total_uncompressed = 0

    def put(block_type: BlockType, data: bytes, prev: int) -> int:
        nonlocal offset, total_uncompressed
        block = encode_block(block_type, data, prev, codec, config.checksum, config.bytes_per_checksum)
        start = offset
        out.append(block)
        offset += len(block)
        total_uncompressed += HEADER_SIZE + len(data)
        return start

    data_index = IndexEntries([], [], [])
    prev = -1
    start = 0
    for end in _block_ends(cell_sizes(keys, values), config.block_size):
        prev = put(BlockType.DATA, encode_cells(keys.slice(start, end - start), values.slice(start, end - start)), prev)
        data_index.offsets.append(prev)
        data_index.sizes.append(offset - prev)
        data_index.keys.append(full_key(keys[start].as_py()))
        start = end

    metas: dict[str, bytes] = {}
    entries = {info.KEY_VALUE_VERSION: info.int_value(info.KEY_VALUE_VERSION_WITH_MVCC),
               info.MAX_MEMSTORE_TS_KEY: info.long_value(0), info.CREATE_TIME_TS: info.long_value(0)}
    if avro_schema is not None:
        entries[info.SCHEMA] = avro_schema.encode()
    if bloom_filter is not None:
        entries[info.MIN_RECORD_KEY] = keys[0].as_py() if len(keys) else b""
        entries[info.MAX_RECORD_KEY] = keys[-1].as_py() if len(keys) else b""
        entries[info.BLOOM_FILTER_TYPE_CODE] = bloom_filter.type_code.encode()
        metas[info.BLOOM_FILTER_BLOCK] = bloom_filter.serialized.encode()
    meta_index = IndexEntries([], [], [])
    meta_prev = -1
    for name in sorted(metas, key=str.encode):
        meta_prev = put(BlockType.META, metas[name], meta_prev)
        meta_index.offsets.append(meta_prev)
        meta_index.sizes.append(offset - meta_prev)
        meta_index.keys.append(name.encode())

    count = len(keys)
    if count:
        entries[info.LAST_KEY] = full_key(keys[-1].as_py())
    key_bytes = int(pc.sum(pc.binary_length(keys)).as_py() or 0) + KEY_OVERHEAD * count
    value_bytes = int(pc.sum(pc.binary_length(values)).as_py() or 0)
    entries[info.AVG_KEY_LEN] = info.int_value(key_bytes // count if count else 0)
    entries[info.AVG_VALUE_LEN] = info.int_value(value_bytes // count if count else 0)

    root = encode_root_index(data_index)
    before_root = total_uncompressed
    load_on_open = put(BlockType.ROOT_INDEX, root, -1)
    total_uncompressed = before_root  # HBase counts the data index apart (uncompressed_data_index_size)
    put(BlockType.ROOT_INDEX, encode_root_index(meta_index), load_on_open)
    file_info_offset = put(BlockType.FILE_INFO, info.encode_file_info(entries), -1)
    trailer = Trailer(
        file_info_offset=file_info_offset,
        load_on_open_data_offset=load_on_open,
        uncompressed_data_index_size=len(root),
        total_uncompressed_bytes=total_uncompressed + TRAILER_SIZE,
        data_index_count=len(data_index.offsets),
        meta_index_count=len(meta_index.offsets),
        entry_count=count,
        num_data_index_levels=1,
        first_data_block_offset=data_index.offsets[0] if count else -1,
        last_data_block_offset=data_index.offsets[-1] if count else -1,
        comparator_class_name=HUDI_COMPARATOR,
        compression=codec,
    )
    out.append(trailer.encode())
    return b"".join(out)
