"""``HoodieReadClient`` through real Spark: under every index, on both table types, ``read_keys`` is the snapshot
read (``format("hoodie")``) filtered to the keys asked, and ``filter_exists`` the rows whose keys that snapshot does
not hold (the tables of tests/key_lookup_tables.py: updates and deletes in log blocks, a key moved partition, a new
key in a bucket's log); only the file groups holding the keys are read, by Spark's Python workers too."""

from __future__ import annotations

import pytest
from chispa import assert_df_equality
from pyspark.sql import functions as F

from hoodie_datasource import HoodieReadClient, HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.errors import SchemaMismatchError
from hoodie_datasource.table import table as table_module
from hoodie_datasource.table.meta_columns import PARTITION_PATH_COLUMN, RECORD_KEY_COLUMN
from tests.counting_storage import FileReadLog
from tests.key_lookup_tables import (
    ASKED,
    INDEXES,
    TABLE_TYPES,
    expected_new,
    history,
    index_options,
    is_global,
    rows,
)

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module", params=[(i, t) for t in TABLE_TYPES for i in INDEXES],
                ids=lambda p: f"{p[0]}-{p[1]}")
def written(request, tmp_path_factory) -> tuple[str, str]:
    index, table_type = request.param
    path = str(tmp_path_factory.mktemp("read_client") / "t")
    history(path, index, table_type)
    return path, index


def _keys(spark):
    return spark.createDataFrame(ASKED, "id string, p string")


def test_read_keys_equals_the_snapshot_filtered_by_key(spark, written):
    path, index = written
    global_index = is_global(index)
    got = HoodieReadClient(spark, path, index_options(index)).read_keys(_keys(spark))
    snapshot = spark.read.format("hoodie").load(path)
    wanted = _keys(spark).where(F.col("id").isNotNull()).select(
        F.col("id").alias(RECORD_KEY_COLUMN), F.col("p").alias(PARTITION_PATH_COLUMN)).distinct()
    on = [RECORD_KEY_COLUMN] if global_index else [RECORD_KEY_COLUMN, PARTITION_PATH_COLUMN]
    expected = snapshot.join(wanted.select(*on).distinct(), on=on, how="left_semi").select(*snapshot.columns)
    assert got.schema == snapshot.schema
    assert_df_equality(got, expected, ignore_row_order=True)
    found = {(r.id, r.p): r.v for r in got.collect()}
    assert found["k00", "x"] == 100 and found["k30", "x"] == 130 and ("k06", "x") not in found
    assert (("k03", "y") in found) == (not global_index) and (("k01", "y") in found) == global_index


def test_filter_exists_keeps_the_rows_whose_keys_the_table_does_not_hold(spark, written):
    path, index = written
    incoming = spark.createDataFrame([(i, p, n) for n, (i, p) in enumerate(ASKED)], "id string, p string, n long")
    got = HoodieReadClient(spark, path, index_options(index)).filter_exists(incoming)
    assert got.columns == ["id", "p", "n"]
    new = expected_new(HoodieTable(path).scan(), incoming.toArrow(), is_global(index))
    assert sorted(r.n for r in got.collect()) == [r["n"] for r in new]
    assert [(r["id"], r["p"]) for r in new if r["id"] in ("k06", "k99", None)] == [
        ("k06", "x"), ("k99", "x"), (None, "x"), ("k99", "x")]


def test_only_the_file_groups_holding_the_keys_are_read(spark, tmp_path, monkeypatch):
    """Under a bucket index nothing is read to place a key (its bucket names its group), so every file read is a
    record read: of the two groups holding the keys asked, and of no other, in the driver and the workers."""
    path = str(tmp_path / "t")
    opts = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
            "hoodie.datasource.write.table.type": "MERGE_ON_READ", **index_options("BUCKET")}
    write_local(path, rows(*[(f"k{i:02d}", 1, "x", i) for i in range(40)]), opts)
    write_local(path, rows(("k07", 2, "x", 70)), opts)  # a log block to merge
    groups = {r[0]: r[1] for r in spark.read.format("hoodie").load(path).select(
        RECORD_KEY_COLUMN, F.split(F.col("_hoodie_file_name"), "_")[0]).collect()}
    first, second, *others = sorted(set(groups.values()))
    assert others
    wanted = [k for k, g in sorted(groups.items()) if g == first][:2] + [k for k, g in groups.items() if g == second]
    storage = FileReadLog(path, str(tmp_path / "reads.log"))
    monkeypatch.setattr(table_module, "open_storage", lambda uri, options: storage)
    client = HoodieReadClient(spark, path, index_options("BUCKET"))
    storage.file_groups_read()
    got = client.read_keys(spark.createDataFrame([(k, "x") for k in wanted], "id string, p string")).collect()
    assert sorted(r.id for r in got) == sorted(wanted) and {r.v for r in got if r.id == "k07"} <= {70}
    assert storage.file_groups_read() == {("x", first), ("x", second)}


def test_a_missing_or_mistyped_key_column_is_refused_before_any_job(spark, tmp_path):
    path = str(tmp_path / "t")
    history(path, "BLOOM", "COPY_ON_WRITE")
    client = HoodieReadClient(spark, path)
    with pytest.raises(SchemaMismatchError, match=r"The keys have no column p: a lookup under BLOOM takes the record "
                                                  r"key and partition fields \(id, p\)"):
        client.read_keys(spark.createDataFrame([("k00",)], "id string"))
    with pytest.raises(SchemaMismatchError, match="Key column 'p' is int64 but the table stores string"):
        client.filter_exists(spark.createDataFrame([("k00", 1)], "id string, p long"))
    global_client = HoodieReadClient(spark, path, {"hoodie.index.type": "GLOBAL_BLOOM"})
    assert [r.v for r in global_client.read_keys(spark.createDataFrame([("k02",)], "id string")).collect()] == [2]


def test_a_client_shows_the_table_as_of_its_listing_until_refresh(spark, tmp_path):
    path = str(tmp_path / "t")
    history(path, "BLOOM", "MERGE_ON_READ")
    client = HoodieReadClient(spark, path)
    write_local(path, rows(("k40", 1, "x", 40)), {"table.name": "t", "recordkey.field": "id",
                                                  "partitionpath.field": "p", "precombine.field": "ts"})
    keys = spark.createDataFrame([("k40", "x")], "id string, p string")
    assert client.read_keys(keys).count() == 0
    assert [r.v for r in client.refresh().read_keys(keys).collect()] == [40]
