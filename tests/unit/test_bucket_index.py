"""Hudi's simple bucket index: the bucket of a key as Java computes it, bucket file ids, and writes
that place every record in its bucket's file group (no JVM)."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi import HudiTableBuilder
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.write_config import resolve_write_config
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.index.bucket_id import bucket_id_of_file, bucket_ids, new_bucket_file_id
from hoodie_datasource.index.bucket_index import bucket_file_groups
from hoodie_datasource.index.key_ranges import FileKeyRange
from hoodie_datasource.table.string_hash import java_string_hashes
from hoodie_datasource.write import record_writer
from tests.unit.small_tables import batch
from tests.unit.small_tables import read_pairs as read


def _java_string_hash(s: str) -> int:
    """String.hashCode over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    units = s.encode("utf-16-le")
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i:i + 2], "little")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _java_bucket(values: list[str | None], n: int) -> int:
    """BucketIdentifier.getBucketId(List<String>, n): (list.hashCode() & Integer.MAX_VALUE) % n."""
    h = 1
    for v in values:
        h = (31 * h + (0 if v is None else _java_string_hash(v))) & 0xFFFFFFFF
    return (h & 0x7FFFFFFF) % n


def test_java_string_hash_of_known_strings():
    # "hello world".hashCode() == 1794106052; "abc" == 96354; a surrogate pair counts as two code units
    got = java_string_hashes(pa.array(["", "a", "abc", "hello world", None, "é😀x", "polygenelubricants"]))
    assert got.view("int32").tolist() == [0, 97, 96354, 1794106052, 0, 61901292, -2147483648]


def test_java_string_hash_of_strings_of_one_length():
    # keys of one length take the column-at-a-time path: "polygenelubricants" hashes to Integer.MIN_VALUE
    keys = ["polygenelubricants", "hello world, hudi!", "033412758654228-10"]
    assert [len(k) for k in keys] == [18] * 3
    assert java_string_hashes(pa.array(keys)).view("int32").tolist() == [_java_string_hash(k) for k in keys]
    assert java_string_hashes(pa.array(keys)).view("int32")[0] == -2147483648
    many = [f"{i:015d}-{i * 7919 % 10**12:012d}" for i in range(0, 10**6, 997)]
    assert java_string_hashes(pa.array(many)).view("int32").tolist() == [_java_string_hash(k) for k in many]


def test_bucket_of_simple_keys_by_hand():
    # List.of("1").hashCode() = 31 + 49 = 80; List.of("15") = 31 + (49 * 31 + 53) = 1603
    assert bucket_ids(pa.array(["1", "15", "99"]), ["id"], 3).tolist() == [80 % 3, 1603 % 3, 1855 % 3]


def test_a_simple_key_spelling_a_placeholder_hashes_as_it_is():
    # KeyGenUtils.extractRecordKeysByFields maps __empty__ / __null__ only in a "field:value" part
    keys = pa.array(["__empty__", "__null__", "id:__empty__", "id:__null__"])
    assert bucket_ids(keys, ["id"], 1000).tolist() == [
        _java_bucket(["__empty__"], 1000), _java_bucket(["__null__"], 1000), _java_bucket([""], 1000),
        _java_bucket([None], 1000)]


def test_complex_keys_hash_the_hash_fields_values_in_key_order():
    keys = pa.array(["id:1,name:x", "id:1,name:y", "name:__null__,id:2", "id:__empty__,name:z"])
    assert bucket_ids(keys, ["id"], 1000).tolist() == [
        _java_bucket(["1"], 1000), _java_bucket(["1"], 1000), _java_bucket(["2"], 1000), _java_bucket([""], 1000)]
    assert bucket_ids(keys, ["id", "name"], 1000).tolist() == [
        _java_bucket(["1", "x"], 1000), _java_bucket(["1", "y"], 1000), _java_bucket([None, "2"], 1000),
        _java_bucket(["", "z"], 1000)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_characters=",:", blacklist_categories=("Cs",)),
                        max_size=12), min_size=1, max_size=30),
       st.integers(min_value=1, max_value=257))
