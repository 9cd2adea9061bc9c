"""The read client in the local engine (``HoodieTable.read_keys`` / ``filter_exists``, ``read.key_lookup``): under
every index, on both table types, the records of the keys asked are those a snapshot read holds (updated in a log,
deleted in a log, moved partition under a global index, new in a bucket's log), keys absent, asked twice or without
a record key find nothing more, and only the file groups the index names are read."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.errors import HoodieConfigError, SchemaMismatchError, UnsupportedTableError
from hoodie_datasource.read.key_lookup import KeyLookup
from hoodie_datasource.table.file_names import BaseFileName
from hoodie_datasource.table.meta_columns import FILE_NAME_COLUMN, PARTITION_PATH_COLUMN, RECORD_KEY_COLUMN
from hoodie_datasource.table.table import Table
from tests.conftest import unzip_table
from tests.counting_storage import FileReadLog
from tests.key_lookup_tables import (
    INDEXES,
    TABLE_TYPES,
    asked,
    expected_new,
    expected_records,
    history,
    index_options,
    is_global,
    options,
    rows,
    sorted_records,
)


@pytest.fixture(scope="module", params=[(i, t) for t in TABLE_TYPES for i in INDEXES],
                ids=lambda p: f"{p[0]}-{p[1]}")
def written(request, tmp_path_factory) -> tuple[str, str, str]:
    index, table_type = request.param
    path = str(tmp_path_factory.mktemp("read_client") / "t")
    history(path, index, table_type)
    return path, index, table_type


def test_read_keys_is_the_snapshot_filtered_by_key(written):
    path, index, _ = written
    table = HoodieTable(path)
    global_index = is_global(index)
    got = sorted_records(table.read_keys(asked(), **index_options(index)))
    assert got == expected_records(table.scan(), asked(), global_index)
    found = {(r["id"], r[PARTITION_PATH_COLUMN]): r["v"] for r in got}
    assert found["k00", "x"] == 100 and ("k06", "x") not in found and found["k30", "x"] == 130
    assert ("k99", "x") not in found and len(got) == len(found)  # asked twice, read once
    if global_index:  # held wherever they live: k03 moved to x, k01 stays in y
        assert found == {("k00", "x"): 100, ("k03", "x"): 103, ("k30", "x"): 130, ("k01", "y"): 1, ("k02", "x"): 2}
    else:  # k03 in both partitions, k01 not in x
        assert found == {("k00", "x"): 100, ("k03", "y"): 3, ("k03", "x"): 103, ("k30", "x"): 130, ("k02", "x"): 2}


def test_filter_exists_keeps_the_rows_whose_keys_the_table_does_not_hold(written):
    path, index, _ = written
    table = HoodieTable(path)
    global_index = is_global(index)
    incoming = asked().append_column("v", pa.array(range(len(asked())), pa.int64()))
    got = table.filter_exists(incoming, **index_options(index)).to_pylist()
    assert got == expected_new(table.scan(), incoming, global_index)
    new = [(r["id"], r["p"]) for r in got]
    assert new[:3] == [("k06", "x"), ("k99", "x"), (None, "x")]  # deleted, absent, no key: in order
    assert new[3:] == ([] if global_index else [("k01", "x")]) + [("k99", "x")]  # k01 lives in y; k99 again


def test_keys_without_their_partition_under_a_global_index(written):
    path, index, _ = written
    table = HoodieTable(path)
    keys = pa.table({"id": ["k03", "k05", "k06"]})
    if is_global(index):
        got = table.read_keys(keys, **index_options(index))
        assert sorted((r["id"], r["p"], r["v"]) for r in got.to_pylist()) == [("k03", "x", 103), ("k05", "y", 5)]
    else:
        with pytest.raises(SchemaMismatchError, match=r"no column p: a lookup under .* takes the record key and "
                                                      r"partition fields \(id, p\)"):
            table.read_keys(keys, **index_options(index))


@pytest.mark.parametrize("table_type", TABLE_TYPES)
@pytest.mark.parametrize("index", INDEXES)
def test_only_the_file_groups_holding_the_keys_are_read(tmp_path, index, table_type):
    """Six file groups in one partition (four, the bucket index's buckets), keys of two of them asked: the records
    are read from those two alone (the index's own reads, footers and stored keys, are made once before, and kept by
    the process)."""
    path = str(tmp_path / "t")
    opts = {**options(index, table_type), "hoodie.datasource.write.operation": "insert"}
    for shift in range(6):
        write_local(path, rows(*[(f"k{i:02d}", 1, "x", i) for i in range(shift, 60, 6)]), opts)
    write_local(path, rows(("k07", 2, "x", 70)), options(index, table_type))  # a log block on merge-on-read
    snapshot = HoodieTable(path).scan()
    file_ids = [file_id(name) for name in snapshot.column(FILE_NAME_COLUMN).to_pylist()]
    groups = sorted(set(file_ids))
    assert len(groups) >= 4
    by_group = {g: [k for k, f in zip(snapshot.column(RECORD_KEY_COLUMN).to_pylist(), file_ids) if f == g]
                for g in groups}
    wanted = by_group[groups[0]][:2] + by_group[groups[-1]][:1]
    storage = FileReadLog(path, str(tmp_path / "reads.log"))
    lookup = KeyLookup.of(Table.load(storage), index_options(index))
    assert lookup.index.config.index_type == index  # the record index is ready: no fallback to GLOBAL_SIMPLE
    keys = pa.table({"id": wanted, "p": ["x"] * len(wanted)})
    absent = pa.table({"id": ["k99"], "p": ["x"]})
    for warm in (keys, absent):  # the index's footers, filters and stored keys, read once
        lookup.locate(lookup.key_rows(warm))
    storage.file_groups_read()
    got = lookup.read_keys(keys)
    assert sorted(got.column(RECORD_KEY_COLUMN).to_pylist()) == sorted(wanted)
    assert storage.file_groups_read() == {("x", groups[0]), ("x", groups[-1])}
    assert lookup.read_keys(absent).num_rows == 0
    # a lookup index finds no file for a key no file holds; a bucket index names its bucket's group
    assert len(storage.file_groups_read()) == (1 if index == "BUCKET" else 0)


def file_id(file_name: str) -> str:
    """The file group of a row from its ``_hoodie_file_name`` (a log record's is its file id)."""
    parsed = BaseFileName.parse(file_name)
    return parsed.file_id if parsed is not None else file_name


def test_a_key_column_of_another_kind_or_missing_is_refused(tmp_path):
    path = str(tmp_path / "t")
    history(path, "BLOOM", "COPY_ON_WRITE")
    table = HoodieTable(path)
    with pytest.raises(SchemaMismatchError, match=r"Key column 'id' is int64 but the table stores string"):
        table.read_keys(pa.table({"id": [1], "p": ["x"]}))
    with pytest.raises(SchemaMismatchError, match=r"The keys have no column id.*the keys' columns are: key, p"):
        table.filter_exists(pa.table({"key": ["k00"], "p": ["x"]}))
    with pytest.raises(HoodieConfigError, match="hoodie.index.type"):
        table.read_keys(pa.table({"id": ["k00"], "p": ["x"]}), **{"hoodie.index.type": "HBASE"})


def test_key_columns_of_a_wider_type_find_the_keys(tmp_path):
    """An int key given as a bigint makes the same record keys a write of the table's ints made; one the table's
    type cannot hold is refused."""
    path = str(tmp_path / "t")
    data = pa.table({"id": pa.array([1, 2, 3], pa.int32()), "ts": [1, 1, 1], "p": ["x", "x", "y"]})
    write_local(path, data, {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p",
                             "precombine.field": "ts"})
    table = HoodieTable(path)
    got = table.read_keys(pa.table({"id": pa.array([2, 3], pa.int64()), "p": ["x", "x"]}))
    assert got.column("id").to_pylist() == [2]
    with pytest.raises(SchemaMismatchError, match="Key column 'id' does not fit the table's type int32"):
        table.read_keys(pa.table({"id": pa.array([2 ** 40], pa.int64()), "p": ["x"]}))


def test_a_bucket_count_other_than_the_tables_is_refused(tmp_path):
    path = str(tmp_path / "t")
    history(path, "BUCKET", "MERGE_ON_READ")
    with pytest.raises(HoodieConfigError, match="written with 4 buckets"):
        HoodieTable(path).read_keys(asked(), **{"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "8"})


HUDI_TABLES = ["sample_table/cow/v6_complexkeygen_hivestyle.zip", "sample_table/cow/v6_simplekeygen_nonhivestyle.zip",
               "sample_table/cow/v6_nonpartitioned.zip", "sample_table/mor/parquet/v6_nonpartitioned.zip",
               "sample_table/mor/parquet/v6_nonpartitioned_rollback.zip"]


@pytest.mark.parametrize("index", ["BLOOM", "GLOBAL_SIMPLE"])
@pytest.mark.parametrize("zip_rel", HUDI_TABLES)
def test_the_records_of_tables_apache_hudi_wrote_are_found_by_their_keys(tmp_path, zip_rel, index):
    """Every record of a table Apache Hudi 0.15 wrote (its bloom filters, its complex and non-partitioned keys, a
    merge-on-read log and a rolled-back one) is found by its key fields, and none is new; a key changed is not."""
    table = HoodieTable(str(unzip_table(zip_rel, tmp_path)))
    snapshot = table.scan()
    config = table.config
    keys = snapshot.select(list(dict.fromkeys((*config.record_key_fields, *config.partition_fields))))
    assert snapshot.num_rows > 0
    assert sorted_records(table.read_keys(keys, **{"hoodie.index.type": index})) == sorted_records(snapshot)
    assert table.filter_exists(keys, **{"hoodie.index.type": index}).num_rows == 0
    field = config.record_key_fields[0]
    changed = keys.set_column(keys.schema.get_field_index(field), field,
                              pc.add(keys.column(field), 1_000_000) if pa.types.is_integer(keys.schema.field(field).type)
                              else pc.binary_join_element_wise(keys.column(field), "-new", ""))
    assert table.read_keys(changed, **{"hoodie.index.type": index}).num_rows == 0
    assert table.filter_exists(changed, **{"hoodie.index.type": index}).num_rows == keys.num_rows


def test_a_table_of_time_formatted_partition_paths_is_read_by_key_under_a_global_index_only(tmp_path):
    """A partition-local lookup would need the timestamp key generator's paths (``yyyy/MM/dd/HH`` of ``ts_str``):
    refused, naming it; a global index finds every key wherever it lives (a key the table holds twice, which an
    index locates in one file group, once)."""
    table = HoodieTable(str(unzip_table("sample_table/cow/v9_timebasedkeygen_nonhivestyle.zip", tmp_path)))
    snapshot = table.scan()
    with pytest.raises(UnsupportedTableError, match="makes its partition paths with TimestampBasedKeyGenerator"):
        table.read_keys(snapshot.select(["txn_id", "ts_str"]))
    got = table.read_keys(snapshot.select(["txn_id"]), **{"hoodie.index.type": "GLOBAL_BLOOM"})
    stored = snapshot.column(RECORD_KEY_COLUMN).to_pylist()
    assert len(stored) > len(set(stored)) and sorted(got.column(RECORD_KEY_COLUMN).to_pylist()) == sorted(set(stored))
