"""HBase's block checksums: the header and (compressed) data of a block, cut into chunks of
``bytesPerChecksum`` bytes, each followed on disk by its 4-byte big-endian checksum (HBase's
``ChecksumUtil``, ``ChecksumType``: 0 none, 1 CRC32, 2 CRC32C, its default). Hudi's own 1.x writer writes
type 0 and no checksum bytes.

CRC32C comes from the ``crc32c`` package (hardware CRC32C instructions where the CPU has them, a C
fallback otherwise, wheels for every platform); CRC32 from ``zlib``."""

from __future__ import annotations

import struct
import zlib
from enum import IntEnum

import crc32c
import numpy as np

from hoodie_datasource.errors import CorruptFileError, UnsupportedTableError

CHECKSUM_SIZE = 4
BYTES_PER_CHECKSUM = 16 * 1024  # HBase's hbase.bytes.per.checksum default


class ChecksumType(IntEnum):
    NULL = 0
    CRC32 = 1
    CRC32C = 2


def _function(kind: int, where: str):
    if kind == ChecksumType.CRC32C:
        return crc32c.crc32c
    if kind == ChecksumType.CRC32:
        return zlib.crc32
    raise UnsupportedTableError(f"{where}: checksum type {kind} is not one HBase defines (0 NULL, 1 CRC32, 2 CRC32C)")


def checksum_bytes(kind: int, size: int, bytes_per_checksum: int) -> int:
    """How many checksum bytes follow ``size`` bytes of header and data."""
    if kind == ChecksumType.NULL:
        return 0
    return -(-size // bytes_per_checksum) * CHECKSUM_SIZE


def compute(kind: ChecksumType, data: bytes | memoryview, bytes_per_checksum: int = BYTES_PER_CHECKSUM) -> bytes:
    """The checksums of ``data`` (a block's header and on-disk data), one per chunk."""
    if kind == ChecksumType.NULL:
        return b""
    function = _function(kind, "")
    view = memoryview(data)
    sums = [function(view[start:start + bytes_per_checksum]) for start in range(0, len(view), bytes_per_checksum)]
    return np.asarray(sums, dtype=">u4").tobytes()


def verify(kind: int, data: memoryview, stored: memoryview, bytes_per_checksum: int, where: str) -> None:
    """Raise ``CorruptFileError`` naming the first chunk whose checksum differs from the stored one."""
    if kind == ChecksumType.NULL:
        return
    function = _function(kind, where)
    if bytes_per_checksum <= 0:
        raise CorruptFileError(f"{where}: {bytes_per_checksum} bytes per checksum")
    for index, start in enumerate(range(0, len(data), bytes_per_checksum)):
        (expected,) = struct.unpack_from(">I", stored, index * CHECKSUM_SIZE)
        actual = function(data[start:start + bytes_per_checksum])
        if actual != expected:
            raise CorruptFileError(f"{where}: {ChecksumType(kind).name} checksum mismatch in bytes "
                                   f"{start}..{min(len(data), start + bytes_per_checksum)} of the block "
                                   f"(stored {expected:#010x}, computed {actual:#010x})")
