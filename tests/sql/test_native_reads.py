"""In a shim session, base files that hold their rows as they are (copy-on-write, read-optimized,
merge-on-read slices without log files) are read by Spark's own parquet scan; only slices whose log
blocks need merging go through the Python reader (``HoodieReads``). Every read returns exactly what
the Python reader alone returns (``spark.hoodie.read.native=false``), on our tables and on the real
Hudi tables in ../shared."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import functions as F

from hoodie_datasource import HoodieTable
from tests.conftest import shared_zips, unzip_table
from tests.sql.helpers import (
    assert_rows,
    assert_same_as_python_reads,
    create_trips,
    insert_trips,
    physical_plan,
    scans,
)

pytestmark = pytest.mark.spark

OPTS = {"table.name": "trips", "recordkey.field": "uuid", "precombine.field": "ts",
        "partitionpath.field": "city", "hive_style_partitioning": "true"}
SCHEMA = "uuid string, ts bigint, fare double, city string"
COLUMNS = ["uuid", "ts", "fare", "city"]


def write(sql, path: str, rows: list[tuple], mode: str = "upsert", **extra: str) -> None:
    sql.createDataFrame(rows, SCHEMA).write.format("hoodie").options(**OPTS, **extra).mode(mode).save(path)


@pytest.fixture(scope="module", params=["COPY_ON_WRITE", "MERGE_ON_READ"])
def trips(request, sql, tmp_path_factory):
    """Three partitions; 'a' updated (MOR: a log file in sf), 'b' deleted, 'd' inserted into la.
    Returns (path, table type, instants)."""
    path = str(tmp_path_factory.mktemp("native") / "table")
    storage = {"storage.type": request.param}
    write(sql, path, [("a", 1, 10.0, "sf"), ("b", 1, 20.0, "sf"), ("c", 1, 30.0, "nyc")], **storage)
    write(sql, path, [("a", 2, 35.0, "sf")], **storage)
    write(sql, path, [("b", 3, 20.0, "sf")], "delete", **storage)
    write(sql, path, [("d", 3, 4.0, "la")], **storage)
    return path, request.param, HoodieTable(path).completed_commits()


def test_which_files_spark_reads(sql, trips):
    path, table_type, _ = trips
    snapshot = sql.read.format("hoodie").load(path)
    if table_type == "COPY_ON_WRITE":
        assert scans(snapshot) == {"parquet": 1, "python": 0}
    else:  # nyc and la have no log files: Spark reads them; sf's base file too, less the rows its log
        # replaces (the Python reader lists them while the query is planned), plus the log rows that win (the
        # Python reader reads them)
        assert scans(snapshot) == {"parquet": 2, "python": 1}
        plan = physical_plan(snapshot)
        # a replaced row is looked up by its file's ordinal and its row index in a broadcast bitmap: no join
        assert "hoodiekeptrow(" in plan and "Join" not in plan
        assert sorted(Path(f).parent.name for f in snapshot.inputFiles()) == ["city=la", "city=nyc", "city=sf"]
    assert sorted(r.uuid for r in snapshot.collect()) == ["a", "c", "d"]
    read_optimized = sql.read.format("hoodie").option("query", "read_optimized").load(path)
    assert scans(read_optimized) == {"parquet": 1, "python": 0}
    # count(*) reads no column at all from parquet (row counts of the footers)
    assert "ReadSchema: struct<>" in read_optimized.groupBy().count()._jdf.queryExecution().executedPlan().toString()


@pytest.mark.parametrize("options", [
    {}, {"query": "read_optimized"}, {"query": "incremental", "begin.instant": "first"},
    {"query": "incremental", "begin.instant": "first", "end.instant": "second"},
    {"query": "incremental", "begin.instant": "000"}, {"as.of.instant": "first"}, {"as.of.instant": "second"},
], ids=["snapshot", "read_optimized", "incremental", "incremental_range", "incremental_all", "as_of_first",
        "as_of_second"])
def test_every_query_type_returns_what_the_python_reader_returns(sql, trips, options):
    path, _, instants = trips
    named = {"first": instants[0], "second": instants[1]}
    options = {key: named.get(value, value) for key, value in options.items()}

    def reader():
        return sql.read.format("hoodie").options(**options).load(path)

    assert_same_as_python_reads(sql, reader)
    assert_same_as_python_reads(sql, lambda: reader().filter("fare > 5").select("_hoodie_commit_time", "uuid"))
    assert_same_as_python_reads(sql, lambda: reader().filter("city = 'sf'").select("uuid", "fare"))
    assert_same_as_python_reads(sql, lambda: reader().agg(F.count("*"), F.sum("fare")))


def test_incremental_pulls_only_the_rows_of_their_commits(sql, trips):
    path, table_type, instants = trips
    pull = sql.read.format("hoodie").option("query", "incremental").option("begin.instant", instants[0]).load(path)
    assert sorted((r.uuid, r.fare) for r in pull.collect()) == [("a", 35.0), ("d", 4.0)]
    if table_type == "COPY_ON_WRITE":  # the commit-time range is applied to the parquet scan's rows
        plan = physical_plan(pull)
        assert scans(pull) == {"parquet": 1, "python": 0}
        assert f"> {instants[0]})" in plan and f"<= {instants[-1]})" in plan, plan
        assert f"GreaterThan(_hoodie_commit_time,{instants[0]})" in plan  # and skips row groups
    # no commit after the last one: nothing to pull
    assert sql.read.format("hoodie").option("query", "incremental").option("begin.instant", instants[-1]) \
        .load(path).count() == 0


def test_each_query_sees_the_commits_completed_before_it(sql, location):
    write(sql, location, [("a", 1, 10.0, "sf")])
    df = sql.read.format("hoodie").load(location)
    assert df.count() == 1
    write(sql, location, [("b", 1, 20.0, "nyc")])
    assert df.count() == 2  # the same DataFrame plans again: the new file group is read
    assert sorted(r.uuid for r in df.select("uuid").collect()) == ["a", "b"]


@pytest.mark.parametrize("payload, a", [("OverwriteWithLatestAvroPayload", (5, 2.0)),
                                        ("DefaultHoodieRecordPayload", (10, 1.0))])
def test_late_records_merge_natively_as_the_python_reader_merges(sql, location, payload, a):
    """A late log record (a) and an early one (e) in a merge-on-read slice: the native read's replaced rows
    and log rows (``log_changes``) follow the payload as the Python reader's merge does."""
    opts = {"storage.type": "MERGE_ON_READ", "payload.class": f"org.apache.hudi.common.model.{payload}"}
    write(sql, location, [("a", 10, 1.0, "sf"), ("e", 10, 1.0, "sf"), ("b", 1, 0.0, "sf")], **opts)
    write(sql, location, [("a", 5, 2.0, "sf"), ("e", 20, 2.0, "sf")], **opts)
    expected = sorted([("a", *a, "sf"), ("b", 1, 0.0, "sf"), ("e", 20, 2.0, "sf")])
    read = lambda: sql.read.format("hoodie").load(location).select(*COLUMNS)  # noqa: E731
    assert scans(read())["parquet"] == 1
    assert sorted(tuple(r) for r in read().collect()) == expected
    assert_same_as_python_reads(sql, read)


