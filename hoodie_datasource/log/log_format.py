"""Framing of Hudi merge-on-read log files (``.<fileId>_<instant>.log.<version>_<writeToken>``).

A log file is a plain concatenation of blocks; every integer is big-endian::

    magic          6 bytes  "#HUDI#"
    blockLength    int64    bytes that follow this field, up to and including totalLength
    formatVersion  int32    1 (the only version with a type, header, footer and totalLength)
    blockType      int32    BlockType
    header         int32 count, then count x (int32 key ordinal, int32 length, UTF-8 value)
    contentLength  int64
    content        contentLength bytes (meaning depends on the block type: see data_block, delete_block, command_block)
    footer         same encoding as the header (Hudi always writes an empty one)
    totalLength    int64    bytes from the magic through the footer: a pointer back to the magic

This module only frames blocks; the ``data_block``, ``delete_block`` and ``command_block`` modules interpret the contents.

A block that does not frame exactly (a writer died mid-append, a length field is damaged, the
trailing ``totalLength`` is missing or wrong) is skipped with a warning and scanning resumes at the
next magic after the bad block's start, as Hudi's reader does, so the rest of the file stays
readable. A block that frames correctly but uses a format version or block type this library does
not know raises :class:`UnsupportedTableError` instead: it is not damage, and skipping it would
silently lose records.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import IntEnum

from hoodie_datasource.errors import CorruptFileError, UnsupportedTableError
from hoodie_datasource.storage.storage import POOL, Storage

logger = logging.getLogger(__name__)

MAGIC = b"#HUDI#"
LOG_FORMAT_VERSION = 1

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_PREFIX = struct.Struct(">6sqii")  # magic, blockLength, formatVersion, blockType
_MAX_MAP_ENTRIES = 1 << 16  # far above the 9 header keys Hudi defines; guards against garbage counts


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
    """One framed block. ``header``/``footer`` keep the on-disk entry order (Java writes them from a
    HashMap, so the order varies between files) and an ordinal this library does not know stays a
    plain ``int`` key, so ``encode_block`` reproduces the block byte for byte. ``offset`` is where
    the magic starts in the file and ``size`` the block's length including magic and totalLength."""

    block_type: BlockType
    header: dict[HeaderKey, str]
    footer: dict[HeaderKey, str]
    content: bytes
    offset: int
    size: int
    path: str = field(default="", compare=False, repr=False)

    @property
    def instant_time(self) -> str | None:
        return self.header.get(HeaderKey.INSTANT_TIME)

    @property
    def target_instant_time(self) -> str | None:
        return self.header.get(HeaderKey.TARGET_INSTANT_TIME)

    @property
    def schema(self) -> str | None:
        """The Avro writer schema (JSON text) of a data or delete block, if the header has one."""
        return self.header.get(HeaderKey.SCHEMA)

    @property
    def where(self) -> str:
        """``<path> at offset <n>``, for error messages."""
        return f"{self.path or '<log block>'} at offset {self.offset}"


@dataclass
class LogFileContents:
    """The readable blocks of a log file and how many damaged regions were skipped."""

    blocks: list[LogBlock] = field(default_factory=list)
    corrupt_blocks: int = 0
    corrupt_ranges: list[tuple[int, int]] = field(default_factory=list)  # (start, end) byte offsets


# --------------------------------------------------------------------------------------------------
# writing


def _encode_map(entries: dict) -> bytes:
    parts = [_I32.pack(len(entries))]
    for key, value in entries.items():
        raw = value.encode("utf-8") if isinstance(value, str) else bytes(value)
        parts.append(struct.pack(">ii", int(key), len(raw)))
        parts.append(raw)
    return b"".join(parts)


def encode_block(block_type: BlockType, header: dict, content: bytes, footer: dict | None = None) -> bytes:
    """One complete block: magic through the trailing totalLength. Header entries are written in
    the dict's order."""
    head = _encode_map(header)
    foot = _encode_map(footer or {})
    content = bytes(content)
    # blockLength counts version, type, header, contentLength, content, footer and totalLength.
    block_length = 4 + 4 + len(head) + 8 + len(content) + len(foot) + 8
    total_length = len(MAGIC) + 8 + block_length - 8
    return b"".join((
        MAGIC, _I64.pack(block_length), _I32.pack(LOG_FORMAT_VERSION), _I32.pack(int(block_type)),
        head, _I64.pack(len(content)), content, foot, _I64.pack(total_length),
    ))


