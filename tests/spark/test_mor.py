"""Merge-on-read through Spark: deltacommits with log blocks, snapshot (RT) vs read-optimized (RO),
incremental and time travel; hudi-rs reads the same results before and after compaction,
cleaning and rollback; and the real MOR tables Apache Hudi wrote read as expected."""

from __future__ import annotations

import pyarrow as pa
import pytest
from chispa import assert_df_equality
from pyspark.sql import Row

from hoodie_datasource import HoodieTable
from tests.conftest import require_module, unzip_table

hudi = require_module("hudi")
from hudi import HudiReadOptions, HudiTableBuilder  # noqa: E402

OPTS = {"table.name": "trips", "recordkey.field": "uuid", "partitionpath.field": "city", "precombine.field": "ts",
        "storage.type": "MERGE_ON_READ"}
COLS = ["uuid", "ts", "city", "fare"]


def write(spark, path, rows, mode="upsert", **extra):
    df = spark.createDataFrame([Row(uuid=u, ts=t, city=c, fare=f) for u, t, c, f in rows])
    df.write.format("hoodie").options(**{**OPTS, **extra}).mode(mode).save(path)
    return HoodieTable(path).latest_commit()


def ours(spark, path, **options):
    reader = spark.read.format("hoodie")
    for k, v in options.items():
        reader = reader.option(k, v)
    return sorted(tuple(r) for r in reader.load(path).select(*COLS).collect())


def theirs(path, options=None, **hudi_options):
    builder = HudiTableBuilder.from_base_uri(path)
    for k, v in hudi_options.items():
        builder = builder.with_hudi_option(k, v)
    batches = builder.build().read(options) if options is not None else builder.build().read()
    if not batches or not sum(b.num_rows for b in batches):
        return []
    table = pa.Table.from_batches(batches).select(COLS)
    return sorted(tuple(r.values()) for r in table.to_pylist())


def test_mor_upserts_deletes_views_and_hudi_rs(spark, table_path):
    t1 = write(spark, table_path, [("a", 1, "sf", 1.0), ("b", 1, "sf", 2.0), ("c", 1, "nyc", 3.0)])
    t2 = write(spark, table_path, [("a", 2, "sf", 10.0), ("d", 2, "nyc", 4.0)])
    t3 = write(spark, table_path, [("b", 3, "sf", 0.0)], mode="delete")
    assert [i.action for i in HoodieTable(table_path).instants()] == ["deltacommit"] * 3
    snapshot = [("a", 2, "sf", 10.0), ("c", 1, "nyc", 3.0), ("d", 2, "nyc", 4.0)]
    assert ours(spark, table_path) == snapshot == theirs(table_path)
    ro = ours(spark, table_path, query="read_optimized")
    assert ro == [("a", 1, "sf", 1.0), ("b", 1, "sf", 2.0), ("c", 1, "nyc", 3.0), ("d", 2, "nyc", 4.0)]
    assert theirs(table_path, **{"hoodie.read.use.read_optimized.mode": "true"}) == ro
    for instant in (t1, t2, t3):
        assert ours(spark, table_path, **{"as.of.instant": instant}) == theirs(
            table_path, HudiReadOptions().with_as_of_timestamp(instant))
    inc = ours(spark, table_path, query="incremental", **{"begin.instant": t1})
    assert inc == [("a", 2, "sf", 10.0), ("d", 2, "nyc", 4.0)]

    compacted = HoodieTable(table_path).compact()
    assert len(compacted) == 1
    assert ours(spark, table_path) == snapshot == theirs(table_path)
    assert ours(spark, table_path, query="read_optimized") == snapshot
    write(spark, table_path, [("c", 5, "nyc", 30.0)])
    assert ours(spark, table_path) == theirs(table_path)
    latest = HoodieTable(table_path).latest_commit()
    HoodieTable(table_path).rollback(latest)
    assert ours(spark, table_path) == snapshot == theirs(table_path)
    HoodieTable(table_path).clean(**{"hoodie.cleaner.commits.retained": "1"})
    assert ours(spark, table_path) == snapshot == theirs(table_path)


