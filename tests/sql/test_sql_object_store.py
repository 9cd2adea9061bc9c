"""A table on S3 (moto's S3 server on loopback) through Spark: the endpoint and credentials come from the
session's ``spark.hadoop.fs.s3a.*`` keys, which the save handler, the reader check and the jvm-shim carry
into the Python source's options. The shim reads ``hoodie.properties`` of an object store through the Python
source, and here every base file with the Python reader instead of Spark's parquet scan: the reads below
run as without hadoop-aws (Spark's S3A reads are ``test_s3a_reads.py``'s)."""

from __future__ import annotations

import pytest

from tests.conftest import require_module
from tests.sql.helpers import jvm_log

pytestmark = pytest.mark.spark

OPTS = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "city"}
SCHEMA = "uuid string, ts bigint, fare double, city string"
BUCKET = "hoodie-tests"
NO_S3A = {"fs.s3a.impl": "org.apache.hadoop.fs.s3a.S3AFileSystemNotOnTheClasspath"}
"""What Hadoop sees without hadoop-aws on the classpath: core-default.xml names S3A's class, which is missing."""


def rows(df) -> list[tuple]:
    return sorted(tuple(r) for r in df.collect())


@pytest.fixture(scope="module")
def s3(sql):
    """An S3 server with one bucket, and the session's Hadoop S3A keys pointing at it."""
    moto_server = require_module("moto.server")
    boto3 = require_module("boto3")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="k",
                 aws_secret_access_key="s").create_bucket(Bucket=BUCKET)
    keys = {"spark.hadoop.fs.s3a.endpoint": endpoint, "spark.hadoop.fs.s3a.access.key": "k",
            "spark.hadoop.fs.s3a.secret.key": "s", "spark.hadoop.fs.s3a.path.style.access": "true"}
    for key, value in keys.items():
        sql.conf.set(key, value)
    yield boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="k",
                       aws_secret_access_key="s")
    for key in keys:
        sql.conf.unset(key)
    server.stop()


def test_dataframe_and_sql_writes_and_reads_of_an_s3_table(sql, s3, name):
    path = f"s3://{BUCKET}/{name}"
    sql.createDataFrame([("a", 1, 10.0, "sf"), ("b", 1, 20.0, "nyc")], SCHEMA).write.format("hoodie") \
        .options(**OPTS).mode("upsert").save(path)
    sql.createDataFrame([("a", 2, 11.0, "sf")], SCHEMA).write.format("hoodie").options(**OPTS).mode("upsert").save(path)
    assert rows(sql.read.format("hoodie").load(path).select("uuid", "fare")) == [("a", 11.0), ("b", 20.0)]

    sql.sql(f"CREATE TABLE {name} USING hoodie LOCATION '{path}'")
    assert rows(sql.sql(f"SELECT uuid, fare FROM {name}")) == [("a", 11.0), ("b", 20.0)]
    sql.sql(f"INSERT INTO {name} VALUES ('c', 3, 30.0, 'sf')")
    assert rows(sql.sql(f"SELECT uuid, fare, city FROM {name}")) == [("a", 11.0, "sf"), ("b", 20.0, "nyc"),
                                                                    ("c", 30.0, "sf")]
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=f"{name}/")["Contents"]]
    assert not [k for k in keys if "/.hoodie/.temp/" in k]  # no staged rows or markers left


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_an_s3_table_is_read_by_the_python_reader_and_equals_the_local_table(sql, s3, name, tmp_path, table_type):
    """Without S3A, Spark's Hadoop file system cannot read s3:// (nor s3a://): the jvm-shim plans no parquet
    scan for the table and logs why, once per read, at INFO on the ``HoodieReads`` logger; the rows equal those
    of the same writes to a local table, read natively (and without that line)."""
    plans, found, logged = {}, {}, {}
    for key, value in NO_S3A.items():
        sql.conf.set(key, value)
    for where, path in (("s3", f"s3://{BUCKET}/{name}"), ("local", str(tmp_path / name))):
        for batch in ([("a", 1, 10.0, "sf"), ("b", 1, 20.0, "nyc")], [("a", 2, 11.0, "sf")]):
            sql.createDataFrame(batch, SCHEMA).write.format("hoodie").options(**OPTS) \
                .option("hoodie.datasource.write.table.type", table_type).mode("upsert").save(path)
        with jvm_log(sql, "org.apache.spark.sql.hoodie.HoodieReads") as log:
            df = sql.read.format("hoodie").load(path).select("uuid", "ts", "fare", "city")
            found[where], plans[where] = rows(df), df._jdf.queryExecution().executedPlan().toString()
        logged[where] = log.toString()
    for key in NO_S3A:
        sql.conf.unset(key)
    assert found["s3"] == found["local"] == [("a", 2, 11.0, "sf"), ("b", 1, 20.0, "nyc")]
    assert "FileScan parquet" not in plans["s3"] and "BatchScan " in plans["s3"], plans["s3"]
    assert "FileScan parquet" in plans["local"], plans["local"]  # the same table, local, is read natively
    fallback = "Spark's Hadoop file system cannot read s3:// files (no connector such as hadoop-aws"
    assert fallback in logged["s3"] and "so the Python reader reads all its files" in logged["s3"], logged["s3"]
    assert "hoodie read of" not in logged["local"], logged["local"]


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_create_insert_merge_update_delete_of_a_new_s3_table_equal_a_local_one(sql, s3, name, tmp_path, table_type):
    """A table created by SQL on S3 (CREATE TABLE ... LOCATION 's3://...') goes through the DML statements
    with the rows a local table gets; hudi-rs reads the same rows from S3."""
    from tests.sql.helpers import create_trips, insert_trips

    sql.createDataFrame([("a", 5, 1.0, "sf"), ("z", 5, 2.0, "la")], "uuid string, ts long, fare double, city string") \
        .createOrReplaceTempView("s3_updates")
    results = []
    for table, location in ((f"{name}_s3", f"s3://{BUCKET}/{name}"), (f"{name}_local", str(tmp_path / "local"))):
        create_trips(sql, table, location, table_type)
        insert_trips(sql, table)
        sql.sql(f"""MERGE INTO {table} t USING s3_updates s ON t.uuid = s.uuid
                    WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
        sql.sql(f"UPDATE {table} SET fare = fare + 100 WHERE city = 'nyc'")
        sql.sql(f"DELETE FROM {table} WHERE uuid = 'b'")
        results.append(rows(sql.sql(f"SELECT uuid, ts, fare, city FROM {table}")))
    assert results[0] == results[1] == [("a", 5, 1.0, "sf"), ("c", 1, 130.0, "nyc"), ("z", 5, 2.0, "la")]

    endpoint = sql.conf.get("spark.hadoop.fs.s3a.endpoint")
    hudi = require_module("hudi")
    table = hudi.HudiTableBuilder.from_base_uri(f"s3://{BUCKET}/{name}").with_storage_options({
        "aws_endpoint_url": endpoint, "aws_access_key_id": "k", "aws_secret_access_key": "s",
        "aws_region": "us-east-1", "aws_allow_http": "true"}).build()
    read = sorted((r["uuid"], r["ts"], r["fare"], r["city"]) for b in table.read() for r in b.to_pylist())
    assert read == results[0]
