"""Tables on object stores through real Spark: every operation on an S3 table (moto) gives the rows the same
operations give on a local table, and hudi-rs reads the S3 table from S3 with the same rows; the key cases
on Azure (Azurite); credentials from the environment and from Spark's Hadoop keys; bad URIs, buckets and
credentials fail with a HoodieError naming the URI and never the secret, leaving the table unchanged.

The walks and the Spark Connect run take minutes: they are marked ``object_store`` and run apart
(``pytest -m object_store``; ``make test`` does)."""

from __future__ import annotations

import json
import subprocess
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import Row

from hoodie_datasource import HoodieTable
from hoodie_datasource.errors import HoodieError
from tests.conftest import require_module
from tests.object_stores import REGION

hudi = require_module("hudi")
from hudi import HudiReadOptions, HudiTableBuilder  # noqa: E402

OPTS = {"table.name": "trips", "recordkey.field": "uuid", "partitionpath.field": "city", "precombine.field": "ts"}
COLS = ["uuid", "ts", "city", "fare"]
CITIES = ("sf", "nyc", "la")
SCHEMA = "uuid string, ts bigint, city string, fare double"


@dataclass
class Place:
    """Where a table lives: its URI, the options that reach its store through Spark (none for a local path)
    and, when they differ, those that reach it from HoodieTable (which sees no Spark session)."""

    path: str
    options: dict[str, str] = field(default_factory=dict)
    table_options: dict[str, str] | None = None

    def table(self) -> HoodieTable:
        return HoodieTable(self.path, storage_options=self.options if self.table_options is None
                           else self.table_options)


def records(keys: range, ts: int) -> list[tuple]:
    return [(f"k{i:04d}", ts, CITIES[i % 3], float(i * ts)) for i in keys]


def write(spark, place: Place, rows: list[tuple], mode: str = "upsert", **extra: str) -> str:
    df = spark.createDataFrame([Row(uuid=u, ts=t, city=c, fare=f) for u, t, c, f in rows])
    df.write.format("hoodie").options(**OPTS, **place.options, **extra).mode(mode).save(place.path)
    return place.table().latest_commit()


def ours(spark, place: Place, **options: str) -> list[tuple]:
    df = spark.read.format("hoodie").options(**place.options, **options).load(place.path)
    return sorted(tuple(r) for r in df.select(*COLS).collect())


def hudi_rs_options(bucket) -> dict[str, str]:
    return {"aws_endpoint_url": bucket.server.url, "aws_access_key_id": bucket.access_key,
            "aws_secret_access_key": bucket.secret_key, "aws_region": REGION, "aws_allow_http": "true"}


def theirs(uri: str, storage_options: dict[str, str], read_options=None, **hudi_options: str) -> list[tuple]:
    """hudi-rs's rows of the table at ``uri``, read from the store itself."""
    builder = HudiTableBuilder.from_base_uri(uri).with_storage_options(storage_options)
    for key, value in hudi_options.items():
        builder = builder.with_hudi_option(key, value)
    table = builder.build()
    batches = table.read(read_options) if read_options is not None else table.read()
    if not batches or not sum(b.num_rows for b in batches):
        return []
    return sorted(tuple(r.values()) for r in pa.Table.from_batches(batches).select(COLS).to_pylist())


def data_files(place: Place) -> dict[str, int]:
    """How many base and log files each partition holds (file names differ between two tables)."""
    counts: dict[str, int] = {}
    storage = place.table().storage
    for city in CITIES:
        for info in storage.list_dir(city).files:
            kind = "log" if ".log." in info.name else "base"
            counts[f"{city}/{kind}"] = counts.get(f"{city}/{kind}", 0) + 1
    return counts


