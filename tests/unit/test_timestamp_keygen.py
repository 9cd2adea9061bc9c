"""Timestamp-based and custom key generators on write: the partition paths of Hudi 0.15's
``TimestampBasedAvroKeyGenerator`` / ``CustomKeyGenerator``. The expected paths are the ones Apache Hudi 0.15.0's
Java classes printed for the same options and values (its ``getPartitionPath``, run through py4j, and Spark
datasource writes); ``tests/hudi_oracle/test_keygen_oracle.py`` compares a whole write with Java's."""

from __future__ import annotations

import datetime
import decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.properties_file import parse_properties
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.config.table_config import load_table_config
from hoodie_datasource.config.write_config import resolve_write_config
from hoodie_datasource.errors import HoodieConfigError, InvalidRecordError, KeyGeneratorConfigError
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.storage.registry import open_storage
from tests.conftest import unzip_table
from tests.hudi_tables import hudi_rs

TS = "org.apache.hudi.keygen.TimestampBasedKeyGenerator"
CUSTOM = "org.apache.hudi.keygen.CustomKeyGenerator"
P = "hoodie.keygen.timebased."
BASE = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id"}


def keygen(**options):
    opts = {**BASE, "hoodie.datasource.write.keygenerator.class": TS,
            "hoodie.datasource.write.partitionpath.field": "ts"}
    opts.update({(P + k.replace("_", ".") if not k.startswith("hoodie") else k): v for k, v in options.items()})
    return resolve_write_config(opts, None).keygen


def paths(values, typ=None, **options):
    table = pa.table({"id": list(range(len(values))), "ts": pa.array(values, typ)})
    return keygen(**options).partition_paths(table).to_pylist()


# (options, values, Java's paths); None is a null value (Hudi's getDefaultPartitionVal)
CASES = [
    ({"timestamp.type": "UNIX_TIMESTAMP", "output.dateformat": "yyyy/MM/dd"},
     pa.array([1700000000, -1, None], pa.int64()), ["2023/11/14", "1969/12/31", "1970/01/01"]),
    ({"timestamp.type": "UNIX_TIMESTAMP", "output.dateformat": "yyyy/MM/dd"},
     pa.array([1700000000.9]), ["2023/11/14"]),  # Double.longValue truncates
    ({"timestamp.type": "EPOCHMILLISECONDS", "output.dateformat": "yyyy-MM-dd HH:mm:ss.SSS Z",
      "output.timezone": "Asia/Kolkata"},
     pa.array([1700000000123, None, -1500], pa.int64()),
     ["2023-11-15 03:43:20.123 +0530", "1970-01-01 05:30:00.001 +0530", "1970-01-01 05:29:58.500 +0530"]),
    ({"timestamp.type": "EPOCHMILLISECONDS", "output.dateformat": "y M d H h m s S a E EEEE MMM MMMM D yy ZZ",
      "timezone": "GMT+8"},
     pa.array([1700000000123], pa.int64()), ["2023 11 15 6 6 13 20 1 AM Wed Wednesday Nov November 319 23 +08:00"]),
    ({"timestamp.type": "SCALAR", "timestamp.scalar.time.unit": "days", "output.dateformat": "yyyyMMdd"},
     pa.array([19000, None], pa.int32()), ["20220108", "19700102"]),
    ({"timestamp.type": "DATE_STRING", "input.dateformat": "yyyy-MM-dd'T'HH:mm:ssZ,yyyy-MM-dd",
      "output.dateformat": "yyyy/MM/dd/HH"},
     pa.array(["2024-03-01T23:30:00+0530", "2024-03-02", None]), ["2024/03/01/23", "2024/03/02/00", "1970/01/01/00"]),
    ({"timestamp.type": "DATE_STRING", "input.dateformat": "yyyy-MM-dd HH:mm:ss", "input.timezone": "America/New_York",
      "output.dateformat": "yyyy-MM-dd-HH", "output.timezone": "UTC"},
     pa.array(["2024-03-10 01:30:00", "2024-11-03 01:30:00", None]),  # a repeated hour: the earlier instant
     ["2024-03-10-06", "2024-11-03-05", "1970-01-01-00"]),
    ({"timestamp.type": "MIXED", "input.dateformat": "yyyyMMdd", "output.dateformat": "yyyy-MM-dd"},
     pa.array(["20240102", None]), ["2024-01-02", "1970-01-01"]),
    ({"timestamp.type": "DATE_STRING", "input.dateformat": "yyyy-MM-dd", "output.dateformat": "yyyy/MM/dd",
      "output.timezone": "Asia/Tokyo"}, pa.array(["2024-03-02", None]), ["2024/03/02", "1970/01/01"]),
    ({"timestamp.type": "DATE_STRING", "input.dateformat": "yyyy-MM-dd", "input.timezone": "Asia/Tokyo",
      "output.dateformat": "yyyy/MM/dd"}, pa.array(["2024-03-02", None]), ["2024/03/02", "1970/01/01"]),
    # Spark columns as Hudi's Avro path reads them: a timestamp is epoch microseconds, a date epoch days
    ({"timestamp.type": "EPOCHMILLISECONDS", "output.dateformat": "yyyy-MM-dd"},
     pa.array([datetime.datetime(2023, 11, 14, 22, 13, 20), None], pa.timestamp("us")), ["55840-11-08", "1970-01-01"]),
    ({"timestamp.type": "SCALAR", "timestamp.scalar.time.unit": "MICROSECONDS", "output.dateformat": "yyyy-MM-dd"},
     pa.array([datetime.datetime(2023, 11, 14, 22, 13, 20), None], pa.timestamp("us")), ["2023-11-14", "1970-01-01"]),
    ({"timestamp.type": "UNIX_TIMESTAMP", "output.dateformat": "yyyy-MM-dd"},
     pa.array([datetime.date(2024, 1, 2)]), ["1970-01-01"]),
    ({"timestamp.type": "SCALAR", "timestamp.scalar.time.unit": "DAYS", "output.dateformat": "yyyy-MM-dd"},
     pa.array([datetime.date(2024, 1, 2), None]), ["2024-01-02", "1970-01-02"]),
]


