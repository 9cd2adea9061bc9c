"""A Spark write to an S3 table (moto's server) whose task fails after it wrote some files: nothing of
it is visible, it rolls itself back, and the bucket holds no data file, marker or staged row of it; the
next write goes through. The local-disk version (a file in the way of a partition directory) is in
test_failures_and_bad_input.py."""

from __future__ import annotations

import pytest

from hoodie_datasource import HoodieTable
from tests.object_stores import S3Bucket, proxy
from tests.storage.tables import committed_files, data_files

pytestmark = [pytest.mark.spark, pytest.mark.fault]

OPTS = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "city"}
SCHEMA = "uuid string, ts bigint, fare double, city string"


def write(df, options: dict[str, str], uri: str) -> None:
    df.write.format("hoodie").options(**OPTS, **options).mode("upsert").save(uri)


def contents(spark, bucket: S3Bucket, uri: str) -> list[tuple]:
    df = spark.read.format("hoodie").options(**bucket.options).load(uri)
    return sorted((r.uuid, r.ts, r.fare) for r in df.collect())


def test_failed_task_on_s3_leaves_nothing_and_next_write_goes_through(spark, s3_bucket: S3Bucket) -> None:
    """One write task writes the new base files of nyc and sf (file groups run in key order), then the
    store refuses its file in zz (a proxy answers 403 to that PUT): the write fails, its rollback
    deletes the files it wrote and every marker, and the next write goes through."""
    uri = s3_bucket.uri("warehouse/trips")
    write(spark.createDataFrame([("a", 1, 1.0, "sf"), ("b", 1, 2.0, "nyc")], SCHEMA), s3_bucket.options, uri)
    before = contents(spark, s3_bucket, uri)
    storage = HoodieTable(uri, s3_bucket.options).storage
    files_before = data_files(storage)

    bad = spark.createDataFrame([("a", 2, 9.0, "sf"), ("b", 2, 9.0, "nyc"), ("z", 2, 9.0, "zz")], SCHEMA)
    shuffle = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "1")  # one task holds all three partitions
    try:
        with proxy(s3_bucket.server, refused=r"/warehouse/trips/zz/[^/]+\.parquet") as url:
            with pytest.raises(Exception, match=r"Cannot write s3://.*/zz/.*refused"):
                write(bad, {**s3_bucket.options, "hoodie.storage.s3.endpoint": url}, uri)
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", shuffle)

    assert contents(spark, s3_bucket, uri) == before
    timeline = HoodieTable(uri, s3_bucket.options).timeline()
    assert timeline.pending() == []  # the failed writer rolled itself back
    [rollback] = [i for i in timeline.instants if i.action == "rollback"]
    assert timeline.read_metadata(rollback)["totalFilesDeleted"] >= 2  # nyc's and sf's new base files
    assert data_files(storage) == files_before == committed_files(storage)
    assert storage.list_tree(".hoodie/.temp") == []  # no marker or staged row is left in the bucket

    write(spark.createDataFrame([("a", 3, 3.0, "sf"), ("z", 3, 4.0, "zz")], SCHEMA), s3_bucket.options, uri)
    assert contents(spark, s3_bucket, uri) == [("a", 3, 3.0), ("b", 1, 2.0), ("z", 3, 4.0)]
    assert data_files(storage) == committed_files(storage)
    assert storage.list_tree(".hoodie/.temp") == []
