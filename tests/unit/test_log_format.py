"""MOR log files: framing and block contents against files Apache Hudi wrote, corruption handling,
and round trips of our own writer (including the vectorised Avro codec against fastavro)."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import io
import json
import logging
import random
import struct
import zipfile
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest

from benchmarks.avro_blocks import records as avro_block_records
from hoodie_datasource.errors import CommitConflictError, CorruptFileError, SchemaMismatchError, UnsupportedTableError
from hoodie_datasource.log.avro_codec import decode_avro_records, encode_avro_records
from hoodie_datasource.log.command_block import decode_command_block, encode_rollback_command_block
from hoodie_datasource.log.data_block import decode_data_block, encode_avro_data_block, encode_parquet_data_block
from hoodie_datasource.log.delete_block import (
    decode_delete_block,
    decode_delete_records,
    encode_delete_block,
    encode_delete_content,
)
from hoodie_datasource.log.log_format import (
    MAGIC,
    BlockType,
    HeaderKey,
    LogBlock,
    LogFileContents,
    encode_block,
    read_log_blocks,
    read_log_bytes,
    read_log_file,
    write_log_file,
)
from hoodie_datasource.schema.avro_schema import arrow_to_avro_schema, avro_to_arrow_schema, with_meta_fields
from hoodie_datasource.storage.local import LocalStorage
from tests.conftest import SHARED_TABLES, require_shared

SHARED = SHARED_TABLES
FIXTURES = SHARED / "core_fixtures" / "log_files"
needs_shared = pytest.mark.usefixtures("shared_tables")

INSTANT = "20250101000000000"


def _read(path: Path) -> LogFileContents:
    """``read_log_file`` of a log file anywhere on disk (its directory as the storage)."""
    return read_log_file(LocalStorage(str(path.parent)), path.name)


def _stream(path: Path) -> list[LogBlock]:
    return list(read_log_blocks(LocalStorage(str(path.parent)), path.name))


def _append_raw(path: Path, data: bytes) -> None:
    """Append bytes the way a log file on HDFS grows (Hudi's writers append there); ours never do."""
    with open(path, "ab") as handle:
        handle.write(data)


def _fixture(name: str) -> Path:
    [path] = (FIXTURES / name).glob(".*.log.*")
    return path


@pytest.fixture(scope="module")
def real_logs(tmp_path_factory) -> dict[str, list[Path]]:
    """Log files Hudi wrote: the four fixtures plus every log file inside the MOR test tables, split
    into data-table logs and metadata-table logs (HFILE and DELETE blocks)."""
    require_shared(FIXTURES)
    data = sorted(FIXTURES.glob("*/.*.log.*"))
    metadata: list[Path] = []
    root = tmp_path_factory.mktemp("mor_tables")
    for archive_path in sorted(SHARED.glob("*/mor/**/*.zip")):
        dest = root / archive_path.parent.name / archive_path.stem
        with zipfile.ZipFile(archive_path) as archive:
            archive.extractall(dest, [m for m in archive.namelist() if not m.startswith("__MACOSX")])
        for log in sorted(dest.rglob(".*.log.*")):
            (metadata if "/.hoodie/" in log.as_posix() else data).append(log)
    return {"data": data, "metadata": metadata}


# ---------------------------------------------------------------------------------------------
# framing against real files


@needs_shared
def test_every_real_log_file_frames_strictly_and_reencodes_byte_for_byte(real_logs):
    counts: dict[BlockType, int] = {}
    files = real_logs["data"] + real_logs["metadata"]
    assert len(real_logs["data"]) >= 30 and len(real_logs["metadata"]) >= 100
    for path in files:
        raw = path.read_bytes()
        contents = _read(path)
        assert contents.corrupt_blocks == 0, path
        assert contents.blocks, path
        assert b"".join(encode_block(b.block_type, b.header, b.content, b.footer) for b in contents.blocks) == raw
        offset = 0
        for block in contents.blocks:
            assert (block.offset, block.path) == (offset, str(path))
            assert block.footer == {}
            assert block.instant_time and block.instant_time.isdigit()
            offset += block.size
            counts[block.block_type] = counts.get(block.block_type, 0) + 1
        assert _stream(path) == contents.blocks
    assert set(counts) == {BlockType.AVRO_DATA, BlockType.PARQUET_DATA, BlockType.DELETE, BlockType.COMMAND,
                           BlockType.HFILE_DATA}


@needs_shared
def test_real_avro_contents_reencode_byte_for_byte(real_logs):
    blocks = [b for p in real_logs["data"] for b in _stream(p) if b.block_type == BlockType.AVRO_DATA]
    assert len(blocks) >= 15
    for block in blocks:
        table = decode_data_block(block)
        assert table.schema == avro_to_arrow_schema(block.schema)
        assert encode_avro_records(table, json.loads(block.schema)) == block.content, block.where
        # Given the header's schema text, the whole block comes back when the header order matches
        # (Java writes the header from a HashMap: either INSTANT_TIME or SCHEMA may come first).
        again = encode_avro_data_block(table, block.instant_time, block.schema)
        original = encode_block(block.block_type, block.header, block.content, block.footer)
        if list(block.header) == [HeaderKey.INSTANT_TIME, HeaderKey.SCHEMA]:
            assert again == original
        else:
            assert read_log_bytes(again).blocks[0].content == block.content


@needs_shared
def test_real_delete_contents_reencode_byte_for_byte(real_logs):
    blocks = [b for p in real_logs["data"] + real_logs["metadata"] for b in _stream(p)
              if b.block_type == BlockType.DELETE]
    assert len(blocks) >= 100
    for block in blocks:
        deleted = decode_delete_block(block)
        assert set(deleted.column("ordering_value").to_pylist()) <= {"0"}  # SQL DELETE writes IntWrapper{0}
        again = encode_delete_content(deleted.column("_hoodie_record_key"), deleted.column("_hoodie_partition_path"))
        assert again == block.content, block.where


@needs_shared
def test_avro_data_fixture_values():
    path = _fixture("valid_log_avro_data")
    [block] = _read(path).blocks
    assert block.block_type == BlockType.AVRO_DATA and block.instant_time == "20250316025828811"
    table = decode_data_block(block)
    assert table.num_rows == 1
    assert table.schema.names == ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                                  "_hoodie_partition_path", "_hoodie_file_name", "ts", "uuid", "rider", "driver",
                                  "fare", "city"]
    [row] = table.to_pylist()
    assert row["_hoodie_commit_time"] == block.instant_time
    assert row["_hoodie_commit_seqno"] == "20250316025828811_0_2"
    assert row["_hoodie_record_key"] == row["uuid"] == "334e26e9-8355-45cc-97c6-c31daf0df330"
    assert row["_hoodie_partition_path"] == "city=san_francisco"
    assert row["_hoodie_file_name"] == path.name[1:].split("_")[0]  # log records carry the file id only
    assert (row["ts"], row["rider"], row["driver"], row["fare"], row["city"]) == \
        (1695159649088, "rider-A", "driver-K", 29.1, "san_francisco")


