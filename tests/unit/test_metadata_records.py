"""The metadata table's keys and records as Apache Hudi 0.15 makes them (no JVM here).

The expected values were computed by Hudi 0.15.0 itself: ``tests/hudi_oracle/MetadataRecords.java`` run on its
Spark bundle (``HoodieMetadataPayload``, ``HoodieTableMetadataUtil``, ``HoodieAvroUtils.avroToBytes``), in UTC;
``tests/hudi_oracle/test_metadata_keys_oracle.py`` asks it again for random inputs."""

from __future__ import annotations

import base64
import decimal

import numpy as np
import pyarrow as pa
import pytest

from hoodie_datasource.errors import CorruptFileError, HoodieConfigError
from hoodie_datasource.log.hfile_block import encode_hfile_data_block, open_hfile_data_block
from hoodie_datasource.log.log_format import BlockType, HeaderKey, read_log_bytes
from hoodie_datasource.metadata.keys import (
    bloom_filter_key,
    bloom_filter_keys,
    column_stats_key,
    column_stats_keys,
    column_stats_prefix,
    file_group_index_of,
    file_group_indexes,
    partition_identifier,
)
from hoodie_datasource.metadata.records import (
    METADATA_RECORD_SCHEMA_JSON,
    RECORDS_SCHEMA,
    MetadataPartition,
    RecordType,
    bloom_filter_records,
    bloom_filters,
    column_stats,
    column_stats_records,
    decode_records,
    encode_records,
    file_entries,
    files_records,
    partition_list_record,
    record_index_records,
    record_locations,
    unwrap_values,
    wrap_values,
)

# (partition, file name, column) -> (column-stats key, bloom-filter key), from Hudi 0.15
JAVA_KEYS = {
    ("", "f1-0_1-0-1_20240101000000000.parquet", "col"):
        ("3eap+WbJZDA=FXThHwelITM=5FGdvLp/9x2c473J1QvdMQ==", "FXThHwelITM=5FGdvLp/9x2c473J1QvdMQ=="),
    ("city=sao_paulo", "0a2c5a4e-3b5d-4c7e-9f1a-2b3c4d5e6f70-0_0-12-34_20240102030405678.parquet", "fare"):
        ("k6A0EIIbKbU=6Hj+sBy+gvM=X+ON6qKonY0pnNIum8lYAw==", "6Hj+sBy+gvM=X+ON6qKonY0pnNIum8lYAw=="),
    ("2024/01/02", ".f2-0_20240101.log.1_0-1-2", "_hoodie_record_key"):
        ("uSJGdDiVr/k=UOkNQXKj44U=8WnZBoUtSRpiQ0hz9/UmPQ==", "UOkNQXKj44U=8WnZBoUtSRpiQ0hz9/UmPQ=="),
    ("é/ü", "x.parquet", "名前"):
        ("S3/ndDhlIoY=6a2JMpmlYwM=fOymB5T8R2LT10LOup9pKQ==", "6a2JMpmlYwM=fOymB5T8R2LT10LOup9pKQ=="),
}
SHARD_KEYS = ["key1", "héllo😀", "", "zzzzzzzzzzzzzzzzzzzzzzz", "a" * 100, "polygenelubricants", "uuid-0000-ffff",
              "id:42,name:x"]
# mapRecordKeyToFileGroupIndex(key, n) of SHARD_KEYS, from Hudi 0.15
JAVA_SHARDS = {1: [0] * 8, 10: [8, 5, 0, 6, 0, 8, 9, 4], 7: [3, 3, 0, 5, 2, 2, 6, 4],
               1000: [498, 465, 0, 286, 840, 648, 819, 944]}