def encode_log_file_content(encoded_blocks: list[bytes]) -> bytes:
    """A log file version's bytes: its encoded blocks one after the other (a new version is written whole)."""
    return b"".join(encoded_blocks)


def write_log_file(storage: Storage, rel: str, encoded_blocks: list[bytes]) -> int:
    """Write a NEW log file version holding the already encoded blocks and return its size.

    Writers never append to an existing log file (object stores cannot): each write is a new
    version, created whole and only if absent (``CommitConflictError`` if another writer took it)."""
    payload = encode_log_file_content(encoded_blocks)
    storage.create_once(rel, payload)
    return len(payload)


# --------------------------------------------------------------------------------------------------
# reading


class _BadFraming(Exception):
    """The bytes at an offset are not one well-formed block; the message says why."""


def _decode_map(data, pos: int, limit: int) -> tuple[dict, int]:
    if pos + 4 > limit:
        raise _BadFraming("header/footer entry count runs past the block")
    (count,) = _I32.unpack_from(data, pos)
    pos += 4
    if count < 0 or count > _MAX_MAP_ENTRIES:
        raise _BadFraming(f"implausible header/footer entry count {count}")
    entries: dict = {}
    for _ in range(count):
        if pos + 8 > limit:
            raise _BadFraming("header/footer entry runs past the block")
        key, length = struct.unpack_from(">ii", data, pos)
        pos += 8
        if length < 0 or pos + length > limit:
            raise _BadFraming(f"header/footer value length {length} runs past the block")
        try:
            value = bytes(data[pos:pos + length]).decode("utf-8")
        except UnicodeDecodeError:
            raise _BadFraming("header/footer value is not UTF-8") from None
        pos += length
        try:
            entries[HeaderKey(key)] = value
        except ValueError:
            entries[key] = value  # a key newer than this library: kept so re-encoding is exact
    return entries, pos


def _frame(data, offset: int, size: int, path: str) -> LogBlock:
    """Parse the block whose magic is at ``offset``; every length must agree exactly."""
    if offset + _PREFIX.size > size:
        raise _BadFraming(f"only {size - offset} bytes left, too few for a block")
    magic, block_length, version, type_code = _PREFIX.unpack_from(data, offset)
    if magic != MAGIC:
        raise _BadFraming("no magic")
    end = offset + len(MAGIC) + 8 + block_length
    if block_length < 4 + 4 + 4 + 8 + 4 + 8:
        raise _BadFraming(f"block length {block_length} is too small")
    if end > size:
        raise _BadFraming(f"block length {block_length} runs {end - size} bytes past the end of the file")
    (total_length,) = _I64.unpack_from(data, end - 8)
    if total_length != end - 8 - offset:
        raise _BadFraming(f"trailing total length {total_length} does not match block length {block_length}")
    limit = end - 8
    header, pos = _decode_map(data, offset + _PREFIX.size, limit)
    if pos + 8 > limit:
        raise _BadFraming("content length runs past the block")
    (content_length,) = _I64.unpack_from(data, pos)
    pos += 8
    if content_length < 0 or pos + content_length > limit:
        raise _BadFraming(f"content length {content_length} runs past the block")
    content = bytes(data[pos:pos + content_length])
    footer, pos = _decode_map(data, pos + content_length, limit)
    if pos != limit:
        raise _BadFraming(f"{limit - pos} unexplained bytes after the footer")
    # The block frames exactly: from here on a problem is not damage but something unsupported.
    if version != LOG_FORMAT_VERSION:
        raise UnsupportedTableError(
            f"Log file {path}: block at offset {offset} has log format version {version}; "
            f"only version {LOG_FORMAT_VERSION} is supported")
    try:
        block_type = BlockType(type_code)
    except ValueError:
        raise UnsupportedTableError(
            f"Log file {path}: block at offset {offset} has unknown block type {type_code}; "
            f"known types: {', '.join(f'{t.value} {t.name}' for t in BlockType)}") from None
    return LogBlock(block_type, header, footer, content, offset, end - offset, path)