@needs_shared
def test_delete_fixture_decodes_and_reencodes():
    path = _fixture("valid_log_delete")
    raw = path.read_bytes()
    [block] = _read(path).blocks
    assert block.block_type == BlockType.DELETE and block.instant_time == "20250618054714114"
    deleted = decode_delete_block(block)
    assert deleted.schema == pa.schema([("_hoodie_record_key", pa.string()), ("_hoodie_partition_path", pa.string()),
                                        ("ordering_value", pa.string())])
    assert deleted.column("_hoodie_record_key").to_pylist() == [
        "e96c4396-3fad-413a-a942-4cb36106d721", "9909a8b1-2d15-4d3d-8ec9-efc48c536a00",
        "334e26e9-8355-45cc-97c6-c31daf0df330"]
    assert set(deleted.column("_hoodie_partition_path").to_pylist()) == {"city=san_francisco"}
    assert {(r.ordering_value, r.ordering_type) for r in decode_delete_records(block)} == {(0, "IntWrapper")}
    again = encode_delete_block(deleted.column(0), deleted.column(1), block.instant_time, avro_schema=block.schema)
    [ours] = read_log_bytes(again).blocks
    assert ours.content == block.content
    assert ours.header == block.header  # same entries; this file happens to have SCHEMA first
    assert encode_block(BlockType.DELETE, block.header, ours.content) == raw


@needs_shared
def test_rollback_fixture_decodes_and_reencodes():
    path = _fixture("valid_log_rollback")
    raw = path.read_bytes()
    [block] = _read(path).blocks
    assert (block.block_type, block.size, block.content) == (BlockType.COMMAND, 105, b"")
    command = decode_command_block(block)
    assert command.target_instant_time == block.target_instant_time == "20250126040826878"
    assert command.instant_time == "20250126040936578"
    assert encode_rollback_command_block(command.instant_time, command.target_instant_time) == raw


