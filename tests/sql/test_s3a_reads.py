"""Tables on the S3 server (moto on loopback) read by Spark's own parquet scan through ``s3a://``: with
hadoop-aws's S3A on the classpath (``make hadoop-aws``: ``tests/hadoop_aws.py``) and the session's S3A settings
reaching the bucket, the jvm-shim hands the base files to Spark as it does local ones, and every read returns
what the Python reader alone returns (``spark.hoodie.read.native=false``). Where S3A's settings for the bucket
are not those of the table's storage, the Python reader reads every file and one INFO line says which keys
differ (a read's ``hoodie.storage.s3.*`` options never reach S3A). The case without hadoop-aws is
``test_sql_object_store.py``'s."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.hadoop_aws import require_s3a, s3a_bucket_keys
from tests.object_stores import S3Bucket, new_s3_bucket
from tests.sql.helpers import (
    assert_same_as_python_reads,
    create_trips,
    insert_trips,
    jvm_log,
    physical_plan,
    python_reads,
    scans,
)

pytestmark = pytest.mark.spark

OPTS = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "city"}
SCHEMA = "uuid string, ts bigint, fare double, city string"
READS = "org.apache.spark.sql.hoodie.HoodieReads"
FALLBACK = "so the Python reader reads all its files"


@contextmanager
def s3a_settings_of(sql, bucket: S3Bucket, in_hadoop: bool = True) -> Iterator[None]:
    """The bucket's S3A settings (endpoint, path-style access, credentials, no SSL: its storage options mapped to
    ``fs.s3a.bucket.<bucket>.*``) in the session meanwhile, as ``spark.hadoop.*`` settings, where our storage
    reads them, and (``in_hadoop``) in the Hadoop configuration, where S3A reads them: a Hudi user's session gets
    both from ``spark.hadoop.fs.s3a.*`` at its start, one set later gets only the first."""
    keys = s3a_bucket_keys(bucket.uri(), bucket.options)
    hadoop = sql.sparkContext._jsc.hadoopConfiguration()
    for key, value in keys.items():
        sql.conf.set(f"spark.hadoop.{key}", value)
        if in_hadoop:
            hadoop.set(key, value)
    try:
        yield
    finally:
        for key in keys:
            sql.conf.unset(f"spark.hadoop.{key}")
            hadoop.unset(key)


@pytest.fixture
def s3a_bucket(sql, moto) -> Iterator[S3Bucket]:
    """A new bucket whose S3A settings the session has: reads need no storage options."""
    require_s3a()
    bucket = new_s3_bucket(moto)
    with s3a_settings_of(sql, bucket):
        yield bucket


def write(sql, path: str, table_type: str, options: dict[str, str] | None = None) -> None:
    """Four commits: a, b, c; a updated (a log file in sf on MERGE_ON_READ); b deleted; d inserted into la."""
    for rows, mode in (([("a", 1, 10.0, "sf"), ("b", 1, 20.0, "sf"), ("c", 1, 30.0, "nyc")], "upsert"),
                       ([("a", 2, 35.0, "sf")], "upsert"), ([("b", 3, 20.0, "sf")], "delete"),
                       ([("d", 3, 4.0, "la")], "upsert")):
        sql.createDataFrame(rows, SCHEMA).write.format("hoodie").options(**OPTS, **(options or {})) \
            .option("hoodie.datasource.write.table.type", table_type).mode(mode).save(path)


LATEST = [("a", 2, 35.0, "sf"), ("c", 1, 30.0, "nyc"), ("d", 3, 4.0, "la")]


def rows(df) -> list[tuple]:
    return sorted(tuple(r) for r in df.select("uuid", "ts", "fare", "city").collect())


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_spark_reads_the_base_files_through_s3a(sql, s3a_bucket, table_type):
    path = f"s3a://{s3a_bucket.name}/trips"
    write(sql, path, table_type)
    snapshot = sql.read.format("hoodie").load(path)
    with jvm_log(sql, READS) as log:
        plan = physical_plan(snapshot)
        assert rows(snapshot) == LATEST
    assert "hoodie read of" not in log.toString(), log.toString()
    if table_type == "COPY_ON_WRITE":
        assert scans(snapshot) == {"parquet": 1, "python": 0}
    else:  # sf's base file less the row its log replaces, plus the log's row (the Python reader); nyc, la as they are
        assert scans(snapshot) == {"parquet": 2, "python": 1}
    assert f"[s3a://{s3a_bucket.name}/trips/" in plan, plan  # the scan's files, as Spark opens them
    assert sorted(f.split("/")[-2] for f in snapshot.inputFiles()) == ["la", "nyc", "sf"]
    assert all(f.startswith(f"s3a://{s3a_bucket.name}/trips/") for f in snapshot.inputFiles())
    with python_reads(sql):  # the fallback reads the same rows from S3 with our storage alone
        assert scans(sql.read.format("hoodie").load(path)) == {"parquet": 0, "python": 1}
    assert_same_as_python_reads(sql, lambda: sql.read.format("hoodie").load(path))
    assert_same_as_python_reads(sql, lambda: sql.read.format("hoodie").load(path).filter("fare > 5").select("uuid"))
    read_optimized = sql.read.format("hoodie").option("query", "read_optimized").load(path)
    assert scans(read_optimized) == {"parquet": 1, "python": 0}
    assert_same_as_python_reads(sql, lambda: sql.read.format("hoodie").option("query", "read_optimized").load(path))


def test_an_s3_table_is_read_through_s3a(sql, s3a_bucket):
    """``s3://``, which Apache Hadoop has no file system for: Spark opens its base files as ``s3a://``."""
    path = s3a_bucket.uri("trips")
    write(sql, path, "COPY_ON_WRITE")
    snapshot = sql.read.format("hoodie").load(path)
    assert rows(snapshot) == LATEST
    assert scans(snapshot) == {"parquet": 1, "python": 0}
    assert all(f.startswith(f"s3a://{s3a_bucket.name}/trips/") for f in snapshot.inputFiles())


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_an_sql_table_on_s3a(sql, s3a_bucket, name, table_type):
    """CREATE TABLE ... LOCATION 's3a://...', then DML and a query Spark's scan reads."""
    create_trips(sql, name, f"s3a://{s3a_bucket.name}/{name}", table_type)
    insert_trips(sql, name)
    sql.sql(f"UPDATE {name} SET fare = fare + 100 WHERE uuid = 'c'")
    sql.sql(f"DELETE FROM {name} WHERE uuid = 'b'")
    query = sql.sql(f"SELECT uuid, ts, fare, city FROM {name}")
    assert rows(query) == [("a", 1, 10.0, "sf"), ("c", 1, 130.0, "nyc")]
    assert scans(query)["parquet"] >= 1
    assert_same_as_python_reads(sql, lambda: sql.sql(f"SELECT * FROM {name}"))