def test_buckets_match_javas_hash_codes(values, n):
    expected = [_java_bucket([v], n) for v in values]
    assert bucket_ids(pa.array(values, pa.string()), ["id"], n).tolist() == expected
    pairs = pa.array([f"a:{v},b:{v[::-1]}" for v in values])
    assert bucket_ids(pairs, ["a", "b"], n).tolist() == [_java_bucket([_field_value(v), _field_value(v[::-1])], n)
                                                         for v in values]


def _field_value(value: str) -> str | None:
    """The value a "field:value" part stands for (KeyGenUtils: the placeholders mean "" and null)."""
    return {"__empty__": "", "__null__": None}.get(value, value)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=40)),
                min_size=1, max_size=60), st.integers(min_value=0, max_value=5))
def test_ascii_string_hashes_match_javas_also_on_a_sliced_array(values, cut):
    # all-ASCII arrays hash from their bytes; a slice starts its offsets past the buffer's first byte
    array = pa.array(["head", "x" * 50, *values], pa.string()).slice(min(cut, 2))
    expected = [0 if v is None else _java_string_hash(v) for v in array.to_pylist()]
    assert java_string_hashes(array).view("int32").tolist() == expected
    assert java_string_hashes(pa.chunked_array([array, array])).view("int32").tolist() == expected * 2


def test_bucket_file_ids_carry_the_bucket():
    file_id = new_bucket_file_id("20240101000000000", "p=1", 7)
    assert file_id[:8] == "00000007" and file_id.endswith("-0") and len(file_id) == 38
    assert bucket_id_of_file(file_id) == 7
    assert new_bucket_file_id("20240101000000000", "p=1", 7) == file_id  # a retried task names the same file


def _options(table_type: str = "COPY_ON_WRITE", **extra: str) -> dict[str, str]:
    return {"hoodie.table.name": "b", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.index.type": "BUCKET",
            "hoodie.bucket.index.num.buckets": "3", **extra}


def _file_groups(path: str) -> dict[tuple[str, str], set[str]]:
    """(partition, file id) -> the record keys of its base files (the latest is a superset)."""
    groups: dict[tuple[str, str], set[str]] = {}
    for part in ("a", "b"):
        for name in os.listdir(os.path.join(path, part)):
            if name.endswith(".parquet"):
                keys = pq.read_table(os.path.join(path, part, name), columns=["_hoodie_record_key"])
                groups.setdefault((part, name[:38]), set()).update(keys.column(0).to_pylist())
    return groups


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_inserts_and_upserts_go_to_their_buckets(tmp_path, table_type):
    path = str(tmp_path / "t")
    rows = [(str(i), 1, "a" if i < 10 else "b", i) for i in range(20)]
    write_local(path, batch(rows), {**_options(table_type), "hoodie.datasource.write.operation": "insert"})
    groups = _file_groups(path)
    assert len(groups) == 6  # 3 buckets in each of the 2 partitions
    for (_, file_id), keys in groups.items():
        assert {int(b) for b in bucket_ids(pa.array(sorted(keys)), ["id"], 3)} == {bucket_id_of_file(file_id)}
    write_local(path, batch([("1", 2, "a", 100), ("15", 2, "b", 150), ("99", 2, "a", 990)]),
                {**_options(table_type), "hoodie.datasource.write.operation": "upsert"})
    assert set(_file_groups(path)) == set(groups)  # updates and the new key joined existing file groups
    if table_type == "MERGE_ON_READ":
        logs = [n for p in ("a", "b") for n in os.listdir(os.path.join(path, p)) if ".log." in n]
        assert {n[1:39] for n in logs} <= {f for _, f in groups} and logs
    expected = sorted({**{r[0]: r[3] for r in rows}, "1": 100, "15": 150, "99": 990}.items())
    assert read(path) == expected
    data = pa.Table.from_batches(HudiTableBuilder.from_base_uri(path).build().read())
    assert sorted(zip(data.column("id").to_pylist(), data.column("v").to_pylist())) == expected