@needs_shared
def test_parquet_data_fixture_decodes():
    [block] = _read(_fixture("valid_log_parquet_data")).blocks
    assert block.block_type == BlockType.PARQUET_DATA and block.content[:4] == block.content[-4:] == b"PAR1"
    table = decode_data_block(block)
    assert table.num_rows == 1
    assert table.column("_hoodie_commit_time").to_pylist() == [block.instant_time]
    assert table.column("rider").to_pylist() == ["rider-A"] and table.column("fare").to_pylist() == [29.1]
    assert table.schema.names == avro_to_arrow_schema(block.schema).names


@needs_shared
def test_metadata_table_hfile_blocks_are_reported_unsupported(real_logs):
    block = next(b for p in real_logs["metadata"] for b in _stream(p) if b.block_type == BlockType.HFILE_DATA)
    with pytest.raises(UnsupportedTableError, match="HFILE"):
        decode_data_block(block)


# ---------------------------------------------------------------------------------------------
# corruption


def _three_blocks() -> list[bytes]:
    schema = with_meta_fields(arrow_to_avro_schema(pa.schema([("v", pa.int64())]), "t_record", "hoodie.t"))
    table = pa.table({"_hoodie_record_key": ["a", "b"], "v": [1, 2]})
    return [encode_avro_data_block(table, "1", schema),
            encode_parquet_data_block(table, "2", schema),
            encode_delete_block(pa.array(["a"]), pa.array([""]), "3")]


def _content_length_at(block: bytes) -> int:
    (count,) = struct.unpack_from(">i", block, 22)
    pos = 26
    for _ in range(count):
        _, length = struct.unpack_from(">ii", block, pos)
        pos += 8 + length
    return pos


def _set(block: bytes, at: int, fmt: str, value: int) -> bytes:
    out = bytearray(block)
    struct.pack_into(fmt, out, at, value)
    return bytes(out)