def test_a_table_without_commits_reads_as_empty(sql, name, location):
    create_trips(sql, name, location)
    assert sql.table(name).count() == 0
    assert sql.sql(f"SELECT * FROM {name}").columns == ["uuid", "ts", "fare", "city"]


def test_sql_reads_return_what_the_python_reader_returns(sql, name, location):
    create_trips(sql, name, location, "mor")
    insert_trips(sql, name)
    sql.sql(f"UPDATE {name} SET fare = 35.0 WHERE uuid = 'a'")  # sf gets a log file; nyc has none
    sql.sql(f"INSERT INTO {name} VALUES ('d', 1, 4.0, 'la')")
    first = HoodieTable(location).completed_commits()[0]
    for query in (f"SELECT * FROM {name}", f"SELECT _hoodie_commit_time, uuid FROM {name} WHERE fare > 5",
                  f"SELECT * FROM {name}_ro", f"SELECT * FROM {name}_rt WHERE city = 'sf'",
                  f"SELECT * FROM {name} TIMESTAMP AS OF '{first}'",
                  f"SELECT uuid, fare FROM hoodie_table_changes('{name}', '{first}')",
                  f"SELECT count(*), sum(fare) FROM {name}"):
        assert_same_as_python_reads(sql, lambda q=query: sql.sql(q))
    # sf's base file is read by Spark too, less the row its log replaces (listed by the Python reader while
    # the query is planned), plus its log's rows (a Python scan)
    assert scans(sql.sql(f"SELECT * FROM {name}")) == {"parquet": 2, "python": 1}
    assert_rows(sql, f"SELECT * FROM {name}", [("a", 1, 35.0, "sf"), ("b", 1, 20.0, "sf"), ("c", 1, 30.0, "nyc"),
                                               ("d", 1, 4.0, "la")])
    # a write whose input reads the table it writes
    sql.sql(f"INSERT INTO {name} SELECT uuid, ts + 1, fare * 2, city FROM {name} WHERE city = 'nyc'")
    assert_rows(sql, f"SELECT * FROM {name} WHERE city = 'nyc'", [("c", 2, 60.0, "nyc")])


SHARED = shared_zips(lambda rel: "lance" not in rel)