@pytest.mark.parametrize("options, values, expected", CASES)
def test_partition_paths_are_hudis(options, values, expected):
    assert paths(values, **{k.replace(".", "_"): v for k, v in options.items()}) == expected


def test_decimals_truncate_and_chunks_and_hive_style_and_url_encoding():
    typ = pa.decimal128(12, 2)
    values = pa.chunked_array([pa.array([decimal.Decimal("1700000000.90")], typ), pa.array([decimal.Decimal("-0.5")], typ)])
    table = pa.table({"id": [1, 2], "ts": values})
    gen = keygen(timestamp_type="UNIX_TIMESTAMP", output_dateformat="yyyy/MM/dd",
                 **{"hoodie.datasource.write.hive_style_partitioning": "true"})
    assert gen.partition_paths(table).to_pylist() == ["ts=2023/11/14", "ts=1970/01/01"]
    gen = keygen(timestamp_type="UNIX_TIMESTAMP", output_dateformat="yyyy/MM/dd",
                 **{"hoodie.datasource.write.partitionpath.urlencode": "true"})
    assert gen.partition_paths(table).to_pylist() == ["2023%2F11%2F14", "1970%2F01%2F01"]  # Java's, a string column


def test_unparsable_and_skipped_local_times_fail_the_write():
    with pytest.raises(InvalidRecordError, match="'bad' in 2 record"):
        paths(["2024-01-01", "bad", "bad"], timestamp_type="DATE_STRING", input_dateformat="yyyy-MM-dd",
              output_dateformat="yyyy")
    with pytest.raises(InvalidRecordError, match="'' in 1 record"):  # Java: Invalid format: ""
        paths([""], timestamp_type="DATE_STRING", input_dateformat="yyyy-MM-dd", output_dateformat="yyyy")
    with pytest.raises(InvalidRecordError, match="'2024-03-10 02:30:00', a local time that does not exist"):
        paths(["2024-03-10 02:30:00"], timestamp_type="DATE_STRING", input_dateformat="yyyy-MM-dd HH:mm:ss",
              input_timezone="America/New_York", output_dateformat="yyyy")