@pytest.mark.parametrize("pending_bytes", [1, record_writer.PENDING_LOG_BYTES])
def test_log_files_created_together_or_one_by_one_hold_every_update(tmp_path, monkeypatch, pending_bytes):
    # 1 byte: each log file is created as soon as it is encoded; the default: all six at once
    monkeypatch.setattr(record_writer, "PENDING_LOG_BYTES", pending_bytes)
    path = str(tmp_path / "t")
    rows = [(str(i), 1, "a" if i < 10 else "b", i) for i in range(20)]
    write_local(path, batch(rows), {**_options("MERGE_ON_READ"), "hoodie.datasource.write.operation": "insert"})
    write_local(path, batch([(str(i), 2, "a" if i < 10 else "b", 10 * i) for i in range(20)]),
                {**_options("MERGE_ON_READ"), "hoodie.datasource.write.operation": "upsert"})
    logs = sorted(f"{p}/{n}" for p in ("a", "b") for n in os.listdir(os.path.join(path, p)) if ".log." in n)
    assert len(logs) == 6 and not [n for n in os.listdir(path) if n.endswith(".tmp")]
    table = HoodieTable(path)
    stats = table.commit_metadata(table.latest_commit())["partitionToWriteStats"]
    assert sorted(s["path"] for group in stats.values() for s in group) == logs
    expected = sorted((str(i), 10 * i) for i in range(20))
    assert read(path) == expected
    data = pa.Table.from_batches(HudiTableBuilder.from_base_uri(path).build().read())
    assert sorted(zip(data.column("id").to_pylist(), data.column("v").to_pylist())) == expected


def test_deletes_of_keys_in_buckets_without_a_file_group_are_dropped(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("1", 1, "a", 1)]), _options())
    write_local(path, batch([("1", 2, "a", 1), ("2", 2, "a", 2), ("3", 2, "b", 3)]),
                {**_options(), "hoodie.datasource.write.operation": "delete"})
    assert read(path) == []
    assert os.listdir(os.path.join(path, "a")) and not os.path.exists(os.path.join(path, "b"))


def test_consistent_hashing_engine_is_refused(tmp_path):
    with pytest.raises(HoodieConfigError, match="CONSISTENT_HASHING.*SIMPLE"):
        write_local(str(tmp_path / "t"), batch([("1", 1, "a", 1)]),
                    _options(**{"hoodie.index.bucket.engine": "CONSISTENT_HASHING"}))


def test_hash_field_must_be_a_record_key_field(tmp_path):
    with pytest.raises(HoodieConfigError, match="hoodie.bucket.index.hash.field v"):
        write_local(str(tmp_path / "t"), batch([("1", 1, "a", 1)]), _options(**{"hoodie.bucket.index.hash.field": "v"}))


def test_fewer_buckets_than_the_table_was_written_with_is_refused(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([(str(i), 1, "a", i) for i in range(30)]), _options())
    with pytest.raises(HoodieConfigError, match="num.buckets=2 but the table was written with 3 buckets"):
        write_local(path, batch([("1", 2, "a", 5)]), _options(**{"hoodie.bucket.index.num.buckets": "2"}))
    assert read(path) == sorted((str(i), i) for i in range(30))


def test_file_ids_of_more_buckets_than_the_count_are_refused():
    # a table whose commits record no count (written by Apache Hudi) is checked by its file ids
    files = [FileKeyRange("a", new_bucket_file_id("20240101000000000", "a", b), f"a/{b}.parquet",
                          "20240101000000000", 1, 1, "k", "k") for b in (0, 2)]
    assert set(bucket_file_groups(files, 3)) == {("a", 0), ("a", 2)}
    with pytest.raises(HoodieConfigError, match="num.buckets=2 .*bucket 2.*at least 3 buckets"):
        bucket_file_groups(files, 2)


def test_bucket_options_default_as_hudis_spark_writer():
    index = resolve_write_config({**_options(), "hoodie.bucket.index.num.buckets": "256"}, None).index
    defaults = resolve_write_config({k: v for k, v in _options().items() if "num.buckets" not in k}, None).index
    assert defaults == index and defaults.bucket_hash_fields == ("id",) and defaults.index_type == "BUCKET"


def test_trailing_empty_parts_are_dropped_as_javas_split_does():
    # "a,".split(",") == ["a"]; ",".split(",") == [] (List.of().hashCode() == 1); "".split(",") == [""]
    got = bucket_ids(pa.array(["a,", "a,,", ",", "", ",a"]), ["id"], 1000).tolist()
    assert got == [_java_bucket(["a"], 1000), _java_bucket(["a"], 1000), 1, _java_bucket([""], 1000),
                   _java_bucket(["", "a"], 1000)]


