"""The compression of an HFile's blocks: one codec for the whole file, named in its trailer by the
ordinal of HBase's ``Compression.Algorithm`` (Hudi's ``HFileCompressionCodec``), and in Hudi's
``hoodie.hfile.compression.algorithm`` by that enum's name (``GZ`` by default).

NONE and GZ are read and written: Hudi's metadata table uses GZ, and hudi-rs reads no other. GZ is a gzip
member per block, as Hadoop's ``GzipCodec`` writes it (zlib with a gzip wrapper)."""

from __future__ import annotations

import zlib
from enum import IntEnum

from hoodie_datasource.errors import CorruptFileError, HoodieConfigError, UnsupportedTableError

GZIP_WINDOW = 16 + zlib.MAX_WBITS  # zlib's window bits for a gzip wrapper
# Hadoop's ZlibCompressor deflates at zlib's default, 6; any level inflates alike. Level 1: the metadata table's
# bloom filters (base64 text of their bits, 430 KB each) deflate 7x faster into blocks 15% larger
GZIP_LEVEL = 1


class Compression(IntEnum):
    """HBase's ``Compression.Algorithm``, by trailer ordinal."""

    LZO = 0
    GZ = 1
    NONE = 2
    SNAPPY = 3
    LZ4 = 4
    BZIP2 = 5
    ZSTD = 6
    LZMA = 7
    BROTLI = 8


SUPPORTED = (Compression.GZ, Compression.NONE)


def compression_named(name: str, option: str = "hoodie.hfile.compression.algorithm") -> Compression:
    """The codec ``name`` spells (any case); ``HoodieConfigError`` naming ``option`` and the choices if it is
    not one this library writes."""
    codec = Compression.__members__.get(name.strip().upper())
    if codec not in SUPPORTED:
        choices = ", ".join(c.name for c in SUPPORTED)
        raise HoodieConfigError(f"Option {option!r} is {name!r}; HFiles are written with one of: {choices}")
    return codec


def codec_of(ordinal: int, where: str) -> Compression:
    """The codec of a trailer's ``compression_codec``; ``UnsupportedTableError`` for one this library cannot read."""
    try:
        codec = Compression(ordinal)
    except ValueError:
        raise CorruptFileError(f"{where}: compression codec {ordinal} is not one HBase defines") from None
    if codec not in SUPPORTED:
        raise UnsupportedTableError(f"{where} is compressed with {codec.name}; HFiles are read with "
                                    f"{' or '.join(c.name for c in SUPPORTED)} only")
    return codec


def compress(codec: Compression, data: bytes) -> bytes:
    if codec == Compression.NONE:
        return data
    deflater = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, GZIP_WINDOW)
    return deflater.compress(data) + deflater.flush()


def decompress(codec: Compression, data: bytes | memoryview, size: int, where: str) -> bytes:
    """``size`` bytes of block data from its on-disk form."""
    if codec == Compression.NONE:
        out = bytes(data[:size])
    else:
        try:
            out = zlib.decompressobj(GZIP_WINDOW).decompress(data)
        except zlib.error as exc:
            raise CorruptFileError(f"{where}: GZ block data does not inflate: {exc}") from None
    if len(out) != size:
        raise CorruptFileError(f"{where}: block data is {len(out)} bytes, its header says {size}")
    return out