class _Scanner:
    """Iterates the blocks of one buffer, counting the damaged regions it skips."""

    def __init__(self, data, path: str):
        self.data = data
        self.path = path
        self.corrupt_blocks = 0
        self.corrupt_ranges: list[tuple[int, int]] = []

    def __iter__(self) -> Iterator[LogBlock]:
        data, size, offset = self.data, len(self.data), 0
        while offset < size:
            try:
                block = _frame(data, offset, size, self.path)
            except _BadFraming as exc:
                resume = _find_magic(data, offset + 1)
                stop = size if resume < 0 else resume
                self.corrupt_blocks += 1
                self.corrupt_ranges.append((offset, stop))
                logger.warning("Corrupt log block in %s at offset %d (%s); skipping %d bytes%s", self.path,
                               offset, exc, stop - offset,
                               "" if resume < 0 else f", resuming at the next block at offset {resume}")
                offset = stop
                continue
            yield block
            offset += block.size


def _find_magic(data, start: int) -> int:
    """The offset of the next magic at or after ``start`` (-1 if none), searching a chunk at a time:
    ``data`` may be a memory-mapped Arrow buffer, which has no ``find`` of its own."""
    size, step = len(data), 1 << 20
    for pos in range(start, size, step):
        hit = bytes(data[pos:pos + step + len(MAGIC) - 1]).find(MAGIC)
        if hit >= 0:
            return pos + hit
    return -1


def read_log_blocks(storage: Storage, rel: str) -> Iterator[LogBlock]:
    """The well-formed blocks of the log file ``rel``, in file order; damaged regions are
    skipped with a warning (use :func:`read_log_file` to learn how many)."""
    yield from _scan_file(storage, rel, None)


def read_log_file(storage: Storage, rel: str) -> LogFileContents:
    """Every well-formed block of the log file ``rel`` plus the count of skipped regions."""
    contents = LogFileContents()
    contents.blocks = list(_scan_file(storage, rel, contents))
    return contents


def read_log_bytes(data: bytes, path: str = "<memory>") -> LogFileContents:
    """Like :func:`read_log_file` for a log file (or encoded blocks) already in memory."""
    scanner = _Scanner(data, path)
    blocks = list(scanner)
    return LogFileContents(blocks, scanner.corrupt_blocks, scanner.corrupt_ranges)


def read_logs_blocks(storage: Storage, rels: Sequence[str]) -> Iterator[Iterator[LogBlock]]:
    """``read_log_blocks`` of each of ``rels`` in turn, their contents fetched together: on an object store the
    GETs are in flight at once (one round trip's latency for all of a metadata-table slice's log files, not one
    each). Every file is held in memory until its blocks are read: for small log files."""
    fetched = [POOL.submit(_log_buffer, storage, rel) for rel in rels] if len(rels) > 1 else []
    for i, rel in enumerate(rels):
        yield _scan(fetched[i].result() if fetched else _log_buffer(storage, rel), storage.uri_of(rel), None)


def _log_buffer(storage: Storage, rel: str):
    try:
        # locally a memory map: a log file may be up to ~1 GB and only one block at a time is copied
        return storage.read_buffer(rel)
    except FileNotFoundError:
        raise CorruptFileError(f"Log file {storage.uri_of(rel)} does not exist") from None


def _scan_file(storage: Storage, rel: str, report: LogFileContents | None) -> Iterator[LogBlock]:
    yield from _scan(_log_buffer(storage, rel), storage.uri_of(rel), report)


def _scan(data, path: str, report: LogFileContents | None) -> Iterator[LogBlock]:
    if len(data) == 0:
        return
    scanner = _Scanner(data, path)
    try:
        yield from scanner
    finally:
        if report is not None:
            report.corrupt_blocks = scanner.corrupt_blocks
            report.corrupt_ranges = scanner.corrupt_ranges