def test_a_table_written_with_another_index_cannot_switch_to_bucket(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("1", 1, "a", 1)]), {**_options(), "hoodie.index.type": "BLOOM"})
    # a file id of another index begins with 8 digits 2.3% of the time, read as a bucket number out of range
    with pytest.raises(HoodieConfigError, match="carries no bucket number|or with another index"):
        write_local(path, batch([("1", 2, "a", 5)]), _options())
    assert read(path) == [("1", 1)]


def test_more_buckets_than_the_table_was_written_with_is_refused(tmp_path):
    # 3 -> 8 buckets: no file id tells (buckets 0-2 exist either way), the count recorded in the commit does;
    # key "7" is in bucket 1 of 3 but bucket 7 of 8: it would be written a second time
    path = str(tmp_path / "t")
    write_local(path, batch([(str(i), 1, "a", i) for i in range(30)]), _options())
    with pytest.raises(HoodieConfigError, match="num.buckets=8 but the table was written with 3 buckets"):
        write_local(path, batch([("7", 2, "a", 70)]), _options(**{"hoodie.bucket.index.num.buckets": "8"}))
    write_local(path, batch([("7", 2, "a", 70)]), _options())
    assert read(path) == sorted((str(i), 70 if i == 7 else i) for i in range(30))


@pytest.mark.parametrize("operation", ["bulk_insert", "upsert"])
def test_bloom_filters_can_be_left_out_of_bucket_tables(tmp_path, operation):
    # hoodie.parquet.bloom.filter.enabled=false: a bucket index never reads them (HoodieFileWriterFactory)
    path = str(tmp_path / "t")
    off = _options(**{"hoodie.parquet.bloom.filter.enabled": "false"})
    write_local(path, batch([(str(i), 1, "a", i) for i in range(20)]),
                {**off, "hoodie.datasource.write.operation": operation})
    write_local(path, batch([("3", 2, "a", 30), ("40", 2, "a", 40)]), off)
    footers = [pq.read_metadata(os.path.join(path, "a", n)).metadata
               for n in os.listdir(os.path.join(path, "a")) if n.endswith(".parquet")]
    assert footers and all(b"org.apache.hudi.bloomfilter" not in f and b"hoodie_min_record_key" in f for f in footers)
    assert read(path) == sorted([*((str(i), i) for i in range(20) if i != 3), ("3", 30), ("40", 40)])
    data = pa.Table.from_batches(HudiTableBuilder.from_base_uri(path).build().read())
    assert data.num_rows == 21


def test_a_bloom_index_writes_bloom_filters_whatever_the_option_says(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("1", 1, "a", 1)]), {**_options(), "hoodie.index.type": "BLOOM",
                                                  "hoodie.parquet.bloom.filter.enabled": "false"})
    (name,) = [n for n in os.listdir(os.path.join(path, "a")) if n.endswith(".parquet")]
    assert b"org.apache.hudi.bloomfilter" in pq.read_metadata(os.path.join(path, "a", name)).metadata


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_insert_overwrite_writes_every_bucket_into_a_new_file_group(tmp_path, table_type):
    """The replaced file groups take no record (Hudi's SparkBucketIndexPartitioner: an overwrite always
    generates new bucket file ids); the untouched partition keeps its rows."""
    path = str(tmp_path / "t")
    rows = [(str(i), 1, "a" if i < 10 else "b", i) for i in range(20)]
    write_local(path, batch(rows), {**_options(table_type), "hoodie.datasource.write.operation": "insert"})
    before = {f for p, f in _file_groups(path) if p == "a"}
    write_local(path, batch([("1", 2, "a", 100), ("2", 2, "a", 200), ("77", 2, "a", 770)]),
                {**_options(table_type), "hoodie.datasource.write.operation": "insert_overwrite"})
    expected = sorted([("1", 100), ("2", 200), ("77", 770)] + [(str(i), i) for i in range(10, 20)])
    assert read(path) == expected
    data = pa.Table.from_batches(HudiTableBuilder.from_base_uri(path).build().read())
    assert sorted(zip(data.column("id").to_pylist(), data.column("v").to_pylist())) == expected
    latest = {n[:38] for n in os.listdir(os.path.join(path, "a")) if n.endswith(".parquet")} - before
    assert latest and all(bucket_id_of_file(f) < 3 for f in latest)