@pytest.mark.parametrize("options, match", [
    ({"timestamp_type": "EPOCHMICROSECONDS", "output_dateformat": "yyyy"}, "valid values are: UNIX_TIMESTAMP"),
    ({"output_dateformat": "yyyy"}, "timestamp.type is required"),
    ({"timestamp_type": "UNIX_TIMESTAMP"}, "output.dateformat is required"),
    ({"timestamp_type": "DATE_STRING", "output_dateformat": "yyyy"}, "input.dateformat is required"),
    ({"timestamp_type": "SCALAR", "timestamp_scalar_time_unit": "WEEKS", "output_dateformat": "yyyy"},
     "valid values are: NANOSECONDS"),
    ({"timestamp_type": "UNIX_TIMESTAMP", "output_dateformat": "yyyy-ww"}, "letter 'w' is not supported"),
    ({"timestamp_type": "DATE_STRING", "input_dateformat": "yy-MM", "output_dateformat": "yyyy"}, "'yy'"),
    ({"timestamp_type": "UNIX_TIMESTAMP", "output_dateformat": "yyyy", "output_timezone": "Nowhere/Land"},
     "not a time zone"),
    ({"timestamp_type": "UNIX_TIMESTAMP", "output_dateformat": "yyyy",
      "hoodie.keygen.datetime.parser.class": "com.example.Parser"}, "only Hudi's"),
    ({"timestamp_type": "UNIX_TIMESTAMP", "output_dateformat": "yyyy",
      "hoodie.datasource.write.recordkey.field": "id,x"}, "one record key field"),
])
def test_bad_options_are_refused_naming_the_option(options, match):
    with pytest.raises(HoodieConfigError, match=match):
        keygen(**options)


def test_column_types_the_timestamp_type_does_not_take_are_refused():
    with pytest.raises(KeyGeneratorConfigError, match="string column"):
        paths(["1700000000"], timestamp_type="UNIX_TIMESTAMP", output_dateformat="yyyy")
    with pytest.raises(KeyGeneratorConfigError, match="int64 column"):
        paths([1], timestamp_type="DATE_STRING", input_dateformat="yyyy", output_dateformat="yyyy")


def custom(**extra):
    return {**BASE, "hoodie.datasource.write.keygenerator.class": CUSTOM,
            "hoodie.datasource.write.partitionpath.field": "region:SIMPLE,ms:timestamp",
            P + "timestamp.type": "EPOCHMILLISECONDS", P + "output.dateformat": "yyyyMMdd", **extra}


ROWS = pa.table({"id": [1, 2, 3], "region": ["a", None, "b/c"], "ms": [1700000000123, None, 1600000000000]})


def test_custom_key_generator_paths_and_keys_are_hudis():
    # Java 0.15 (a Spark upsert and bulk insert): region=a/ms=20231114, region=__HIVE_DEFAULT_PARTITION__/ms=19700101
    gen = resolve_write_config(custom(**{"hoodie.datasource.write.hive_style_partitioning": "true"}), None).keygen
    assert gen.partition_paths(ROWS).to_pylist() == [
        "region=a/ms=20231114", "region=__HIVE_DEFAULT_PARTITION__/ms=19700101", "region=b/c/ms=20200913"]
    assert gen.record_keys(ROWS).to_pylist() == ["1", "2", "3"]
    gen = resolve_write_config(custom(**{"hoodie.datasource.write.recordkey.field": "id,region"}), None).keygen
    assert gen.record_keys(ROWS).to_pylist() == ["id:1,region:a", "id:2,region:__null__", "id:3,region:b/c"]
    assert gen.partition_paths(ROWS).to_pylist() == ["a/20231114", "__HIVE_DEFAULT_PARTITION__/19700101",
                                                      "b/c/20200913"]
    by_type = {**custom(), "hoodie.datasource.write.keygenerator.type": "CUSTOM"}
    del by_type["hoodie.datasource.write.keygenerator.class"]
    assert resolve_write_config(by_type, None).keygen.class_name == CUSTOM


def test_custom_partition_fields_need_their_types():
    with pytest.raises(KeyGeneratorConfigError, match="every field of hoodie.datasource.write.partitionpath.field"):
        resolve_write_config(custom(**{"hoodie.datasource.write.partitionpath.field": "region,ms:TIMESTAMP"}), None)
    with pytest.raises(KeyGeneratorConfigError, match="only CustomKeyGenerator reads"):
        resolve_write_config({**BASE, "hoodie.datasource.write.partitionpath.field": "region:SIMPLE"}, None)


def props(path):
    return parse_properties((path / ".hoodie" / "hoodie.properties").read_text("latin-1"))


def stored(path):
    """(record key, partition path) of every record in the table's base files, read from the files."""
    out = read_table(str(path), ReadConfig())
    return sorted(zip(out.column("_hoodie_record_key").to_pylist(), out.column("_hoodie_partition_path").to_pylist()))


