"""An HFile block: a 33-byte header, the (compressed) data, then the checksums of both.

The header, big-endian (HBase's ``HFileBlock``, Hudi's ``HFileBlock.Header``)::

    magic                         8 bytes, the block type
    onDiskSizeWithoutHeader       int32  compressed data + checksum bytes
    uncompressedSizeWithoutHeader int32  the data once inflated
    prevBlockOffset               int64  the previous block of the same type, or -1
    checksumType                  byte   0 NULL, 1 CRC32, 2 CRC32C
    bytesPerChecksum              int32
    onDiskDataSizeWithHeader      int32  header + compressed data (what the checksums cover)

Every block but the trailer has this form; the file's one codec compresses every block's data."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import Enum

from hoodie_datasource.errors import CorruptFileError, UnsupportedTableError
from hoodie_datasource.hfile import checksum
from hoodie_datasource.hfile.checksum import BYTES_PER_CHECKSUM, ChecksumType
from hoodie_datasource.hfile.compression import Compression, compress, decompress

_HEADER = struct.Struct(">8siiqBii")
HEADER_SIZE = _HEADER.size  # 33


class BlockType(Enum):
    """HBase's ``BlockType``, by magic. Hudi's writers use DATA, META, ROOT_INDEX and FILE_INFO; HBase adds
    the lower index levels for large files. The rest (encoded data, HBase's own bloom blocks) are refused."""

    DATA = b"DATABLK*"
    ENCODED_DATA = b"DATABLKE"
    LEAF_INDEX = b"IDXLEAF2"
    BLOOM_CHUNK = b"BLMFBLK2"
    META = b"METABLKc"
    INTERMEDIATE_INDEX = b"IDXINTE2"
    ROOT_INDEX = b"IDXROOT2"
    FILE_INFO = b"FILEINF2"
    GENERAL_BLOOM_META = b"BLMFMET2"
    DELETE_FAMILY_BLOOM_META = b"DFBLMET2"
    TRAILER = b'TRABLK"$'
    INDEX_V1 = b"IDXBLK)+"


@dataclass(frozen=True)
class Block:
    """A block read from the file: its type, inflated data, and the bytes it takes on disk."""

    block_type: BlockType
    data: bytes
    on_disk_size: int


def read_block(raw: memoryview, codec: Compression, verify_checksums: bool, where: str,
               expected: BlockType | tuple[BlockType, ...]) -> Block:
    """The block at the start of ``raw``; its checksums verified when asked, its type one of ``expected``."""
    if len(raw) < HEADER_SIZE:
        raise CorruptFileError(f"{where}: {len(raw)} bytes left, too few for a block header")
    magic, on_disk, uncompressed, _, kind, per_checksum, data_with_header = _HEADER.unpack_from(raw)
    try:
        block_type = BlockType(magic)
    except ValueError:
        raise CorruptFileError(f"{where}: {bytes(magic)!r} is not an HFile block magic") from None
    wanted = expected if isinstance(expected, tuple) else (expected,)
    if block_type not in wanted:
        if block_type == BlockType.ENCODED_DATA:
            raise UnsupportedTableError(f"{where}: the data blocks use an HBase data block encoding, which "
                                        f"Hudi never writes; only unencoded HFiles are read")
        raise CorruptFileError(f"{where}: a {block_type.name} block where a "
                               f"{' or '.join(t.name for t in wanted)} block belongs")
    total = HEADER_SIZE + on_disk
    # a NULL checksum takes no bytes in HBase; Hudi 1.x's writer leaves zero bytes where checksums would be
    sums = checksum.checksum_bytes(kind, data_with_header, per_checksum) if kind else total - data_with_header
    if on_disk < 0 or uncompressed < 0 or total > len(raw) or not HEADER_SIZE <= data_with_header <= total \
            or data_with_header + sums != total:
        raise CorruptFileError(f"{where}: the {block_type.name} block's sizes do not add up (on disk {on_disk}, "
                               f"data with header {data_with_header}, checksum type {kind}, {len(raw)} bytes "
                               f"available)")
    if verify_checksums:
        checksum.verify(kind, raw[:data_with_header], raw[data_with_header:total], per_checksum,
                        f"{where} ({block_type.name} block)")
    data = decompress(codec, raw[HEADER_SIZE:data_with_header], uncompressed, f"{where} ({block_type.name} block)")
    return Block(block_type, data, total)


def encode_block(block_type: BlockType, data: bytes, prev_offset: int, codec: Compression,
                 kind: ChecksumType = ChecksumType.CRC32C, bytes_per_checksum: int = BYTES_PER_CHECKSUM) -> bytes:
    """A complete block as HBase's writer lays it out: header, compressed ``data``, checksums."""
    packed = compress(codec, data)
    data_with_header = HEADER_SIZE + len(packed)
    sums = checksum.checksum_bytes(kind, data_with_header, bytes_per_checksum)
    header = _HEADER.pack(block_type.value, len(packed) + sums, len(data), prev_offset, kind,
                          bytes_per_checksum, data_with_header)
    body = header + packed
    return body + checksum.compute(kind, body, bytes_per_checksum)