MUTATIONS = {
    "block length past EOF": lambda b: _set(b, 6, ">q", 1 << 40),
    "block length too short": lambda b: _set(b, 6, ">q", 100),
    "block length off by one": lambda b: _set(b, 6, ">q", len(b) - 14 + 1),
    "negative block length": lambda b: _set(b, 6, ">q", -5),
    "wrong trailing total length": lambda b: _set(b, len(b) - 8, ">q", len(b)),
    "missing trailing total length": lambda b: b[:-8],
    "content length too long": lambda b: _set(b, _content_length_at(b), ">q", len(b)),
    "content length too short": lambda b: _set(b, _content_length_at(b), ">q", 3),
    "garbage header count": lambda b: _set(b, 22, ">i", 1 << 30),
    "header value length past block": lambda b: _set(b, 30, ">i", 1 << 20),
    "damaged magic": lambda b: b"#HUDX#" + b[6:],
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_a_damaged_middle_block_is_skipped_and_the_rest_read(tmp_path, caplog, mutation):
    first, middle, last = _three_blocks()
    bad = MUTATIONS[mutation](middle)
    path = tmp_path / ".f1-0_1.log.1_0-1-0"
    path.write_bytes(first + bad + last)
    with caplog.at_level(logging.WARNING, logger="hoodie_datasource.log.log_format"):
        contents = _read(path)
        streamed = _stream(path)
    assert [b.instant_time for b in contents.blocks] == [b.instant_time for b in streamed] == ["1", "3"]
    assert contents.corrupt_blocks == 1
    assert contents.corrupt_ranges == [(len(first), len(first) + len(bad))]
    assert contents.blocks[1].offset == len(first) + len(bad)
    assert decode_data_block(contents.blocks[0]).column("v").to_pylist() == [1, 2]
    assert decode_delete_block(contents.blocks[1]).column("_hoodie_record_key").to_pylist() == ["a"]
    assert f"Corrupt log block in {path} at offset {len(first)}" in caplog.text


@needs_shared
def test_a_truncated_append_to_a_real_log_file_is_skipped(tmp_path, caplog):
    original = _fixture("valid_log_avro_data").read_bytes()
    path = tmp_path / ".f1-0_1.log.1_0-1-0"
    _, _, good = _three_blocks()
    path.write_bytes(original)
    _append_raw(path, original[:len(original) // 2])  # a writer died mid-append
    with caplog.at_level(logging.WARNING):
        contents = _read(path)
    assert [b.offset for b in contents.blocks] == [0] and contents.corrupt_blocks == 1
    assert decode_data_block(contents.blocks[0]).column("rider").to_pylist() == ["rider-A"]
    assert f"Corrupt log block in {path} at offset {len(original)}" in caplog.text
    # a later writer appends after the damage: its block is found at the next magic
    _append_raw(path, good)
    contents = _read(path)
    assert [b.block_type for b in contents.blocks] == [BlockType.AVRO_DATA, BlockType.DELETE]
    assert contents.corrupt_blocks == 1 and contents.blocks[1].offset == len(original) + len(original) // 2


def test_a_magic_inside_damaged_content_does_not_derail_the_scan(tmp_path, caplog):
    schema = with_meta_fields(arrow_to_avro_schema(pa.schema([("s", pa.string())]), "t_record", "hoodie.t"))
    tricky = encode_avro_data_block(pa.table({"s": ["xx" + MAGIC.decode() + "yy"]}), "1", schema)
    _, _, last = _three_blocks()
    path = tmp_path / ".f1-0_1.log.1_0-1-0"
    path.write_bytes(_set(tricky, 6, ">q", 1 << 40) + last)
    with caplog.at_level(logging.WARNING):
        contents = _read(path)
    assert [b.instant_time for b in contents.blocks] == ["3"]
    assert contents.corrupt_blocks == 2  # the block, then the false start at the magic in its string


def test_leading_garbage_and_trailing_partial_magic(tmp_path, caplog):
    blocks = _three_blocks()
    path = tmp_path / ".f1-0_1.log.1_0-1-0"
    path.write_bytes(b"junk" + b"".join(blocks) + b"#HU")
    with caplog.at_level(logging.WARNING):
        contents = _read(path)
    assert [b.instant_time for b in contents.blocks] == ["1", "2", "3"]
    assert contents.corrupt_ranges == [(0, 4), (path.stat().st_size - 3, path.stat().st_size)]


def test_empty_and_missing_files(tmp_path):
    empty = tmp_path / ".f1-0_1.log.1_0-1-0"
    empty.write_bytes(b"")
    assert _read(empty).blocks == []
    with pytest.raises(CorruptFileError, match="does not exist"):
        _read(tmp_path / "missing")


@pytest.mark.parametrize("at,value,message", [(14, 2, "log format version 2"), (18, 42, "unknown block type 42")])
def test_well_framed_but_unknown_blocks_raise(tmp_path, at, value, message):
    first, _, _ = _three_blocks()
    path = tmp_path / ".f1-0_1.log.1_0-1-0"
    path.write_bytes(first + _set(first, at, ">i", value))
    with pytest.raises(UnsupportedTableError, match=f"{path}: block at offset {len(first)} has {message}"):
        _read(path)


def test_damaged_avro_content_raises_naming_file_and_offset(tmp_path):
    first, _, _ = _three_blocks()
    path = tmp_path / ".f1-0_1.log.1_0-1-0"
    path.write_bytes(first + first)
    block = _read(path).blocks[1]
    content = block.content
    (length,) = struct.unpack_from(">i", content, 8)
    cases = {
        "runs past the content": _set(content, 8, ">i", length + 1000),
        "bytes left after 2 records": content + b"\x00",
        "datum is": content[:8] + struct.pack(">i", length + 1) + content[12:12 + length] + b"\x00"
        + content[12 + length:],
        "content version 7": _set(content, 0, ">i", 7),
    }
    for message, damaged in cases.items():
        with pytest.raises((CorruptFileError, UnsupportedTableError), match=message) as info:
            decode_data_block(dataclasses.replace(block, content=damaged))
        assert f"{path} at offset {block.offset}" in str(info.value)


def test_damaged_delete_content_raises(tmp_path):
    block = read_log_bytes(encode_delete_block(pa.array(["a", "b"]), pa.array(["p", "p"]), "1"), "x.log").blocks[0]
    with pytest.raises(CorruptFileError, match="x.log at offset 0"):
        decode_delete_block(dataclasses.replace(block, content=block.content[:-3]))
    with pytest.raises(UnsupportedTableError, match="content version 2"):
        decode_delete_block(dataclasses.replace(block, content=_set(block.content, 0, ">i", 2)))


# ---------------------------------------------------------------------------------------------
# our writer: round trips

DATA_SCHEMA = pa.schema([
    pa.field("i", pa.int32()), pa.field("l", pa.int64()), pa.field("d", pa.float64()), pa.field("f", pa.float32()),
    pa.field("s", pa.string()), pa.field("b", pa.bool_()), pa.field("day", pa.date32()),
    pa.field("ts", pa.timestamp("us", "UTC")), pa.field("local_ts", pa.timestamp("us")),
    pa.field("ms", pa.timestamp("ms", "UTC")), pa.field("amount", pa.decimal128(10, 2)),
    pa.field("big", pa.decimal128(38, 6)), pa.field("raw", pa.binary()),
    pa.field("point", pa.struct([pa.field("x", pa.float64()), pa.field("tag", pa.string())])),
    pa.field("tags", pa.list_(pa.field("element", pa.string(), True))),
    pa.field("attrs", pa.map_(pa.string(), pa.field("value", pa.int64(), True))),
    pa.field("required_id", pa.int64(), nullable=False),
])
UTC = datetime.timezone.utc


def _round_trip_table() -> pa.Table:
    rows = 5
    columns = {
        "_hoodie_commit_time": [INSTANT] * rows,
        "_hoodie_commit_seqno": [f"{INSTANT}_0_{i}" for i in range(rows)],
        "_hoodie_record_key": [f"k{i}" for i in range(rows)],
        "_hoodie_partition_path": ["p=1", "p=1", "", "p=2", None],
        "_hoodie_file_name": ["f1-0"] * rows,
        "i": [1, None, -(1 << 31), (1 << 31) - 1, 0],
        "l": [1, (1 << 63) - 1, None, -(1 << 63), -1],
        "d": [0.5, None, -1e300, float("inf"), 0.0],
        "f": [1.5, -2.25, None, 3.0e38, 0.0],
        "s": ["x", None, "", "héllo ✓ 🚀", "a" * 300],
        "b": [True, False, None, True, False],
        "day": [datetime.date(2024, 1, 2), None, datetime.date(1970, 1, 1), datetime.date(1900, 3, 4),
                datetime.date(9999, 12, 31)],
        "ts": [datetime.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=UTC), None,
               datetime.datetime(1960, 1, 1, tzinfo=UTC), datetime.datetime(1970, 1, 1, tzinfo=UTC), None],
        "local_ts": [datetime.datetime(2024, 1, 2, 3, 4, 5, 6), None, None, None, datetime.datetime(2000, 1, 1)],
        "ms": [datetime.datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=UTC), None, None, None, None],
        "amount": [decimal.Decimal("1.50"), None, decimal.Decimal("-2.25"), decimal.Decimal("99999999.99"),
                   decimal.Decimal("-99999999.99")],
        "big": [decimal.Decimal("1" * 32 + ".123456"), decimal.Decimal("-" + "9" * 32 + ".999999"), None,
                decimal.Decimal("0.000001"), decimal.Decimal("-0.000001")],
        "raw": [b"\x00\xff", None, b"", b"#HUDI#", bytes(range(256))],
        "point": [{"x": 1.0, "tag": "a"}, None, {"x": None, "tag": None}, {"x": -0.0, "tag": ""}, None],
        "tags": [["a", None, "b"], None, [], ["ü"], [None]],
        "attrs": [[("a", 1), ("b", None)], None, [], [("z", -(1 << 40))], [("", 0)]],
        "required_id": [10, 11, 12, 13, 14],
    }
    schema = avro_to_arrow_schema(_avro_schema())
    return pa.table({f.name: pa.array(columns[f.name], f.type) for f in schema}, schema=schema)


def _avro_schema() -> dict:
    return with_meta_fields(arrow_to_avro_schema(DATA_SCHEMA, "trips_record", "hoodie.trips"))


@pytest.mark.parametrize("encode", [encode_avro_data_block, encode_parquet_data_block])
def test_our_data_blocks_round_trip_through_a_log_file(tmp_path, encode):
    table = _round_trip_table()
    schema = _avro_schema()
    path = tmp_path / ".f1-0_20250101000000000.log.1_0-1-0"
    size = write_log_file(LocalStorage(str(tmp_path)), path.name, [
        encode(table, INSTANT, schema), encode(table.slice(1, 3), "20250101000000001", schema),
        encode_delete_block(pa.array(["k1"]), pa.array(["p=1"]), "20250101000000002", avro_schema=schema)])
    assert size == path.stat().st_size
    with pytest.raises(CommitConflictError):  # a log file version is written once, never appended to
        write_log_file(LocalStorage(str(tmp_path)), path.name, [encode(table, INSTANT, schema)])
    assert path.stat().st_size == size
    blocks = _stream(path)
    assert [b.instant_time for b in blocks] == [INSTANT, "20250101000000001", "20250101000000002"]
    assert all(json.loads(b.schema) == schema for b in blocks)
    first, second = decode_data_block(blocks[0]), decode_data_block(blocks[1])
    assert first.schema == table.schema
    assert first.equals(table) and second.equals(table.slice(1, 3))
    assert decode_delete_block(blocks[2]).column("_hoodie_record_key").to_pylist() == ["k1"]


@pytest.mark.parametrize("encode", [encode_avro_data_block, encode_parquet_data_block])
def test_data_blocks_conform_looser_input_types(encode):
    schema = with_meta_fields(arrow_to_avro_schema(
        pa.schema([("small", pa.int32()), ("when", pa.timestamp("us", "UTC")), ("cat", pa.string()),
                   ("amount", pa.decimal128(10, 2))]), "t_record", "hoodie.t"))
    given = pa.table({
        "when": pa.array([0, 5000], pa.timestamp("ns", "UTC")),
        "small": pa.array([1, -2], pa.int8()),
        "cat": pa.array(["x", "y"]).dictionary_encode(),
        "amount": pa.array([decimal.Decimal("1.5"), None], pa.decimal128(5, 1)),
        "ignored": [1, 2],
    })
    [block] = read_log_bytes(encode(given, INSTANT, schema)).blocks
    out = decode_data_block(block)
    assert out.schema == avro_to_arrow_schema(schema)
    assert out.column("small").to_pylist() == [1, -2] and out.column("cat").to_pylist() == ["x", "y"]
    assert out.column("amount").to_pylist() == [decimal.Decimal("1.50"), None]
    assert out.column("_hoodie_record_key").null_count == 2
    with pytest.raises(SchemaMismatchError, match="'when'"):
        encode(given.set_column(0, "when", pa.array([1, 1], pa.timestamp("ns", "UTC"))), INSTANT, schema)


def test_non_nullable_fields_reject_nulls():
    schema = arrow_to_avro_schema(pa.schema([pa.field("id", pa.int64(), nullable=False)]), "t", "hoodie.t")
    with pytest.raises(SchemaMismatchError, match="'id'"):
        encode_avro_data_block(pa.table({"id": [1, None]}), INSTANT, schema)
    with pytest.raises(SchemaMismatchError, match="'id'"):
        encode_avro_data_block(pa.table({"other": [1]}), INSTANT, schema)


def test_empty_data_block():
    schema = _avro_schema()
    empty = avro_to_arrow_schema(schema).empty_table()
    [block] = read_log_bytes(encode_avro_data_block(empty, INSTANT, schema)).blocks
    assert block.content == struct.pack(">ii", 3, 0)
    assert decode_data_block(block).equals(empty)


# ---------------------------------------------------------------------------------------------
# the vectorised Avro codec against fastavro, record by record


def _fastavro_shape(avro, value):
    """Arrow's Python values as fastavro writes them (maps as dicts)."""
    if value is None:
        return None
    if isinstance(avro, list):
        return _fastavro_shape(next(b for b in avro if b != "null"), value)
    if isinstance(avro, dict):
        kind = avro["type"]
        if kind == "map":
            return {k: _fastavro_shape(avro["values"], v) for k, v in value}
        if kind == "array":
            return [_fastavro_shape(avro["items"], v) for v in value]
        if kind == "record":
            return {f["name"]: _fastavro_shape(f["type"], value[f["name"]]) for f in avro["fields"]}
    return value


def _fastavro_encode(table: pa.Table, schema: dict) -> bytes:
    parsed = fastavro.parse_schema(schema, named_schemas={})
    parts = [struct.pack(">ii", 3, table.num_rows)]
    for row in table.to_pylist():
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, parsed, _fastavro_shape(schema, row))
        parts += [struct.pack(">i", buffer.tell()), buffer.getvalue()]
    return b"".join(parts)