@pytest.mark.parametrize("operation", ["upsert", "bulk_insert"])
def test_local_writes_file_records_under_hudis_paths(tmp_path, operation):
    opts = {**BASE, "hoodie.datasource.write.keygenerator.class": TS, "hoodie.datasource.write.partitionpath.field":
            "ms", P + "timestamp.type": "EPOCHMILLISECONDS", P + "output.dateformat": "yyyy/MM/dd",
            P + "output.timezone": "Asia/Kolkata", "hoodie.datasource.write.operation": operation,
            "hoodie.datasource.write.hive_style_partitioning": "true"}
    write_local(str(tmp_path), ROWS, opts)
    assert stored(tmp_path) == [("1", "ms=2023/11/15"), ("2", "ms=1970/01/01"), ("3", "ms=2020/09/13")]
    assert (tmp_path / "ms=2023" / "11" / "15").is_dir()
    theirs = hudi_rs(str(tmp_path))  # hudi-rs reads it alike
    assert sorted(zip(theirs.column("_hoodie_record_key").to_pylist(),
                      theirs.column("_hoodie_partition_path").to_pylist())) == stored(tmp_path)
    recorded = props(tmp_path)
    assert recorded["hoodie.table.keygenerator.class"] == TS
    assert {k: v for k, v in recorded.items() if k.startswith(P)} == {  # Hudi records all but the type
        P + "output.dateformat": "yyyy/MM/dd", P + "output.timezone": "Asia/Kolkata"}
    # a later write names the type; the table gives the rest: key 1 is updated in its day, key 4 is new
    later = {k: v for k, v in opts.items() if k in (*BASE, P + "timestamp.type")}
    write_local(str(tmp_path), pa.table({"id": [1, 4], "region": ["x", "y"], "ms": [1700000000999, 1500000000000]}),
                {**later, "hoodie.datasource.write.operation": "upsert"})
    assert stored(tmp_path) == [("1", "ms=2023/11/15"), ("2", "ms=1970/01/01"), ("3", "ms=2020/09/13"),
                                ("4", "ms=2017/07/14")]
    assert sorted(read_table(str(tmp_path), ReadConfig()).column("region").to_pylist(), key=str) == \
        ["b/c", "x", "y", None][:0] + sorted(["x", None, "b/c", "y"], key=str)


def test_a_later_write_cannot_change_the_tables_partitioning(tmp_path):
    opts = {**BASE, "hoodie.datasource.write.keygenerator.class": TS, "hoodie.datasource.write.partitionpath.field":
            "ms", P + "timestamp.type": "EPOCHMILLISECONDS", P + "output.dateformat": "yyyy/MM/dd"}
    write_local(str(tmp_path), ROWS, opts)
    before = stored(tmp_path)
    for change, match in [({P + "output.dateformat": "yyyy-MM"}, "created with 'yyyy/MM/dd'"),
                          ({P + "output.timezone": "Asia/Tokyo"}, "created with no value"),
                          ({"hoodie.datasource.write.keygenerator.class": CUSTOM}, "cannot change it"),
                          ({P + "timestamp.type": None}, "timestamp.type is required")]:
        attempt = {k: v for k, v in {**opts, **change}.items() if v is not None}
        with pytest.raises(HoodieConfigError, match=match):
            write_local(str(tmp_path), ROWS, attempt)
    assert stored(tmp_path) == before
    # the key generator is the table's when a write does not name one
    write_local(str(tmp_path), ROWS.slice(0, 1), {k: v for k, v in opts.items()
                                                   if k != "hoodie.datasource.write.keygenerator.class"})
    assert stored(tmp_path) == before


def test_local_custom_write_reads_back(tmp_path):
    write_local(str(tmp_path), ROWS, custom(**{"hoodie.datasource.write.operation": "insert"}))
    assert stored(tmp_path) == [("1", "a/20231114"), ("2", "__HIVE_DEFAULT_PARTITION__/19700101"),
                                ("3", "b/c/20200913")]
    recorded = props(tmp_path)
    assert recorded["hoodie.table.keygenerator.class"] == CUSTOM
    assert recorded["hoodie.table.partition.fields"] == "region,ms"  # Hudi 0.15 records the names alone
    assert not any(k.startswith(P) for k in recorded)
    theirs = hudi_rs(str(tmp_path))  # hudi-rs reads it alike
    assert sorted(zip(theirs.column("_hoodie_record_key").to_pylist(), theirs.column("_hoodie_partition_path")
                      .to_pylist(), theirs.column("ms").to_pylist())) == [
        ("1", "a/20231114", 1700000000123), ("2", "__HIVE_DEFAULT_PARTITION__/19700101", None),
        ("3", "b/c/20200913", 1600000000000)]
    files = sorted(p.relative_to(tmp_path).parent.as_posix() for p in tmp_path.rglob("*.parquet"))
    assert files == ["__HIVE_DEFAULT_PARTITION__/19700101", "a/20231114", "b/c/20200913"]
    assert pq.read_table(next((tmp_path / "a" / "20231114").glob("*.parquet"))).column("ms").to_pylist() == \
        [1700000000123]