# createRecordIndexUpdate(key, partition, fileId, instant, 0) as Avro bytes, from Hudi 0.15 (UTC)
JAVA_RECORD_INDEX = [
    (("k1", "p=1", "0a2c5a4e-3b5d-4c7e-9f1a-2b3c4d5e6f70-0", "20240102030405678"),
     "BGsxCgAAAAICBnA9MQL8seq1x5OtrBQCn8KMqvaw6uXBAQIAAgAC3OyGgpljAA=="),
    (("k2", "", "ffffffff-ffff-ffff-ffff-ffffffffffff", "20240102030405"), "BGsyCgAAAAICAAIBAgECAQIAAt7xhoKZYwA="),
    (("k3", "a/b", "0a2c5a4e-3b5d-4c7e-9f1a-2b3c4d5e6f70", "20240102030405678"),
     "BGszCgAAAAICBmEvYgL8seq1x5OtrBQCn8KMqvaw6uXBAQIBAgAC3OyGgpljAA=="),
    (("k4", "p", "0a2c5a4e-3b5d-4c7e-9f1a-2b3c4d5e6f70-12", "19700101000000000"),
     "BGs0CgAAAAICAnAC/LHqtceTrawUAp/CjKr2sOrlwQECGAIAAgAA"),
]
_STATS_PREFIX = "YE9aaHc3YlhUZkhRPWZCUnMxWm5ZeTBNPVFYcjFPdW9NVEVOWDhRdzM0WUxBVEE9PQYAAAICEmYucGFycXVldAICY"
# createColumnStatsRecords("p", [range of file f.parquet, column c], deleted) as Avro bytes, from Hudi 0.15:
# (Arrow min, Arrow max, nulls, values, size, uncompressed size, deleted) -> the bytes after _STATS_PREFIX
JAVA_COLUMN_STATS = [
    (pa.array([-5, 7], pa.int32()), 1, 10, 100, 200, False, "wQJBA4CFAICAsgBApADAAA="),
    (pa.array(["abc", "zé"]), 0, 3, 1, 2, False, "w4GYWJjDgZ6w6kCBgIAAgICBAAA"),
    (pa.array([-1.5, 2.25]), 0, 3, 1, 2, False, "woAAAAAAAD4vwoAAAAAAAACQAIGAgACAgIEAAA="),
    (pa.array([False, True]), 0, 3, 1, 2, False, "wIAAgECBgIAAgICBAAA"),
    (pa.array([-3, 19000], pa.int32()).cast(pa.date32()), 0, 3, 1, 2, False, "xAFEPCoAgIGAgACAgIEAAA="),
    (pa.array([decimal.Decimal("-12.345"), decimal.Decimal("99999.5")], pa.decimal128(10, 3)), 0, 3, 1, 2, False,
     "xIO1CRJtD9wABISBWvFl24QrMAAAgYCAAICAgQAAA=="),
    (pa.array([1700000000123456, -1], pa.int64()).cast(pa.timestamp("us", "UTC")), 0, 3, 1, 2, False,
     "xaAiYGCg4mFBhYBAgYCAAICAgQAAA=="),
    (pa.array([b"\x00\xff", b"\x7f"]), 0, 3, 1, 2, False, "wwEAP8MAn8CBgIAAgICBAAA"),
    (pa.array([0.5, 3.25], pa.float32()), 0, 3, 1, 2, False, "wgAAAA/CAAAUEACBgIAAgICBAAA"),
    (pa.array([None, None], pa.int32()), 3, 3, 1, 2, True, "wAAAgYCBgICAgQBAA=="),
]
JAVA_LONG_STATS = ("YE9aaHc3YlhUZkhRPUZYVGhId2VsSVRNPVFYcjFPdW9NVEVOWDhRdzM0WUxBVEE9PQYAAAICEmYucGFycXVldAICYwb/54iHQwaA6"
                   "IiHQwIGAgACAgIEAAA=")
JAVA_BLOOM = ("SGpFTjJVd0VxNVB3PTVGR2R2THAvOXgyYzQ3M0oxUXZkTVE9PQgAAhREWU5BTUlDX1YwIjIwMjQwMTAxMDAwMDAwMDAwFmZpbHRlcmJ5"
              "dGVzAAAA")
JAVA_PARTITIONS = "JF9fYWxsX3BhcnRpdGlvbnNfXwICAgZwPTEAAAAAAAA="


def _bytes(b64: str) -> bytes:
    return base64.b64decode(b64)


def _key_field_emptied(record: bytes, key: str) -> bytes:
    """A record as it sits in an HFile: its key field (first, a string) left empty."""
    length = len(key.encode())
    prefix = bytes([length << 1]) if length < 64 else None
    assert prefix is not None and record.startswith(prefix + key.encode())
    return b"\x00" + record[1 + length:]


def _cells_of(records: pa.Table) -> list[tuple[str, bytes]]:
    keys, values = encode_records(records)
    return list(zip(keys.to_pylist(), values.to_pylist()))


# ---- keys


