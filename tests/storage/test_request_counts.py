"""The requests a read makes on S3 (moto's server, counted from its access log), pinning the cuts measured
with benchmarks/object_store.py: a snapshot read lists the timeline once per call into the Python source
(``schema()``, then ``reader()``, which checks the plan ``schema()`` made is still current), reads the
metadata table's files partition once (or, without the metadata table, walks the table once), and reads each
instant file it needs once; so its requests grow with the files it reads, not with the number of commits on
the timeline.

And what a write's guard against late task attempts costs (``write.task_attempt``): each write task that
wrote files asks for its instant's completed and inflight files (two HEADs), and the driver lists the
markers once before and once after the commit point; a local-engine write lists none.
"""

from __future__ import annotations

import urllib.parse
from collections import Counter

import pytest

from hoodie_datasource.client.local_engine import write_local
from tests.object_stores import S3Bucket, Server

pytestmark = pytest.mark.spark

OPTS = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "city"}
SCHEMA = "uuid string, ts bigint, fare double, city string"
ROWS = [("a", 1, 10.0, "sf"), ("b", 1, 20.0, "nyc"), ("c", 1, 30.0, "la")]


def upsert(spark, bucket: S3Bucket, uri: str, rows: list[tuple], mode: str = "upsert") -> None:
    spark.createDataFrame(rows, SCHEMA).write.format("hoodie").options(**OPTS, **bucket.options).mode(mode).save(uri)


def counted_read(spark, moto: Server, bucket: S3Bucket, uri: str, **read: str) -> tuple[list[tuple], Counter,
                                                                                      Counter]:
    mark = moto.mark()
    df = spark.read.format("hoodie").options(**bucket.options, **read).load(uri)
    rows = sorted(tuple(r) for r in df.select("uuid", "ts", "fare", "city").collect())
    return rows, by_folder(moto, mark), moto.listings_since(mark)


# schema() plans, reader() checks the timeline once. From the metadata table (the default): one listing of
# the data timeline, one of the metadata table's timeline (counted as a timeline too) and one of its files
# partition, no walk of the table; without it: one timeline listing and one walk of the table.
LISTINGS = {"true": Counter({"timeline": 3, "trips/.hoodie/metadata/files/": 1}),
            "false": Counter({"timeline": 2, "table": 1})}


@pytest.mark.parametrize("metadata", ["true", "false"])
def test_a_snapshot_reads_requests_do_not_grow_with_commits_that_add_no_files_to_it(spark, moto, s3_bucket,
                                                                                    metadata):
    uri = s3_bucket.uri("trips")
    read = {"hoodie.metadata.enable": metadata}
    upsert(spark, s3_bucket, uri, ROWS, "overwrite")
    upsert(spark, s3_bucket, uri, [("a", 2, 11.0, "sf")])
    counted_read(spark, moto, s3_bucket, uri, **read)  # a first read: later reads of the table find its plan stale
    upsert(spark, s3_bucket, uri, [("a", 3, 12.0, "sf")])
    rows, before, listed = counted_read(spark, moto, s3_bucket, uri, **read)
    assert rows == [("a", 3, 12.0, "sf"), ("b", 1, 20.0, "nyc"), ("c", 1, 30.0, "la")]
    assert listed == LISTINGS[metadata], listed

    for ts in range(4, 14):  # ten commits rewriting the file of "a": the read still reads three files
        upsert(spark, s3_bucket, uri, [("a", ts, float(ts), "sf")])
    rows, after, listed_after = counted_read(spark, moto, s3_bucket, uri, **read)
    assert rows == [("a", 13, 13.0, "sf"), ("b", 1, 20.0, "nyc"), ("c", 1, 30.0, "la")]
    assert listed_after == listed
    # the metadata table's files partition is read once per plan: a GET of its base file and of each log file,
    # one a commit, until its compaction (every 10 deltacommits) folds them into a new base file
    metadata_gets = after.pop("GET metadata", 0)
    assert metadata_gets <= (1 + 10 if metadata == "true" else 0), after
    assert before.pop("GET metadata", 0) <= metadata_gets
    assert after == before, (before, after)
    assert not any(kind.split()[0] in ("PUT", "DELETE", "POST") for kind in after), after


def by_folder(server: Server, mark: int) -> Counter:
    """Requests since ``mark`` by verb and by what they touch: the metadata table (``metadata``), the instant
    files (``timeline``), the markers, heartbeats, or data files and the rest (``data``)."""
    kinds: Counter = Counter()
    for verb, path in server.request_log_since(mark):
        split = urllib.parse.urlsplit(path)
        target = urllib.parse.parse_qs(split.query).get("prefix", [""])[0] if verb == "LIST" else split.path
        folder = ("metadata" if "/.hoodie/metadata" in target else "markers" if "/.hoodie/.temp/" in target
                  else "heartbeat" if "/.hoodie/.heartbeat/" in target else "timeline" if "/.hoodie/" in target
                  else "data")
        kinds[f"{verb} {folder}"] += 1
    return kinds


def test_the_late_attempt_guard_costs_two_heads_per_write_task_and_one_marker_listing(spark, moto, s3_bucket):
    uri = s3_bucket.uri("trips")
    upsert(spark, s3_bucket, uri, ROWS, "overwrite")
    mark = moto.mark()
    upsert(spark, s3_bucket, uri, [("a", 2, 11.0, "sf"), ("b", 2, 21.0, "nyc"), ("d", 1, 40.0, "la")])
    spark_write = by_folder(moto, mark)
    # hoodie.properties (does the table exist), then each write task with records (the batch is shuffled
    # by partition into 3 tasks, as many as the table's partitions, one partition each: spark.partition_balance)
    # HEADs the completed and the inflight instant file (measured: 1 before the guard, 7 with it)
    assert spark_write["HEAD timeline"] == 1 + 2 * 3, spark_write
    # the driver: the markers before the commit point, after it, and when deleting the marker folder
    # (measured: 2 before, 3 with it); the whole write took 27 requests before, 34 with it
    assert spark_write["LIST markers"] == 3, spark_write

    mark = moto.mark()
    write_local(uri, spark.createDataFrame([("c", 2, 31.0, "la")], SCHEMA).toArrow(),
                {**OPTS, **s3_bucket.options})
    local_write = by_folder(moto, mark)
    assert local_write["HEAD timeline"] == 1, local_write  # hoodie.properties: one attempt needs no check
    # only to delete the marker folder: every marked file is in the write stats (measured: 2 before, 22
    # requests in all, now 21)
    assert local_write["LIST markers"] == 1, local_write