def test_a_reader_of_keys_needs_no_timestamp_options_but_a_write_does(tmp_path):
    opts = {**BASE, "hoodie.datasource.write.keygenerator.class": TS, "hoodie.datasource.write.partitionpath.field":
            "ms", P + "timestamp.type": "EPOCHMILLISECONDS", P + "output.dateformat": "yyyy/MM/dd"}
    write_local(str(tmp_path), ROWS, opts)
    existing = load_table_config(open_storage(str(tmp_path), {}))
    gen = resolve_write_config({}, existing).keygen  # as a lookup by key resolves it
    assert gen.class_name == TS and gen.record_keys(ROWS).to_pylist() == ["1", "2", "3"]
    with pytest.raises(KeyGeneratorConfigError, match="timestamp.type is required"):
        gen.check_complete()
    with pytest.raises(KeyGeneratorConfigError, match="timestamp.type is required"):
        gen.partition_paths(ROWS)


def test_a_column_the_timestamp_type_does_not_take_is_refused_before_anything_is_written(tmp_path):
    opts = {**BASE, "hoodie.datasource.write.keygenerator.class": TS, "hoodie.datasource.write.partitionpath.field":
            "ms", P + "timestamp.type": "EPOCHMILLISECONDS", P + "output.dateformat": "yyyy/MM/dd"}
    for column, match in [(["1700000000000"], "string column"), ([True], "bool column")]:
        with pytest.raises(KeyGeneratorConfigError, match=match):
            write_local(str(tmp_path / "t"), pa.table({"id": [1], "ms": column}), opts)
        assert not (tmp_path / "t").exists()


def test_the_table_records_options_as_given_and_compares_them_as_hudi_reads_them(tmp_path):
    opts = {**BASE, "hoodie.datasource.write.keygenerator.class": TS, "hoodie.datasource.write.partitionpath.field":
            "d", P + "timestamp.type": "SCALAR", P + "timestamp.scalar.time.unit": "days",
            P + "output.dateformat": "yyyy/MM/dd"}
    data = pa.table({"id": [1], "d": [19000]})
    write_local(str(tmp_path), data, opts)
    assert props(tmp_path)[P + "timestamp.scalar.time.unit"] == "days"  # as Hudi records it, the value given
    write_local(str(tmp_path), data, {**opts, P + "timestamp.scalar.time.unit": "DAYS"})  # the same unit
    with pytest.raises(KeyGeneratorConfigError, match="created with 'days'"):
        write_local(str(tmp_path), data, {**opts, P + "timestamp.scalar.time.unit": "HOURS"})
    assert stored(tmp_path) == [("1", "2022/01/08")]


@pytest.mark.parametrize("zip_rel, column, typ", [
    ("sample_table/cow/v9_timebasedkeygen_epochmillis.zip", "ts_millis", pa.int64()),
    ("sample_table/cow/v9_timebasedkeygen_nonhivestyle.zip", "ts_str", pa.string()),  # yyyy-MM-dd'T'HH:mm:ss.SSSZ
])
def test_the_paths_of_hudi_1_tables_are_ours(tmp_path, zip_rel, column, typ):
    """Tables Hudi 1.x wrote with its timestamp-based key generator (options in their hoodie.properties): our
    key generator, from those options alone, puts every record where Hudi did."""
    base = unzip_table(zip_rel, tmp_path)
    existing = load_table_config(open_storage(str(base), {}))
    keygen = resolve_write_config({}, existing).keygen
    rows = read_table(str(base))
    values = pa.table({"txn_id": rows.column("txn_id"), column: rows.column(column).cast(typ)})
    assert keygen.partition_paths(values).to_pylist() == rows.column("_hoodie_partition_path").to_pylist()
    assert len(set(rows.column("_hoodie_partition_path").to_pylist())) >= 4