def _fastavro_decode(content: bytes, schema: dict) -> pa.Table:
    # time-micros stays a plain long (as avro_to_arrow_schema maps it); fastavro would make datetime.time
    plain = json.loads(json.dumps(schema).replace(', "logicalType": "time-micros"', ""))
    parsed = fastavro.parse_schema(plain, named_schemas={})
    stream, rows = io.BytesIO(content), []
    (count,) = struct.unpack_from(">i", content, 4)
    stream.seek(8)
    for _ in range(count):
        (length,) = struct.unpack(">i", stream.read(4))
        start = stream.tell()
        rows.append(fastavro.schemaless_reader(stream, parsed, None))
        assert stream.tell() == start + length
    return pa.Table.from_pylist(rows, schema=avro_to_arrow_schema(schema))


ENUM_SCHEMA = {
    "type": "record", "name": "all_kinds", "namespace": "hoodie.t", "fields": [
        {"name": "color", "type": {"type": "enum", "name": "color", "symbols": ["RED", "GREEN", "BLUE"]}},
        {"name": "maybe_color", "type": ["null", {"type": "enum", "name": "color2", "symbols": ["A", "B"]}],
         "default": None},
        {"name": "hash", "type": {"type": "fixed", "name": "md5", "size": 4}},
        {"name": "bytes_dec", "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 3}],
         "default": None},
        {"name": "micros", "type": {"type": "long", "logicalType": "time-micros"}},
        {"name": "null_last", "type": ["string", "null"]},
        {"name": "nested", "type": ["null", {"type": "record", "name": "outer", "fields": [
            {"name": "inner", "type": ["null", {"type": "record", "name": "inner", "fields": [
                {"name": "n", "type": ["null", "long"], "default": None},
                {"name": "list", "type": ["null", {"type": "array", "items": "int"}], "default": None}]}],
             "default": None},
            {"name": "flag", "type": "boolean"}]}], "default": None},
    ]}


