"""The key of an HBase ``KeyValue`` cell, as Hudi writes it: a 2-byte row length, the row (Hudi's record
key, UTF-8), then the family length (0), an 8-byte timestamp (``Long.MAX_VALUE``, "latest") and the key type
(4, ``Put``). Hudi compares keys by their row alone (``HFileUtils.compareKeys``); so does this library,
which also reads the short form Hudi 1.x's own writer puts in its index and ``hfile.LASTKEY`` (the row
length and row only)."""

from __future__ import annotations

import struct

from hoodie_datasource.errors import CorruptFileError

ROW_LENGTH_SIZE = 2
KEY_SUFFIX = b"\x00" + struct.pack(">q", (1 << 63) - 1) + b"\x04"  # family length, timestamp, type Put
KEY_OVERHEAD = ROW_LENGTH_SIZE + len(KEY_SUFFIX)  # 12: a key's length is its row's plus this
MAX_ROW_LENGTH = (1 << 15) - 1  # a Java short, as HBase's KeyValue refuses longer rows


def full_key(row: bytes) -> bytes:
    return struct.pack(">H", len(row)) + row + KEY_SUFFIX


def row_of(key: bytes, where: str) -> bytes:
    if len(key) < ROW_LENGTH_SIZE:
        raise CorruptFileError(f"{where}: a key of {len(key)} bytes has no row length")
    (length,) = struct.unpack_from(">H", key)
    if ROW_LENGTH_SIZE + length > len(key):
        raise CorruptFileError(f"{where}: a key of {len(key)} bytes says its row has {length}")
    return key[ROW_LENGTH_SIZE:ROW_LENGTH_SIZE + length]
