"""Hudi log files: a sequence of blocks, each framed as (all integers big-endian)::

    "#HUDI#" | int64 blockLength | int32 formatVersion (1) | int32 blockType
    | header: int32 n, n x (int32 key, int32 len, UTF-8) | int64 contentLength | content
    | footer (same encoding) | int64 totalLength (bytes from the magic through the footer)

``blockLength`` counts the bytes after itself through ``totalLength``. A block that does not
frame correctly (a writer died mid-append) is skipped with a warning and scanning resumes at the
next magic, as Hudi's reader does; the rest of the file stays readable.
"""

from __future__ import annotations

import logging
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import IntEnum

logger = logging.getLogger(__name__)

MAGIC = b"#HUDI#"
FORMAT_VERSION = 1


class BlockType(IntEnum):
    COMMAND = 0
    DELETE = 1
    CORRUPT = 2
    AVRO_DATA = 3
    HFILE_DATA = 4
    PARQUET_DATA = 5
    CDC_DATA = 6


class HeaderKey(IntEnum):
    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    IS_PARTIAL = 7
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8


@dataclass(frozen=True)
class LogBlock:
    block_type: BlockType
    header: dict[HeaderKey, str]
    footer: dict[HeaderKey, str]
    content: bytes
    offset: int
    size: int

    @property
    def instant_time(self) -> str | None:
        return self.header.get(HeaderKey.INSTANT_TIME)

    @property
    def target_instant_time(self) -> str | None:
        return self.header.get(HeaderKey.TARGET_INSTANT_TIME)


@dataclass
class LogFileContents:
    blocks: list[LogBlock] = field(default_factory=list)
    corrupt_blocks: int = 0


def _encode_map(values: dict) -> bytes:
    out = [struct.pack(">i", len(values))]
    for key, value in values.items():
        raw = value.encode("utf-8")
        out.append(struct.pack(">ii", int(key), len(raw)))
        out.append(raw)
    return b"".join(out)


def encode_block(block_type: BlockType, header: dict, content: bytes, footer: dict | None = None) -> bytes:
    head = _encode_map(header)
    foot = _encode_map(footer or {})
    body = struct.pack(">ii", FORMAT_VERSION, int(block_type)) + head + struct.pack(">q", len(content)) + content + foot
    total = len(MAGIC) + 8 + len(body)
    return MAGIC + struct.pack(">q", len(body) + 8) + body + struct.pack(">q", total)


class _Corrupt(Exception):
    pass


def _decode_map(data: bytes, pos: int, end: int) -> tuple[dict, int]:
    if pos + 4 > end:
        raise _Corrupt("map count past block end")
    (count,) = struct.unpack_from(">i", data, pos)
    pos += 4
    if count < 0 or count > 1024:
        raise _Corrupt(f"bad map size {count}")
    values = {}
    for _ in range(count):
        if pos + 8 > end:
            raise _Corrupt("map entry past block end")
        key, length = struct.unpack_from(">ii", data, pos)
        pos += 8
        if length < 0 or pos + length > end:
            raise _Corrupt("map value past block end")
        try:
            name = HeaderKey(key)
        except ValueError:
            name = key
        values[name] = data[pos:pos + length].decode("utf-8")
        pos += length
    return values, pos


def _parse_block(data: bytes, offset: int) -> LogBlock:
    size = len(data)
    if offset + 14 > size:
        raise _Corrupt("truncated block header")
    (block_length,) = struct.unpack_from(">q", data, offset + 6)
    end = offset + 14 + block_length
    if block_length < 16 or end > size:
        raise _Corrupt(f"block length {block_length} runs past the end of the file")
    version, type_code = struct.unpack_from(">ii", data, offset + 14)
    if version != FORMAT_VERSION:
        raise _Corrupt(f"unsupported log format version {version}")
    try:
        block_type = BlockType(type_code)
    except ValueError:
        raise _Corrupt(f"unknown block type {type_code}") from None
    header, pos = _decode_map(data, offset + 22, end - 8)
    if pos + 8 > end - 8:
        raise _Corrupt("content length past block end")
    (content_length,) = struct.unpack_from(">q", data, pos)
    pos += 8
    if content_length < 0 or pos + content_length > end - 8:
        raise _Corrupt("content past block end")
    content = data[pos:pos + content_length]
    footer, pos = _decode_map(data, pos + content_length, end - 8)
    (total,) = struct.unpack_from(">q", data, end - 8)
    if pos != end - 8 or total != end - 8 - offset:
        raise _Corrupt("trailing block length does not match")
    return LogBlock(block_type, header, footer, content, offset, end - offset)


def read_log_file(path: str) -> LogFileContents:
    with open(path, "rb") as handle:
        data = handle.read()
    contents = LogFileContents()
    offset = 0
    while offset < len(data):
        if data[offset:offset + 6] != MAGIC:
            nxt = data.find(MAGIC, offset + 1)
            logger.warning("No log block magic at %s offset %d; skipping %d bytes", path, offset,
                           (nxt if nxt >= 0 else len(data)) - offset)
            contents.corrupt_blocks += 1
            if nxt < 0:
                break
            offset = nxt
            continue
        try:
            block = _parse_block(data, offset)
        except _Corrupt as exc:
            nxt = data.find(MAGIC, offset + 1)
            logger.warning("Corrupt log block in %s at offset %d (%s); skipping it", path, offset, exc)
            contents.corrupt_blocks += 1
            if nxt < 0:
                break
            offset = nxt
            continue
        contents.blocks.append(block)
        offset += block.size
    return contents


def read_log_blocks(path: str) -> Iterator[LogBlock]:
    yield from read_log_file(path).blocks


def append_blocks(path: str, encoded_blocks: list[bytes]) -> int:
    with open(path, "ab") as handle:
        for block in encoded_blocks:
            handle.write(block)
        handle.flush()
        os.fsync(handle.fileno())
        return handle.tell()