def walk(spark, place: Place, table_type: str, rs: dict[str, str] | None = None) -> dict[str, object]:
    """Every operation on one table, with what each read returned; the same on any store. With ``rs``
    (hudi-rs's storage options), hudi-rs reads the table from its store after each step, with our rows."""
    # the metadata table compacts at each commit: archival keeps what it has not compacted (as Hudi's does)
    extra = {"storage.type": table_type, "hoodie.metadata.compact.max.delta.commits": "1"}
    seen: dict[str, object] = {}

    def read(label: str, read_options=None, hudi_options: dict[str, str] | None = None, **options: str) -> None:
        seen[label] = ours(spark, place, **options)
        if rs is not None:
            assert theirs(place.path, rs, read_options, **(hudi_options or {})) == seen[label], label

    t1 = write(spark, place, records(range(300), 1), "bulk_insert", **extra)
    t2 = write(spark, place, records(range(250, 400), 2), **extra)
    t3 = write(spark, place, records(range(0, 300, 7), 2), "delete", **extra)
    write(spark, place, records(range(100, 160), 3), **extra)
    read("snapshot")
    seen["incremental"] = ours(spark, place, query="incremental", **{"begin.instant": t2})
    seen["incremental window"] = ours(spark, place, query="incremental", **{"begin.instant": t1, "end.instant": t3})
    for n, instant in enumerate((t1, t2, t3), 1):
        read(f"time travel t{n}", HudiReadOptions().with_as_of_timestamp(instant), **{"as.of.instant": instant})
    if table_type == "MERGE_ON_READ":
        read("read optimized", hudi_options={"hoodie.read.use.read_optimized.mode": "true"}, query="read_optimized")
        seen["compacted"] = len(place.table().compact())
        read("after compaction")
        seen["read optimized after compaction"] = ours(spark, place, query="read_optimized")
    t5 = write(spark, place, records(range(0, 400, 3), 5), **extra)
    read("before rollback")
    seen["rolled back"] = place.table().rollback(t5) == [t5]
    read("after rollback")
    write(spark, place, records(range(380, 420), 6), **extra)
    archived = place.table().archive(**{"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"})
    seen["archived"] = len(archived)
    read("after archival")
    seen["time travel into the archive"] = ours(spark, place, **{"as.of.instant": t2})
    seen["files before clean"] = data_files(place)
    seen["cleaned"] = place.table().clean(**{"hoodie.cleaner.commits.retained": "1"}) is not None
    seen["files after clean"] = data_files(place)
    read("after clean")
    seen["actions"] = [(i.action, i.state.name) for i in place.table().instants()]
    return seen


def assert_same_walk(local: dict[str, object], remote: dict[str, object]) -> None:
    assert local.keys() == remote.keys()
    for key in local:
        assert remote[key] == local[key], f"{key}: the object-store table differs from the local one"


@pytest.mark.object_store
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_every_operation_on_s3_gives_the_local_rows_and_hudi_rs_reads_them_from_s3(spark, tmp_path, s3_bucket,
                                                                                    table_type):
    local = walk(spark, Place(str(tmp_path / "t")), table_type)
    remote_place = Place(s3_bucket.uri("trips"), s3_bucket.options)
    remote = walk(spark, remote_place, table_type, hudi_rs_options(s3_bucket))
    assert_same_walk(local, remote)
    deleted = set(range(0, 300, 7)) - set(range(100, 160))  # the last upsert brings some back
    assert [r[0] for r in local["snapshot"]] == [f"k{i:04d}" for i in range(400) if i not in deleted]
    assert local["files after clean"] != local["files before clean"]  # the clean deleted file slices
    assert local["archived"] > 0



FEW = records(range(20), 1)
UPDATES = records(range(5, 15), 2)  # updates only: on MERGE_ON_READ they go to log files
AFTER_UPDATES = sorted({r[0]: r for r in FEW + UPDATES}.values())


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_azure_upsert_compaction_and_read(spark, azure_container, table_type):
    place = Place(azure_container.uri("trips"), azure_container.options)
    write(spark, place, FEW, **{"storage.type": table_type})
    write(spark, place, UPDATES, **{"storage.type": table_type})
    assert ours(spark, place) == AFTER_UPDATES
    if table_type == "MERGE_ON_READ":
        assert len(place.table().compact()) == 1
        assert ours(spark, place) == AFTER_UPDATES == ours(spark, place, query="read_optimized")
    assert place.table().instants()[-1].action == "commit"  # COW's upsert, MOR's compaction


def test_credentials_from_the_environment_reach_the_tasks(spark, s3_env):
    """Only AWS_* variables, set after the JVM (and its workers' environment) started: the driver resolves
    them and the resolved options travel to the tasks."""
    place = Place(s3_env.uri("trips"))
    write(spark, place, FEW)
    write(spark, place, UPDATES)
    assert ours(spark, place) == AFTER_UPDATES
    stored = place.table().storage
    assert not [f.path for f in stored.list_tree() if s3_env.secret_key.encode() in stored.read(f.path)]


