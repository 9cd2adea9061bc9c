"""The requests a read through the jvm-shim makes on S3 (moto's server, counted from its access log): the shim
calls into Python several times for one query (PySpark's ``schema()`` when the DataFrame is made, the file
listing when each action is planned, the Python reader of the slices whose log blocks it merges), and the
plan travels between those calls (``shim_options.PLAN_OPTION``, ``PLANNED_SOURCE_OPTION``): a new DataFrame's
first action walks the table once, and each later action lists the timeline once, unless a write came in
between. Spark's parquet scan cannot read ``s3://`` here (no hadoop-aws in this session's settings for the
bucket), so the Python reader reads every slice, pinned to the listing's plan."""

from __future__ import annotations

from collections import Counter

import pytest

pytestmark = pytest.mark.spark

OPTS = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
SCHEMA = "uuid string, ts bigint, fare double, city string"


def upsert(sql, bucket, uri: str, rows: list[tuple], mode: str = "upsert") -> None:
    sql.createDataFrame(rows, SCHEMA).write.format("hoodie").options(**OPTS, **bucket.options).mode(mode).save(uri)


def collected(df) -> list[tuple]:
    return sorted(tuple(r) for r in df.select("uuid", "ts", "fare", "city").collect())


def test_a_shim_read_plans_once_per_dataframe_and_checks_the_timeline_once_per_later_action(sql, moto, s3_bucket):
    uri = s3_bucket.uri("trips")
    upsert(sql, s3_bucket, uri, [("a", 1, 10.0, "sf"), ("b", 1, 20.0, "la")], "overwrite")
    upsert(sql, s3_bucket, uri, [("a", 2, 11.0, "sf")])  # a log file in sf: its slice is merged in Python

    mark = moto.mark()
    df = sql.read.format("hoodie").options(**s3_bucket.options).load(uri)
    assert collected(df) == [("a", 2, 11.0, "sf"), ("b", 1, 20.0, "la")]
    # schema() loads the table and plans from its metadata table (one timeline listing, the metadata table's
    # timeline and its files partition: no walk of the table); the action's listing takes that plan, checked by
    # one timeline listing; the Python reader takes the listing's plan (before the plan travelled: timeline 6,
    # table 3 with the LIST and GET requests of three plans)
    metadata_files = "trips/.hoodie/metadata/files/"
    assert moto.listings_since(mark) == Counter({"timeline": 3, metadata_files: 1})

    mark = moto.mark()
    assert collected(df) == [("a", 2, 11.0, "sf"), ("b", 1, 20.0, "la")]
    assert moto.listings_since(mark) == Counter({"timeline": 1})  # the last listing's plan, still current

    upsert(sql, s3_bucket, uri, [("b", 2, 21.0, "la")])
    mark = moto.mark()
    assert collected(df) == [("a", 2, 11.0, "sf"), ("b", 2, 21.0, "la")]  # a write came in: planned again
    assert moto.listings_since(mark) == Counter({"timeline": 2, metadata_files: 1})
