"""Tables we write are read by the independent reader hudi-rs (PyPI ``hudi``) with the same
snapshot, time-travel and incremental results as our reader; and our reader returns the expected
contents of the real COW tables Apache Hudi wrote (../shared/hudi-tables)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql import Row

from hoodie_datasource import HoodieTable
from tests.conftest import require_module, unzip_table

hudi = require_module("hudi")
from hudi import HudiQueryType, HudiReadOptions, HudiTableBuilder  # noqa: E402

OPTS = {"table.name": "trips", "recordkey.field": "uuid", "partitionpath.field": "city", "precombine.field": "ts"}


def rs_rows(path, options=None, key="uuid"):
    table = HudiTableBuilder.from_base_uri(path).build()
    batches = table.read(options) if options is not None else table.read()
    data = pa.Table.from_batches(batches) if batches else pa.table({})
    if data.num_rows == 0:
        return []
    return sorted(data.select(["uuid", "ts", "city", "fare"]).to_pylist(), key=lambda r: r[key])


def our_rows(spark, path, **options):
    reader = spark.read.format("hoodie")
    for k, v in options.items():
        reader = reader.option(k, v)
    return sorted((r.asDict() for r in reader.load(path).select("uuid", "ts", "city", "fare").collect()),
                  key=lambda r: r["uuid"])


def write(spark, path, rows, mode="upsert", **extra):
    df = spark.createDataFrame([Row(uuid=u, ts=t, city=c, fare=f) for u, t, c, f in rows])
    df.write.format("hoodie").options(**OPTS, **extra).mode(mode).save(path)
    return HoodieTable(path).latest_commit()


def test_hudi_rs_reads_our_cow_table(spark, table_path):
    t1 = write(spark, table_path, [("a", 1, "sf", 1.0), ("b", 1, "nyc", 2.0), ("c", 1, "sf", 3.0)])
    t2 = write(spark, table_path, [("a", 2, "sf", 1.5), ("d", 2, "la", 4.0)])
    t3 = write(spark, table_path, [("c", 1, "sf", 0.0)], mode="delete")
    expected = our_rows(spark, table_path)
    assert [r["uuid"] for r in expected] == ["a", "b", "d"]
    assert rs_rows(table_path) == expected
    for instant in (t1, t2, t3):
        assert rs_rows(table_path, HudiReadOptions().with_as_of_timestamp(instant)) == our_rows(
            spark, table_path, **{"as.of.instant": instant})
    incremental = HudiReadOptions().with_query_type(HudiQueryType.Incremental).with_start_timestamp(t1)
    assert rs_rows(table_path, incremental) == our_rows(spark, table_path, query="incremental",
                                                         **{"begin.instant": t1})
    timeline = HudiTableBuilder.from_base_uri(table_path).build().get_timeline()
    assert [c.timestamp for c in timeline.get_completed_commits()] == [t1, t2, t3]


def test_hudi_rs_reads_overwrites_and_nonpartitioned(spark, tmp_path):
    path = str(tmp_path / "t")
    write(spark, path, [("a", 1, "sf", 1.0), ("b", 1, "nyc", 2.0)])
    write(spark, path, [("c", 1, "sf", 3.0)], mode="insert_overwrite")
    assert rs_rows(path) == our_rows(spark, path)
    write(spark, path, [("z", 1, "la", 9.0)], mode="overwrite")
    assert rs_rows(path) == our_rows(spark, path) == [{"uuid": "z", "ts": 1, "city": "la", "fare": 9.0}]

    flat = str(tmp_path / "flat")
    df = spark.createDataFrame([Row(uuid="a", ts=1, city="x", fare=1.0)])
    df.write.format("hoodie").option("table.name", "flat").option("recordkey.field", "uuid").mode("upsert").save(flat)
    assert rs_rows(flat) == our_rows(spark, flat)


COW_TABLES = {
    "sample_table/cow/v6_complexkeygen_hivestyle.zip": (4, ["id", "name", "isActive"]),
    "sample_table/cow/v6_nonpartitioned.zip": (4, ["id", "name", "isActive"]),
    "sample_table/cow/v6_simplekeygen_hivestyle_no_metafields.zip": (4, ["id", "name", "isActive"]),
    "sample_table/cow/v6_simplekeygen_nonhivestyle.zip": (4, ["id", "name", "isActive"]),
    "sample_table/cow/v6_empty.zip": (0, None),
    "sample_table/cow/v8_empty.zip": (0, None),
    "sample_table/cow/v8_nonpartitioned.zip": (4, ["id", "name", "isActive"]),
    "sample_table/cow/v8_simplekeygen_nonhivestyle.zip": (4, ["id", "name", "isActive"]),
    "sample_table/cow/v9_timebasedkeygen_epochmillis.zip": (6, None),
    "sample_table/cow/v9_timebasedkeygen_nonhivestyle.zip": (5, None),
    "sample_table/cow/v9_txns_complex_nometa.zip": (12, None),
    "sample_table/cow/v9_txns_nonpart_meta.zip": (14, None),
    "sample_table/cow/v9_txns_simple_meta.zip": (12, None),
    "sample_table/cow/v9_txns_simple_nometa.zip": (12, None),
    "sample_table/cow/v9_txns_simple_overwrite.zip": (3, None),
}
ALICE_TO_DIANA = [
    {"id": 1, "name": "Alice", "isActive": False}, {"id": 2, "name": "Bob", "isActive": False},
    {"id": 3, "name": "Carol", "isActive": True}, {"id": 4, "name": "Diana", "isActive": True},
]


@pytest.mark.parametrize("zip_name", sorted(COW_TABLES))
def test_we_read_real_hudi_cow_tables(spark, tmp_path, zip_name):
    base = str(unzip_table(zip_name, tmp_path))
    count, columns = COW_TABLES[zip_name]
    df = spark.read.format("hoodie").load(base)
    assert df.count() == count
    if columns:
        assert sorted((r.asDict() for r in df.select(*columns).collect()), key=lambda r: r["id"]) == ALICE_TO_DIANA
    rs = HudiTableBuilder.from_base_uri(base).build().read()
    assert sum(b.num_rows for b in rs) == count


@pytest.mark.parametrize("zip_name", ["sample_table/cow/v9_lance_nonpartitioned.zip"])
def test_lance_base_files_are_refused_clearly(spark, tmp_path, zip_name):
    base = str(unzip_table(zip_name, tmp_path))
    with pytest.raises(Exception, match="only parquet base files are supported"):
        spark.read.format("hoodie").load(base).count()


def test_time_travel_and_incremental_on_a_real_v6_table(spark, tmp_path):
    base = str(unzip_table("sample_table/cow/v6_complexkeygen_hivestyle.zip", tmp_path))
    first, second = "20240418173213674", "20240418173235694"
    assert spark.read.format("hoodie").option("as.of.instant", first).load(base).count() == 3
    assert spark.read.format("hoodie").option("as.of.instant", second).load(base).count() == 4
    inc = spark.read.format("hoodie").option("query", "incremental").option("begin.instant", first).load(base)
    assert inc.count() == 2