def test_avro_log_blocks_and_sql_style_reads(spark, table_path):
    write(spark, table_path, [("a", 1, "sf", 1.0)], **{"hoodie.logfile.data.block.format": "avro"})
    write(spark, table_path, [("a", 2, "sf", 5.0)], **{"hoodie.logfile.data.block.format": "avro"})
    assert ours(spark, table_path) == [("a", 2, "sf", 5.0)] == theirs(table_path)
    df = spark.read.format("hoodie").option("hoodie.datasource.query.type", "snapshot").load(table_path)
    assert_df_equality(df.select(*COLS), spark.createDataFrame([("a", 2, "sf", 5.0)], df.select(*COLS).schema))


MOR_TABLES = {
    "quickstart_trips_table/mor/avro/v6_trips_8i1u.zip": (8, 8),
    "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip": (6, None),
    "sample_table/mor/avro/v9_txns_complex_meta.zip": (12, None),
    "sample_table/mor/avro/v9_txns_nonpart_meta.zip": (14, None),
    "sample_table/mor/avro/v9_txns_nonpart_nometa.zip": (14, None),
    "sample_table/mor/avro/v9_txns_simple_nometa.zip": (12, None),
    "sample_table/mor/avro/v9_txns_simple_overwrite.zip": (3, None),
    "sample_table/mor/parquet/v6_nonpartitioned.zip": (4, None),
    "sample_table/mor/parquet/v6_nonpartitioned_rollback.zip": (3, None),
    "sample_table/mor/parquet/v6_simplekeygen_hivestyle_no_metafields.zip": (4, None),
    "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle.zip": (4, None),
    "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle_overwritetable.zip": (1, None),
}


@pytest.mark.parametrize("zip_name", sorted(MOR_TABLES))
def test_we_read_real_hudi_mor_tables(spark, tmp_path, zip_name):
    base = str(unzip_table(zip_name, tmp_path))
    snapshot_rows, _ = MOR_TABLES[zip_name]
    assert spark.read.format("hoodie").load(base).count() == snapshot_rows
    ro = spark.read.format("hoodie").option("query", "read_optimized").load(base).count()
    rs_ro = HudiTableBuilder.from_base_uri(base).with_hudi_option("hoodie.read.use.read_optimized.mode", "true") \
        .build().read()
    assert ro == sum(b.num_rows for b in rs_ro)


def test_real_mor_values_after_updates_and_deletes(spark, tmp_path):
    v6 = str(unzip_table("quickstart_trips_table/mor/avro/v6_trips_8i1u.zip", tmp_path))
    fares = {r.rider: r.fare for r in spark.read.format("hoodie").load(v6).collect()}
    assert fares["rider-D"] == 25.0 and len(fares) == 8  # the UPDATE in an Avro log block
    ro = {r.rider: r.fare for r in spark.read.format("hoodie").option("query", "read_optimized").load(v6).collect()}
    assert ro["rider-D"] == 33.9  # base file only
    v8 = str(unzip_table("quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip", tmp_path))
    fares = {r.rider: r.fare for r in spark.read.format("hoodie").load(v8).collect()}
    assert fares == {"rider-A": 0.0, "rider-C": 27.7, "rider-D": 33.9, "rider-E": 93.5, "rider-G": 0.0,
                     "rider-I": 41.06}
    rollback = str(unzip_table("sample_table/mor/parquet/v6_nonpartitioned_rollback.zip", tmp_path))
    ours_rows = sorted(r.id for r in spark.read.format("hoodie").load(rollback).collect())
    rs = pa.Table.from_batches(HudiTableBuilder.from_base_uri(rollback).build().read())
    assert ours_rows == sorted(rs.column("id").to_pylist())