@pytest.mark.parametrize(("names", "expected"), list(JAVA_KEYS.items()))
def test_column_stats_and_bloom_filter_keys_are_javas(names, expected):
    partition, file_name, column = names
    assert column_stats_key(partition, file_name, column) == expected[0]
    assert bloom_filter_key(partition, file_name) == expected[1]
    assert column_stats_key(partition, file_name, column).startswith(column_stats_prefix(column, partition))


def test_keys_of_whole_arrays_are_the_keys_of_each_row():
    partitions, files, columns = (pa.array(list(v)) for v in zip(*JAVA_KEYS))
    assert column_stats_keys(partitions, files, columns).to_pylist() == [v[0] for v in JAVA_KEYS.values()]
    assert bloom_filter_keys(partitions, files).to_pylist() == [v[1] for v in JAVA_KEYS.values()]
    chunked = pa.chunked_array([partitions.slice(0, 2), partitions.slice(2)])
    assert bloom_filter_keys(chunked, files).to_pylist() == [v[1] for v in JAVA_KEYS.values()]


def test_the_non_partitioned_table_is_a_dot():
    assert partition_identifier("") == "."
    assert partition_identifier("a/b") == "a/b"
    assert bloom_filter_key("", "f.parquet") == bloom_filter_key(".", "f.parquet")


@pytest.mark.parametrize("count", sorted(JAVA_SHARDS))
def test_keys_go_to_the_file_group_java_picks(count):
    assert file_group_indexes(pa.array(SHARD_KEYS), count).tolist() == JAVA_SHARDS[count]


def test_a_key_hashing_to_integer_min_value_stays_in_range():
    # "polygenelubricants".hashCode() is Integer.MIN_VALUE: Math.abs of it stays negative in Java
    assert file_group_indexes(pa.array(["polygenelubricants"]), 10).tolist() == [8]
    indexes = file_group_indexes(pa.array([f"key-{i}" for i in range(10_000)]), 13)
    assert indexes.min() >= 0 and indexes.max() < 13 and len(np.unique(indexes)) == 13


def test_file_group_ids():
    assert MetadataPartition.FILES.file_group_id(0) == "files-0000-0"
    assert MetadataPartition.RECORD_INDEX.file_group_id(9) == "record-index-0009-0"
    assert MetadataPartition.COLUMN_STATS.file_group_id(1) == "col-stats-0001-0"
    assert MetadataPartition.BLOOM_FILTERS.file_group_id(3) == "bloom-filters-0003-0"
    assert [file_group_index_of(i) for i in ("files-0000-0", "record-index-0012-0", "col-stats-0003")] == [0, 12, 3]
    assert MetadataPartition.of("record_index") is MetadataPartition.RECORD_INDEX
    with pytest.raises(HoodieConfigError, match="files, column_stats, bloom_filters, record_index"):
        MetadataPartition.of("partition_stats")
    with pytest.raises(CorruptFileError, match="not the id"):
        file_group_index_of("files-x-0")


# ---- records, byte for byte


def test_the_schema_is_hudis():
    assert RECORDS_SCHEMA.names == ["key", "type", "filesystemMetadata", "BloomFilterMetadata",
                                    "ColumnStatsMetadata", "recordIndexMetadata"]
    assert '"name":"HoodieMetadataRecord","namespace":"org.apache.hudi.avro.model"' in METADATA_RECORD_SCHEMA_JSON


def test_record_index_records_are_javas_bytes():
    rows = [r for r, _ in JAVA_RECORD_INDEX]
    keys, partitions, file_ids, instants = (pa.array(list(c)) for c in zip(*rows))
    records = record_index_records(keys, partitions, file_ids, instants, "UTC")
    cells = _cells_of(records)
    assert [k for k, _ in cells] == ["k1", "k2", "k3", "k4"]
    assert [v for _, v in cells] == [_key_field_emptied(_bytes(b), r[0]) for r, b in JAVA_RECORD_INDEX]


