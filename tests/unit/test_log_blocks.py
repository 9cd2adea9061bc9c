"""MOR log files against the ones Apache Hudi wrote: framing, Avro/Parquet data, delete and
rollback blocks re-encode byte for byte; our own blocks round trip; corrupt blocks are skipped."""

from __future__ import annotations

import datetime
import decimal
import glob
import json
import os

import pyarrow as pa
import pytest

from hoodie_datasource.log.command_block import encode_rollback_command_block
from hoodie_datasource.log.data_block import decode_data_block, encode_avro_data_block, encode_parquet_data_block
from hoodie_datasource.log.delete_block import (
    DeleteRecord,
    comparable_orderings,
    decode_delete_block,
    encode_delete_block,
)
from hoodie_datasource.log.log_format import BlockType, HeaderKey, encode_block, read_log_bytes
from hoodie_datasource.schema.avro_schema import arrow_to_avro_schema, with_meta_fields
from tests.conftest import SHARED_TABLES, unzip_table

FIXTURES = SHARED_TABLES / "core_fixtures" / "log_files"
MOR_ZIPS = [
    "quickstart_trips_table/mor/avro/v6_trips_8i1u.zip",
    "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip",
    "sample_table/mor/avro/v9_txns_complex_meta.zip",
    "sample_table/mor/parquet/v6_nonpartitioned_rollback.zip",
    "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle.zip",
]
pytestmark = pytest.mark.usefixtures("shared_tables")


def _log_files(tmp_path):
    files = glob.glob(str(FIXTURES / "*" / ".*"))
    for i, name in enumerate(MOR_ZIPS):
        base = unzip_table(name, tmp_path / str(i))
        files += [f for f in glob.glob(os.path.join(base, "**", ".*.log.*"), recursive=True) if "/.hoodie/" not in f]
    return files


def test_every_real_log_file_parses_and_reencodes_byte_for_byte(tmp_path):
    files = _log_files(tmp_path)
    assert len(files) >= 10
    kinds = set()
    for path in files:
        contents = read_log_file(path)
        assert contents.corrupt_blocks == 0, path
        raw = open(path, "rb").read()
        assert b"".join(encode_block(b.block_type, b.header, b.content, b.footer) for b in contents.blocks) == raw
        for block in contents.blocks:
            kinds.add(block.block_type)
            if block.block_type == BlockType.AVRO_DATA:
                table = decode_data_block(block)
                schema = json.loads(block.header[HeaderKey.SCHEMA])
                again = encode_avro_data_block(table, block.instant_time, schema)
                assert read_log_file_bytes(again).content == block.content, path
            elif block.block_type == BlockType.PARQUET_DATA:
                assert decode_data_block(block).num_rows > 0
            elif block.block_type == BlockType.DELETE:
                deleted = decode_delete_block(block)
                schema = json.loads(block.header[HeaderKey.SCHEMA]) if HeaderKey.SCHEMA in block.header else None
                again = encode_delete_block(deleted.column(0), deleted.column(1), block.instant_time,
                                            avro_schema=schema)
                assert read_log_file_bytes(again).content == block.content, path  # header order may differ
            elif block.block_type == BlockType.COMMAND:
                again = encode_rollback_command_block(block.instant_time, block.target_instant_time)
                assert again == encode_block(block.block_type, block.header, block.content, block.footer), path
    assert kinds >= {BlockType.AVRO_DATA, BlockType.PARQUET_DATA, BlockType.DELETE, BlockType.COMMAND}


def read_log_file(path: str):
    with open(path, "rb") as handle:
        return read_log_bytes(handle.read(), path)


def read_log_file_bytes(data: bytes):
    [block] = read_log_bytes(data).blocks
    return block


TABLE = pa.table({
    "_hoodie_commit_time": ["1", "1", None], "_hoodie_commit_seqno": ["s1", "s2", None],
    "_hoodie_record_key": ["a", "b", "c"], "_hoodie_partition_path": ["p", "p", "p"],
    "_hoodie_file_name": ["f", "f", "f"],
    "i": pa.array([1, None, 3], pa.int32()), "l": pa.array([1, 2, None], pa.int64()), "d": [0.5, None, 2.0],
    "s": ["x", None, ""], "b": [True, False, None],
    "day": pa.array([datetime.date(2024, 1, 2), None, datetime.date(1970, 1, 1)]),
    "ts": pa.array([datetime.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=datetime.timezone.utc), None, None],
                   pa.timestamp("us", "UTC")),
    "amount": pa.array([decimal.Decimal("1.50"), None, decimal.Decimal("-2.25")], pa.decimal128(10, 2)),
})


@pytest.mark.parametrize("encode", [encode_avro_data_block, encode_parquet_data_block])
def test_our_data_blocks_round_trip(tmp_path, encode):
    data_fields = pa.schema([f for f in TABLE.schema if not f.name.startswith("_hoodie")])
    schema = with_meta_fields(arrow_to_avro_schema(data_fields, "t_record", "hoodie.t"))
    path = str(tmp_path / ".f_1.log.1_0-0-0")
    with open(path, "wb") as handle:
        handle.write(encode(TABLE, "20240101000000000", schema)
                     + encode_delete_block(pa.array(["b"]), pa.array(["p"]), "20240101000000001"))
    blocks = read_log_file(path).blocks
    assert [b.block_type for b in blocks][1] == BlockType.DELETE
    assert decode_data_block(blocks[0]).to_pylist() == TABLE.to_pylist()
    assert decode_delete_block(blocks[1]).column("_hoodie_record_key").to_pylist() == ["b"]


def test_delete_ordering_values_the_log_scanner_weighs():
    # HoodieMergedLogRecordScanner.processNextDeletedRecord: the default Integer 0 and a value of another
    # class than the ordering field's never outweigh a record
    records = [DeleteRecord("a", "p", 0, "IntWrapper"), DeleteRecord("b", "p", 7, "IntWrapper"),
               DeleteRecord("c", "p", 7, "LongWrapper"), DeleteRecord("d", "p", None, None)]
    assert comparable_orderings(records, pa.int32()).to_pylist() == [None, 7, None, None]
    assert comparable_orderings(records, pa.int64()).to_pylist() == [None, None, 7, None]
    assert comparable_orderings(records, pa.string()).to_pylist() == [None] * 4


def test_truncated_and_corrupted_blocks_are_skipped(tmp_path, caplog):
    block = encode_delete_block(pa.array(["a"]), pa.array(["p"]), "1")
    other = encode_delete_block(pa.array(["z"]), pa.array(["p"]), "2")
    bad = bytearray(block)
    bad[8:14] = b"\x7f\xff\xff\xff\xff\xff"  # a length field pointing far past the end
    path = str(tmp_path / ".f_1.log.1_0-0-0")
    with open(path, "wb") as handle:
        handle.write(block + bytes(bad) + other + block[: len(block) // 2])
    with caplog.at_level("WARNING"):
        contents = read_log_file(path)
    assert [decode_delete_block(b).column(0).to_pylist() for b in contents.blocks] == [["a"], ["z"]]
    assert contents.corrupt_blocks == 2
    assert "Corrupt log block" in caplog.text