def _random_rows(rng: random.Random, n: int):
    def maybe(value):
        return None if rng.random() < 0.2 else value

    for _ in range(n):
        yield {
            "color": rng.choice(["RED", "GREEN", "BLUE"]), "maybe_color": maybe(rng.choice(["A", "B"])),
            "hash": bytes(rng.randrange(256) for _ in range(4)),
            "bytes_dec": maybe(decimal.Decimal(rng.randrange(-10 ** 17, 10 ** 17)).scaleb(-3)),
            "micros": rng.randrange(0, 86_400_000_000), "null_last": maybe(str(rng.random())),
            "nested": maybe({"inner": maybe({"n": maybe(rng.randrange(-(1 << 63), 1 << 63)),
                                             "list": maybe([rng.randrange(-99, 99) for _ in range(rng.randrange(4))])}),
                             "flag": rng.random() < 0.5}),
        }


def test_vectorised_codec_matches_fastavro_on_every_avro_kind():
    rng = random.Random(7)
    table = pa.Table.from_pylist(list(_random_rows(rng, 3000)), schema=avro_to_arrow_schema(ENUM_SCHEMA))
    ours = encode_avro_records(table, ENUM_SCHEMA)
    assert ours == _fastavro_encode(table, ENUM_SCHEMA)
    decoded = decode_avro_records(ours, ENUM_SCHEMA)
    assert decoded.equals(table) and decoded.equals(_fastavro_decode(ours, ENUM_SCHEMA))


