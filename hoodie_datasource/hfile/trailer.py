"""The fixed-size trailer that ends an HFile v3 (4096 bytes): the magic ``TRABLK"$``, a length-delimited
``TrailerProto``, zero padding, and the version as the last 4 bytes (minor version in the top byte, major in
the low three: HBase's ``FixedFileTrailer.materializeVersion``). It is read first: it says where the
load-on-open section (root data index, meta index, file info) starts, how many index levels and entries
there are, and the codec."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from hoodie_datasource.errors import CorruptFileError, UnsupportedTableError
from hoodie_datasource.hfile import protobuf
from hoodie_datasource.hfile.block import BlockType
from hoodie_datasource.hfile.compression import Compression, codec_of

TRAILER_SIZE = 4096
MAJOR_VERSION = 3
MINOR_VERSION = 3  # the minor version HBase 2.x writes (PBUF_TRAILER_MINOR_VERSION)
# the comparator Hudi 0.14/0.15 (through HBase) names in its metadata-table HFiles (HoodieHBaseKVComparator)
HUDI_COMPARATOR = "org.apache.hudi.io.storage.HoodieHBaseKVComparator"
_MAGIC = BlockType.TRAILER.value


@dataclass(frozen=True)
class Trailer:
    """The fields of HBase's ``TrailerProto`` this library uses, by their proto names."""

    file_info_offset: int
    load_on_open_data_offset: int
    uncompressed_data_index_size: int
    total_uncompressed_bytes: int
    data_index_count: int
    meta_index_count: int
    entry_count: int
    num_data_index_levels: int
    first_data_block_offset: int  # -1 in a file without cells
    last_data_block_offset: int  # where the last data block starts, as HBase writes it; -1 without cells
    comparator_class_name: str
    compression: Compression
    major_version: int = MAJOR_VERSION
    minor_version: int = MINOR_VERSION

    def encode(self) -> bytes:
        message = b"".join([
            protobuf.varint_field(1, self.file_info_offset),
            protobuf.varint_field(2, self.load_on_open_data_offset),
            protobuf.varint_field(3, self.uncompressed_data_index_size),
            protobuf.varint_field(4, self.total_uncompressed_bytes),
            protobuf.varint_field(5, self.data_index_count),
            protobuf.varint_field(6, self.meta_index_count),
            protobuf.varint_field(7, self.entry_count),
            protobuf.varint_field(8, self.num_data_index_levels),
            protobuf.varint_field(9, self.first_data_block_offset),
            protobuf.varint_field(10, self.last_data_block_offset),
            protobuf.bytes_field(11, self.comparator_class_name.encode()),
            protobuf.varint_field(12, self.compression),
        ])
        head = _MAGIC + protobuf.delimited(message)
        if len(head) > TRAILER_SIZE - 4:
            raise ValueError(f"a trailer of {len(head)} bytes does not fit in {TRAILER_SIZE}")
        version = (self.minor_version & 0xFF) << 24 | (self.major_version & 0xFFFFFF)
        return head + bytes(TRAILER_SIZE - 4 - len(head)) + struct.pack(">I", version)


def parse_trailer(tail: bytes | memoryview, where: str) -> Trailer:
    """The trailer in the last ``TRAILER_SIZE`` bytes of a file."""
    if len(tail) < TRAILER_SIZE:
        raise CorruptFileError(f"{where}: {len(tail)} bytes, too short for an HFile (its trailer alone is "
                               f"{TRAILER_SIZE} bytes)")
    tail = memoryview(tail)[-TRAILER_SIZE:]
    (version,) = struct.unpack_from(">I", tail, TRAILER_SIZE - 4)
    major, minor = version & 0xFFFFFF, version >> 24
    if major != MAJOR_VERSION:
        raise UnsupportedTableError(f"{where} is an HFile of version {major}; Hudi's HFiles are version 3")
    if bytes(tail[:8]) != _MAGIC:
        raise CorruptFileError(f"{where}: no HFile trailer magic {_MAGIC!r} {TRAILER_SIZE} bytes from the end")
    message, _ = protobuf.read_delimited(tail, 8, f"{where} (trailer)")
    values: dict[int, int | bytes] = dict(protobuf.fields(message, f"{where} (trailer)"))
    comparator = values.get(11, b"")
    return Trailer(
        file_info_offset=values.get(1, 0),
        load_on_open_data_offset=values.get(2, 0),
        uncompressed_data_index_size=values.get(3, 0),
        total_uncompressed_bytes=values.get(4, 0),
        data_index_count=values.get(5, 0),
        meta_index_count=values.get(6, 0),
        entry_count=values.get(7, 0),
        num_data_index_levels=values.get(8, 1),
        first_data_block_offset=protobuf.signed64(values.get(9, 0)),
        last_data_block_offset=protobuf.signed64(values.get(10, 0)),
        comparator_class_name=comparator.decode("utf-8", "replace") if isinstance(comparator, bytes) else "",
        compression=codec_of(values.get(12, Compression.NONE), where),
        major_version=major,
        minor_version=minor,
    )
