"""The file info block: ``PBUF`` then a length-delimited ``InfoProto``, a map of byte keys to byte values
(HBase's ``HFileInfo``, kept sorted by key). HBase's own entries describe the cells; Hudi adds the Avro
schema of its records, its bloom filter's type and the min and max record keys
(``HoodieAvroHFileWriter``, ``HoodieAvroHFileReaderImplBase``), the filter itself going into the meta block
``bloomFilter``."""

from __future__ import annotations

import struct
from collections.abc import Mapping

from hoodie_datasource.errors import CorruptFileError, UnsupportedTableError
from hoodie_datasource.hfile import protobuf

PB_MAGIC = b"PBUF"

# HBase's entries; only some carry the reserved "hfile." prefix
LAST_KEY = b"hfile.LASTKEY"
AVG_KEY_LEN = b"hfile.AVG_KEY_LEN"
AVG_VALUE_LEN = b"hfile.AVG_VALUE_LEN"
CREATE_TIME_TS = b"hfile.CREATE_TIME_TS"
MAX_TAGS_LEN = b"hfile.MAX_TAGS_LEN"
KEY_VALUE_VERSION = b"KEY_VALUE_VERSION"
MAX_MEMSTORE_TS_KEY = b"MAX_MEMSTORE_TS_KEY"
DATA_BLOCK_ENCODING = b"DATA_BLOCK_ENCODING"
KEY_VALUE_VERSION_WITH_MVCC = 1

# Hudi's entries and meta block (HoodieAvroHFileReaderImplBase)
SCHEMA = b"schema"
MIN_RECORD_KEY = b"minRecordKey"
MAX_RECORD_KEY = b"maxRecordKey"
BLOOM_FILTER_TYPE_CODE = b"bloomFilterTypeCode"
BLOOM_FILTER_BLOCK = "bloomFilter"


def parse_file_info(data: bytes, where: str) -> dict[bytes, bytes]:
    if data[:4] != PB_MAGIC:
        raise CorruptFileError(f"{where}: the file info block does not start with {PB_MAGIC!r}")
    message, _ = protobuf.read_delimited(data, 4, f"{where} (file info)")
    entries: dict[bytes, bytes] = {}
    for number, pair in protobuf.fields(message, f"{where} (file info)"):
        if number != 1 or not isinstance(pair, bytes):
            continue
        parts = dict(protobuf.fields(pair, f"{where} (file info entry)"))
        entries[bytes(parts.get(1, b""))] = bytes(parts.get(2, b""))
    return entries


def encode_file_info(entries: Mapping[bytes, bytes]) -> bytes:
    pairs = b"".join(protobuf.bytes_field(1, protobuf.bytes_field(1, key) + protobuf.bytes_field(2, value))
                     for key, value in sorted(entries.items()))
    return PB_MAGIC + protobuf.delimited(pairs)


def int_value(value: int) -> bytes:
    return struct.pack(">i", value)


def long_value(value: int) -> bytes:
    return struct.pack(">q", value)


def cell_format(entries: Mapping[bytes, bytes], where: str) -> tuple[bool, bool]:
    """Whether each cell ends with an MVCC timestamp, and whether it carries tags (HBase's
    ``HFileInfo.loadMetaInfo``). Hudi's cells have a timestamp of 0 and no tags."""
    encoding = entries.get(DATA_BLOCK_ENCODING, b"NONE")
    if encoding != b"NONE":
        raise UnsupportedTableError(f"{where}: its cells use the HBase data block encoding {encoding.decode()!r}, "
                                    f"which Hudi never writes; only unencoded HFiles are read")
    version = entries.get(KEY_VALUE_VERSION)
    mvcc = version is not None and len(version) == 4 and struct.unpack(">i", version)[0] == KEY_VALUE_VERSION_WITH_MVCC
    return mvcc, MAX_TAGS_LEN in entries