def test_record_index_locations_come_back():
    keys, values = pa.array(["k1", "k2", "k3", "k4"]), pa.array([_bytes(b) for _, b in JAVA_RECORD_INDEX])
    records = decode_records(keys, values, METADATA_RECORD_SCHEMA_JSON)
    locations = record_locations(records, "UTC").to_pylist()
    assert locations == [
        {"key": "k1", "partition": "p=1", "file_id": "0a2c5a4e-3b5d-4c7e-9f1a-2b3c4d5e6f70-0",
         "instant_time": "20240102030405678"},
        # a time of seconds is read as its last millisecond (parseDateFromInstantTime)
        {"key": "k2", "partition": "", "file_id": "ffffffff-ffff-ffff-ffff-ffffffffffff",
         "instant_time": "20240102030405999"},
        {"key": "k3", "partition": "a/b", "file_id": "0a2c5a4e-3b5d-4c7e-9f1a-2b3c4d5e6f70",
         "instant_time": "20240102030405678"},
        {"key": "k4", "partition": "p", "file_id": "0a2c5a4e-3b5d-4c7e-9f1a-2b3c4d5e6f70-12",
         "instant_time": "19700101000000000"},
    ]


def test_a_file_id_that_is_no_uuid_is_kept_raw():
    records = record_index_records(pa.array(["a", "b"]), pa.array(["p", "p"]),
                                   pa.array(["my-file-0", "0a2c5a4e-3b5d-4c7e-9f1a-2b3c4d5e6f7x-0"]),
                                   pa.array(["20240102030405678"] * 2))
    info = records.column("recordIndexMetadata").to_pylist()
    assert [i["fileIdEncoding"] for i in info] == [1, 1]
    assert [i["fileId"] for i in info] == ["my-file-0", "0a2c5a4e-3b5d-4c7e-9f1a-2b3c4d5e6f7x-0"]
    assert record_locations(records).column("file_id").to_pylist() == ["my-file-0",
                                                                       "0a2c5a4e-3b5d-4c7e-9f1a-2b3c4d5e6f7x-0"]


@pytest.mark.parametrize("case", JAVA_COLUMN_STATS, ids=lambda c: str(c[0].type))
def test_column_stats_records_are_javas_bytes(case):
    values, nulls, count, size, uncompressed, deleted, tail = case
    wrapped = wrap_values(values)
    stats = pa.table({"partition": ["p"], "file_name": ["f.parquet"], "column_name": ["c"],
                      "min_value": wrapped.slice(0, 1), "max_value": wrapped.slice(1, 1), "value_count": [count],
                      "null_count": [nulls], "total_size": [size], "total_uncompressed_size": [uncompressed],
                      "is_deleted": [deleted]})
    records = column_stats_records(stats)
    java = _bytes(_STATS_PREFIX + tail)
    key = records.column("key")[0].as_py()
    assert _cells_of(records) == [(key, _key_field_emptied(java, key))]
    # and back: the record, its values unwrapped to the column's type
    decoded = column_stats(decode_records(pa.array([key]), pa.array([java]), METADATA_RECORD_SCHEMA_JSON))
    row = decoded.to_pylist()[0]
    assert (row["file_name"], row["column_name"], row["null_count"], row["value_count"], row["is_deleted"]) == \
        ("f.parquet", "c", nulls, count, deleted)
    both = pa.concat_arrays([decoded.column("min_value").combine_chunks(), decoded.column("max_value").combine_chunks()])
    assert unwrap_values(both, values.type).equals(values)


def test_long_column_stats_of_the_non_partitioned_table():
    stats = pa.table({"partition": [""], "file_name": ["f.parquet"], "column_name": ["c"],
                      "min_value": wrap_values(pa.array([-9000000000])), "max_value": wrap_values(pa.array([9000000000])),
                      "value_count": [3], "null_count": [0], "total_size": [1], "total_uncompressed_size": [2],
                      "is_deleted": [False]})
    records = column_stats_records(stats)
    key = records.column("key")[0].as_py()
    assert _cells_of(records) == [(key, _key_field_emptied(_bytes(JAVA_LONG_STATS), key))]


def test_bloom_filter_record_is_javas_bytes():
    records = bloom_filter_records(pa.array(["p=1"]), pa.array(["f1-0_1-0-1_20240101000000000.parquet"]),
                                   "20240101000000000", "DYNAMIC_V0", pa.array([b"filterbytes"]), pa.array([False]))
    key = records.column("key")[0].as_py()
    assert _cells_of(records) == [(key, _key_field_emptied(_bytes(JAVA_BLOOM), key))]
    assert bloom_filters(decode_records(pa.array([key]), pa.array([_bytes(JAVA_BLOOM)]),
                                        METADATA_RECORD_SCHEMA_JSON)).to_pylist() == [
        {"key": key, "type": "DYNAMIC_V0", "timestamp": "20240101000000000", "bloom_filter": b"filterbytes",
         "is_deleted": False}]