def test_vectorised_codec_matches_fastavro_on_the_round_trip_table():
    table, schema = _round_trip_table(), _avro_schema()
    ours = encode_avro_records(table, schema)
    assert ours == _fastavro_encode(table, schema)
    assert decode_avro_records(ours, schema).equals(_fastavro_decode(ours, schema))


def test_a_datum_that_overruns_its_length_prefix_is_detected():
    schema = with_meta_fields(arrow_to_avro_schema(pa.schema([("s", pa.string())]), "t", "hoodie.t"))
    content = bytearray(encode_avro_records(pa.table({"s": ["abc", "defgh"]}), schema))
    # make record 0's string claim two more bytes: it now reads into record 1's length prefix
    first_string = 12 + 5  # version, count, length prefix, five null meta-field branches
    assert content[first_string] == 0x02 and content[first_string + 1] == 6
    content[first_string + 1] = 10
    with pytest.raises(CorruptFileError, match="record 0: string runs past the end of the record"):
        decode_avro_records(bytes(content), schema, "f.log at offset 0")


# ---------------------------------------------------------------------------------------------
# delete blocks and ordering values


def test_delete_block_default_ordering_is_int_wrapper_zero():
    content = encode_delete_content(pa.array(["k"]), pa.array(["p"]))
    # version 3, datum length, then: array count 1, key branch 1 + "k", partition branch 1 + "p",
    # orderingVal branch 2 (IntWrapper) + int 0, end of array
    assert content == struct.pack(">ii", 3, 10) + bytes([2, 2, 2]) + b"k" + bytes([2, 2]) + b"p" + bytes([4, 0, 0])