def test_sparks_hadoop_s3a_keys_and_s3a_and_s3_name_the_same_table(spark, s3_bucket, monkeypatch):
    for key in s3_bucket.env:
        monkeypatch.delenv(key, raising=False)
    keys = {"spark.hadoop.fs.s3a.endpoint": s3_bucket.server.url, "spark.hadoop.fs.s3a.access.key": s3_bucket.access_key,
            "spark.hadoop.fs.s3a.secret.key": s3_bucket.secret_key, "spark.hadoop.fs.s3a.path.style.access": "true"}
    for key, value in keys.items():
        spark.conf.set(key, value)
    try:
        s3a = Place(f"s3a://{s3_bucket.name}/trips", table_options=s3_bucket.options)
        write(spark, s3a, FEW)
        write(spark, s3a, UPDATES)
        assert ours(spark, Place(s3_bucket.uri("trips"))) == AFTER_UPDATES == ours(spark, s3a)
        assert [i.action for i in Place(s3_bucket.uri("trips"), s3_bucket.options).table().instants()] == \
            ["commit", "commit"]
    finally:
        for key in keys:
            spark.conf.unset(key)
    assert theirs(s3_bucket.uri("trips"), hudi_rs_options(s3_bucket)) == AFTER_UPDATES


def full_text(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc))


def test_an_unknown_scheme_is_refused_by_name_and_creates_nothing(spark, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(HoodieError, match="foo://b/t") as raised:
        write(spark, Place("foo://b/t"), FEW)
    with pytest.raises(HoodieError, match="foo://b/t"):
        ours(spark, Place("foo://b/t"))
    assert list(tmp_path.iterdir()) == [], raised.value


def test_a_missing_bucket_fails_naming_the_uri_not_the_secret(spark, s3_bucket):
    place = Place(f"s3://{s3_bucket.name}-missing/trips", s3_bucket.options)
    for action in (lambda: write(spark, place, FEW), lambda: ours(spark, place)):
        with pytest.raises(HoodieError) as raised:
            action()
        assert place.path in str(raised.value)
        assert s3_bucket.secret_key not in full_text(raised.value)


def test_wrong_s3_credentials_fail_naming_the_uri_not_the_secret(spark, moto_auth):
    """(moto's signature check refuses every signed listing with a query, so no table can be written on
    this server and the unchanged table is checked on Azurite below.)"""
    bucket = moto_auth.new_bucket()
    wrong_secret = "not-the-secret-0123456789"
    place = Place(bucket.uri("trips"), {**bucket.options, "hoodie.storage.s3.secret.key": wrong_secret})
    for action in (lambda: write(spark, place, FEW), lambda: ours(spark, place)):
        with pytest.raises(HoodieError) as raised:
            action()
        assert place.path in str(raised.value)
        assert wrong_secret not in full_text(raised.value) and bucket.secret_key not in full_text(raised.value)


def test_azure_wrong_key_fails_naming_the_uri_not_the_key_and_leaves_the_table_unchanged(spark, azure_container):
    place = Place(azure_container.uri("trips"), azure_container.options)
    write(spark, place, FEW)
    before = (ours(spark, place), [(i.timestamp, i.action, i.state) for i in place.table().instants()])
    wrong_key = "d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXk="
    wrong = Place(place.path, {**azure_container.options, "hoodie.storage.azure.account.key": wrong_key})
    for action in (lambda: write(spark, wrong, UPDATES), lambda: ours(spark, wrong)):
        with pytest.raises(HoodieError) as raised:
            action()
        assert place.path in str(raised.value)
        assert wrong_key not in full_text(raised.value)
    assert (ours(spark, place), [(i.timestamp, i.action, i.state) for i in place.table().instants()]) == before
    assert before[0] == FEW


@pytest.mark.object_store
@pytest.mark.usefixtures("spark_connect_port")
def test_s3_upsert_and_read_over_spark_connect(s3_bucket):
    require_module("grpc")  # Spark Connect's client (pyspark[connect])
    script = Path(__file__).with_name("connect_object_store.py")
    done = subprocess.run([sys.executable, str(script), s3_bucket.uri("trips"), json.dumps(s3_bucket.options)],
                          capture_output=True, text=True, timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-3000:]
    result = json.loads(lines[-1][len("RESULT "):])
    assert result["session"].startswith("pyspark.sql.connect")
    assert result["rows"] == [["a", 2, 5.0], ["b", 1, 2.0]]
    rows = theirs(s3_bucket.uri("trips"), hudi_rs_options(s3_bucket))
    assert [(r[0], r[1], r[3]) for r in rows] == [("a", 2, 5.0), ("b", 1, 2.0)]