def test_partition_list_record_is_javas_bytes():
    records = partition_list_record(["p=1"])
    assert _cells_of(records) == [("__all_partitions__", _key_field_emptied(_bytes(JAVA_PARTITIONS),
                                                                           "__all_partitions__"))]
    assert partition_list_record([""]).column("filesystemMetadata").to_pylist() == [
        [(".", {"size": 0, "isDeleted": False})]]


def test_files_records_list_added_and_deleted_files_per_partition():
    # Java's own bytes of createPartitionFilesRecord("p=1", {a.parquet: 10}, [b.parquet])
    java = _bytes("BnA9MQQCBBJhLnBhcnF1ZXQUABJiLnBhcnF1ZXQAAQAAAAA=")
    files = pa.table({"partition": ["p=1", "p=1", ""], "file_name": ["b.parquet", "a.parquet", "c.parquet"],
                      "size": [0, 10, 5], "is_deleted": [True, False, False]})
    records = files_records(files)
    cells = dict(_cells_of(records))
    assert set(cells) == {".", "p=1"}
    assert cells["p=1"] == _key_field_emptied(java, "p=1")
    decoded = decode_records(pa.array(["p=1"]), pa.array([java]), METADATA_RECORD_SCHEMA_JSON)
    assert decoded.column("type").to_pylist() == [RecordType.FILE_LIST]
    assert file_entries(decoded).to_pylist() == [
        {"key": "p=1", "file_name": "a.parquet", "size": 10, "is_deleted": False, "record": 0},
        {"key": "p=1", "file_name": "b.parquet", "size": 0, "is_deleted": True, "record": 0}]


def test_wrapped_values_of_several_types_need_a_type_to_unwrap():
    mixed = pa.concat_arrays([wrap_values(pa.array([1], pa.int32())), wrap_values(pa.array([2], pa.int64()))])
    assert unwrap_values(mixed, pa.int64()).to_pylist() == [1, 2]
    with pytest.raises(Exception, match="several types"):
        unwrap_values(mixed)
    assert unwrap_values(wrap_values(pa.array([None, "x"]))).to_pylist() == [None, "x"]


# ---- HFile log blocks


def test_an_hfile_log_block_round_trips_records_of_every_kind():
    records = pa.concat_tables([
        partition_list_record(["p=1", "p=2"]),
        files_records(pa.table({"partition": ["p=1"], "file_name": ["a.parquet"], "size": [10],
                                "is_deleted": [False]})),
        record_index_records(pa.array([f"key-{i:05d}" for i in range(5000)]), pa.array(["p=1"] * 5000),
                             pa.array(["0a2c5a4e-3b5d-4c7e-9f1a-2b3c4d5e6f70-0"] * 5000),
                             pa.array(["20240102030405678"] * 5000)),
    ])
    keys, values = encode_records(records)
    block = encode_hfile_data_block(keys, values, "20240102030405678", METADATA_RECORD_SCHEMA_JSON)
    (framed,) = read_log_bytes(block, "mem.log").blocks
    assert framed.block_type == BlockType.HFILE_DATA
    assert framed.header == {HeaderKey.INSTANT_TIME: "20240102030405678", HeaderKey.SCHEMA: METADATA_RECORD_SCHEMA_JSON}
    reader = open_hfile_data_block(framed)
    assert reader.avro_schema() == METADATA_RECORD_SCHEMA_JSON
    cells = reader.scan()
    decoded = decode_records(cells.column("key"), cells.column("value"), framed.schema)
    assert decoded.sort_by("key").to_pylist() == records.sort_by("key").to_pylist()
    found = reader.lookup([b"key-01234", b"nope", b"__all_partitions__"])
    assert found.column("key").to_pylist() == [b"__all_partitions__", b"key-01234"]


def test_a_record_without_its_key_field_is_not_a_metadata_record():
    with pytest.raises(CorruptFileError, match="no 'key' field"):
        decode_records(pa.array(["k"]), pa.array([b"\x02"]),
                       '{"type":"record","name":"R","fields":[{"name":"type","type":"int"}]}')