@pytest.mark.parametrize("values,wrapper,expected", [
    (pa.array([5, None], pa.int64()), "LongWrapper", [5, 0]),
    (pa.array([5, -7], pa.int32()), "IntWrapper", [5, -7]),
    (pa.array([1.25, None]), "DoubleWrapper", [1.25, 0]),
    (pa.array([1.5, 2.0], pa.float32()), "FloatWrapper", [1.5, 2.0]),
    (pa.array(["b", "a"]), "StringWrapper", ["b", "a"]),
    (pa.array([True, False]), "BooleanWrapper", [True, False]),
    (pa.array([b"\x00", b""]), "BytesWrapper", [b"\x00", b""]),
    (pa.array([datetime.date(2024, 1, 2), datetime.date(1969, 12, 31)]), "DateWrapper",
     [datetime.date(2024, 1, 2), datetime.date(1969, 12, 31)]),
    (pa.array([decimal.Decimal("1.5"), decimal.Decimal("-0.001")], pa.decimal128(10, 3)), "DecimalWrapper",
     [decimal.Decimal("1.5"), decimal.Decimal("-0.001")]),
    (pa.array([datetime.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=UTC)] * 2, pa.timestamp("us", "UTC")),
     "TimestampMicrosWrapper", [datetime.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=UTC)] * 2),
    (pa.array([datetime.time(1, 2, 3, 4)] * 2, pa.time64("us")), "TimeMicrosWrapper", [datetime.time(1, 2, 3, 4)] * 2),
])
def test_delete_ordering_values_use_the_matching_wrapper(values, wrapper, expected):
    block = read_log_bytes(encode_delete_block(pa.array(["a", "b"]), pa.array(["p", None]), "7", values)).blocks[0]
    records = decode_delete_records(block)
    assert [r.record_key for r in records] == ["a", "b"] and [r.partition_path for r in records] == ["p", None]
    assert [r.ordering_value for r in records] == expected
    kinds = [r.ordering_type for r in records]
    assert kinds[0] == wrapper and kinds[1] in (wrapper, "IntWrapper")
    assert decode_delete_block(block).column("ordering_value").null_count == 0


def test_empty_delete_block():
    block = read_log_bytes(encode_delete_block(pa.array([], pa.string()), pa.array([], pa.string()), "1")).blocks[0]
    assert block.content == struct.pack(">ii", 3, 1) + b"\x00"
    assert decode_delete_block(block).num_rows == 0


def test_command_block_header_and_errors():
    raw = encode_rollback_command_block("2", "1")
    [block] = read_log_bytes(raw).blocks
    assert list(block.header.items()) == [(HeaderKey.INSTANT_TIME, "2"), (HeaderKey.COMMAND_BLOCK_TYPE, "0"),
                                          (HeaderKey.TARGET_INSTANT_TIME, "1")]
    assert len(raw) == block.size and block.content == b""
    with pytest.raises(UnsupportedTableError, match="command type '5'"):
        decode_command_block(dataclasses.replace(block, header={**block.header, HeaderKey.COMMAND_BLOCK_TYPE: "5"}))


def test_unknown_header_keys_survive_a_round_trip():
    raw = encode_block(BlockType.COMMAND, {HeaderKey.INSTANT_TIME: "1", 42: "future"}, b"", {HeaderKey.IS_PARTIAL: "x"})
    [block] = read_log_bytes(raw).blocks
    assert block.header == {HeaderKey.INSTANT_TIME: "1", 42: "future"}
    assert block.footer == {HeaderKey.IS_PARTIAL: "x"}
    assert encode_block(block.block_type, block.header, block.content, block.footer) == raw
    assert isinstance(block, LogBlock)


# ---------------------------------------------------------------------------------------------
# a large block (its speed is measured in benchmarks/avro_blocks.py, not asserted here)


def test_a_100k_record_avro_block_round_trips():
    table, schema = avro_block_records(100_000)  # every logical type of the trips-like schema
    [block] = read_log_bytes(encode_avro_data_block(table, INSTANT, schema)).blocks
    assert block.block_type == BlockType.AVRO_DATA
    assert decode_data_block(block).equals(table.cast(avro_to_arrow_schema(schema)))