def test_without_s3a_settings_for_the_bucket_the_python_reader_reads(sql, s3_bucket):
    """The storage options reach our storage only: S3A, with no settings for the bucket, would ask AWS itself."""
    require_s3a()
    path = f"s3a://{s3_bucket.name}/trips"
    write(sql, path, "COPY_ON_WRITE", s3_bucket.options)
    snapshot = sql.read.format("hoodie").options(**s3_bucket.options).load(path)
    with jvm_log(sql, READS) as log:
        assert scans(snapshot) == {"parquet": 0, "python": 1}
        assert rows(snapshot) == LATEST
    logged = log.toString()
    assert f"Spark's S3A settings for bucket {s3_bucket.name} are not those of the table's storage " \
           "(fs.s3a.access.key, fs.s3a.endpoint, fs.s3a.path.style.access;" in logged and FALLBACK in logged, logged


def test_an_sql_table_whose_s3a_settings_only_our_storage_has(sql, s3_bucket, name):
    """``spark.hadoop.fs.s3a.*`` set after the session started reach our storage and never Hadoop's configuration:
    the catalog reads the table through the Python source (not through S3A, which would ask AWS itself) and takes
    its columns and keys from it, and the Python reader reads its rows."""
    require_s3a()
    path = f"s3a://{s3_bucket.name}/{name}"
    with s3a_settings_of(sql, s3_bucket, in_hadoop=False):
        write(sql, path, "MERGE_ON_READ")
        sql.sql(f"CREATE TABLE {name} USING hoodie LOCATION '{path}'")
        assert sql.table(name).columns == ["uuid", "ts", "fare", "city"]
        assert "primaryKey" in dict(sql.sql(f"SHOW TBLPROPERTIES {name}").collect())
        sql.sql(f"UPDATE {name} SET fare = 1.0 WHERE uuid = 'd'")
        query = sql.sql(f"SELECT uuid, ts, fare, city FROM {name}")
        with jvm_log(sql, READS) as log:
            assert scans(query)["parquet"] == 0
            assert rows(query) == [("a", 2, 35.0, "sf"), ("c", 1, 30.0, "nyc"), ("d", 3, 1.0, "la")]
    assert "Spark's S3A settings for bucket" in log.toString() and FALLBACK in log.toString(), log.toString()