@pytest.mark.parametrize("zip_name", SHARED)
def test_real_hudi_tables_read_the_same(sql, tmp_path, zip_name):
    """Tables written by Apache Hudi (v6, v8, v9; COW and MOR; with and without meta columns; schema
    changes across commits): Spark's parquet scan of their base files returns what our reader does."""
    base = str(unzip_table(zip_name, tmp_path))
    for query in ("snapshot", "read_optimized"):
        assert_same_as_python_reads(sql, lambda q=query: sql.read.format("hoodie").option("query", q).load(base))
    read_optimized = sql.read.format("hoodie").option("query", "read_optimized").load(base)
    if read_optimized.count():
        assert scans(read_optimized)["parquet"] == 1  # Spark reads (some of) the base files


@pytest.mark.parametrize("zip_name", ["sample_table/cow/v9_timebasedkeygen_nonhivestyle.zip",
                                      "sample_table/mor/avro/v9_txns_complex_meta.zip"])
def test_incremental_reads_of_hudi_1_tables_keep_the_rows_of_the_writes_completed_in_range(sql, tmp_path, zip_name):
    """Apache Hudi 1.x ranges an incremental read of a table of version 8 and later by completion time and keeps
    the rows of the writes it picked, by their instant times (``read.incremental_range``): Spark's parquet scan
    filters its base files on that set of commit times, as the Python reader does. Begun at a write's instant
    time, which is before it completed, the read returns that write's rows too."""
    base = str(unzip_table(zip_name, tmp_path))
    snapshot = {r._hoodie_commit_time for r in sql.read.format("hoodie").load(base).collect()}
    writes = HoodieTable(base).timeline().completed()
    write = next(w for w in writes[1:] if w.timestamp in snapshot)
    pull = lambda: sql.read.format("hoodie").option("query", "incremental") \
        .option("begin.instant", write.timestamp).load(base)  # noqa: E731
    got = {r._hoodie_commit_time for r in pull().collect()}
    assert got == {t for t in snapshot if any(w.timestamp == t and w.completion > write.timestamp for w in writes)}
    assert write.timestamp in got and got < snapshot
    assert scans(pull())["parquet"] == 1
    assert_same_as_python_reads(sql, pull)


def test_base_files_of_the_same_size_are_told_apart(sql, tmp_path):
    """A replaced base row is named by its file's ordinal and row index: two partitions holding the same keys
    and values make base files of the same size (uncompressed: snappy's output for the random file ids in the
    rows may differ by a byte), and each log replaces only its own file's row."""
    path = str(tmp_path / "table")
    storage = {"storage.type": "MERGE_ON_READ", "compression": "uncompressed"}
    write(sql, path, [("a", 1, 10.0, "sf"), ("b", 1, 20.0, "sf"), ("a", 1, 10.0, "la"), ("b", 1, 20.0, "la")],
          **storage)
    write(sql, path, [("a", 2, 35.0, "sf"), ("b", 2, 45.0, "la")], **storage)
    sizes = {f.parent.name: f.stat().st_size for f in Path(path).glob("city=*/*.parquet")}
    assert sizes["city=sf"] == sizes["city=la"]
    snapshot = sql.read.format("hoodie").load(path)
    assert "hoodiekeptrow(" in physical_plan(snapshot)
    assert sorted((r.city, r.uuid, r.fare) for r in snapshot.collect()) == [
        ("la", "a", 10.0), ("la", "b", 45.0), ("sf", "a", 35.0), ("sf", "b", 20.0)]
    assert_same_as_python_reads(sql, lambda: sql.read.format("hoodie").load(path))


def test_replaced_rows_in_every_word_of_a_files_bitmap(sql, tmp_path):
    """A base file of 300 rows whose logs replace rows on both sides of each 64-row word of its bitmap, and
    delete one: Spark's scan keeps exactly the other rows, as the Python reader reads them."""
    path = str(tmp_path / "table")
    storage = {"storage.type": "MERGE_ON_READ"}
    write(sql, path, [(f"k{i:03}", 1, float(i), "sf") for i in range(300)], **storage)
    updated = [0, 63, 64, 65, 127, 128, 191, 255, 256, 299]
    write(sql, path, [(f"k{i:03}", 2, -float(i), "sf") for i in updated], **storage)
    write(sql, path, [("k100", 3, 0.0, "sf")], "delete", **storage)
    assert len(list(Path(path).glob("city=sf/*.parquet"))) == 1
    snapshot = sql.read.format("hoodie").load(path)
    assert "hoodiekeptrow(" in physical_plan(snapshot)
    expected = sorted((f"k{i:03}", -float(i) if i in updated else float(i)) for i in range(300) if i != 100)
    assert sorted((r.uuid, r.fare) for r in snapshot.collect()) == expected
    assert_same_as_python_reads(sql, lambda: sql.read.format("hoodie").load(path))
