"""``spark.read.format("hoodie")`` in a shim session, read by the Python reader alone
(``spark.hoodie.read.native=false``; Spark's parquet scan of base files: ``test_native_reads.py``): the
shim's optimizer rule (``HoodieReads``) plans these reads with the scans of SQL reads, so a query reads
only the columns it needs and hands its filters to the reader, with a fresh Python source per query.
They return what PySpark's own relation returns (the rule turned off with
``spark.sql.optimizer.excludedRules``), and writes through ``format("hoodie")`` are left alone."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest
from chispa import assert_df_equality
from pyspark.sql import functions as F

from hoodie_datasource import HoodieTable

pytestmark = pytest.mark.spark

RULE = "org.apache.spark.sql.hoodie.HoodieReads"
OPTS = {"table.name": "trips", "recordkey.field": "uuid", "precombine.field": "ts",
        "partitionpath.field": "city", "hive_style_partitioning": "true"}
SCHEMA = "uuid string, ts bigint, fare double, city string"
COLUMNS = ["uuid", "ts", "fare", "city"]
META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]
FIRST = [("a", 1, 10.0, "sf"), ("b", 1, 20.0, "sf"), ("c", 1, 30.0, "nyc")]
LATEST = [("a", 2, 35.0, "sf"), ("c", 1, 30.0, "nyc"), ("d", 3, 4.0, "la")]


@pytest.fixture(autouse=True)
def python_reads(sql):
    sql.conf.set("spark.hoodie.read.native", "false")
    yield
    sql.conf.unset("spark.hoodie.read.native")


def write(sql, path: str, rows: list[tuple], mode: str, **extra: str) -> None:
    sql.createDataFrame(rows, SCHEMA).write.format("hoodie").options(**OPTS, **extra).mode(mode).save(path)


@pytest.fixture(scope="module", params=["COPY_ON_WRITE", "MERGE_ON_READ"])
def trips(request, sql, tmp_path_factory):
    """Four commits (the tests only read): the first rows; 'a' updated (MOR: in a log file); 'b' deleted;
    'd' inserted. Returns (path, table type, instants)."""
    path = str(tmp_path_factory.mktemp("trips") / "table")
    storage = {"storage.type": request.param}
    write(sql, path, FIRST, "upsert", **storage)
    write(sql, path, [("a", 2, 35.0, "sf")], "upsert", **storage)
    write(sql, path, [("b", 3, 20.0, "sf")], "delete", **storage)
    write(sql, path, [("d", 3, 4.0, "la")], "upsert", **storage)
    if request.param == "MERGE_ON_READ":
        assert [p for p in Path(path).rglob(".*.log.*") if ".hoodie" not in p.parts], \
            "the update of 'a' should be in a log file"
    return path, request.param, HoodieTable(path).completed_commits()


def explain(df) -> str:
    """The formatted physical plan, which shows the scan's ReadSchema and PushedFilters."""
    return df.sparkSession._jvm.PythonSQLUtils.explainString(df._jdf.queryExecution(), "formatted")


def read_schema(df) -> str:
    schemas = re.findall(r"ReadSchema: (struct<.*>)", explain(df))
    assert len(schemas) == 1, explain(df)
    return schemas[0]


def pushed_filters(df) -> str:
    return re.search(r"PushedFilters: (\[.*\])", explain(df)).group(1)


def spark_filters(df) -> bool:
    """Spark filters the scan's rows itself (a Filter node above the scan)."""
    return "Filter (" in df._jdf.queryExecution().executedPlan().toString()


def frame(sql, rows: list[tuple], schema: str = SCHEMA):
    return sql.createDataFrame(rows, schema)


def assert_same(actual, expected) -> None:
    assert_df_equality(actual, expected, ignore_row_order=True, ignore_nullable=True)


@contextlib.contextmanager
def pyspark_relation(sql):
    """Queries planned inside read format("hoodie") as a session without the shim does."""
    sql.conf.set("spark.sql.optimizer.excludedRules", RULE)
    try:
        yield
    finally:
        sql.conf.unset("spark.sql.optimizer.excludedRules")


def test_a_query_reads_only_the_columns_it_needs(sql, trips):
    path, _, _ = trips
    df = sql.read.format("hoodie").load(path)
    assert df.columns == META + COLUMNS  # the DataFrame's schema is still the Python source's

    fares = df.select("uuid", "fare")
    assert read_schema(fares) == "struct<uuid:string,fare:double>"
    # MOR: 'a' merged with its log file, 'b' deleted
    assert_same(fares, frame(sql, [(u, f) for u, _, f, _ in LATEST], "uuid string, fare double"))

    keys = df.select("_hoodie_record_key", "city")
    assert read_schema(keys) == "struct<_hoodie_record_key:string,city:string>"
    assert_same(keys, frame(sql, [(u, c) for u, _, _, c in LATEST], "_hoodie_record_key string, city string"))

    totals = df.agg(F.count("*").alias("n"), F.sum("fare").alias("total"))
    assert read_schema(totals) == "struct<fare:double>"
    assert totals.first() == (3, 69.0)

    counted = df.groupBy().count()
    assert read_schema(counted) == "struct<_hoodie_commit_time:string>"  # no column needed: one narrow column
    assert counted.first()[0] == 3
    assert_same(df.select(*COLUMNS), frame(sql, LATEST))


def test_filters_are_pushed_and_no_later_query_reuses_them(sql, trips):
    path, _, _ = trips
    df = sql.read.format("hoodie").load(path)

    in_sf = df.filter("city = 'sf'").select("uuid", "fare")  # a partition filter: prunes partitions
    assert "EqualTo(city,sf)" in pushed_filters(in_sf) and not spark_filters(in_sf)
    assert read_schema(in_sf) == "struct<uuid:string,fare:double,city:string>"  # the filter's column too
    assert_same(in_sf, frame(sql, [("a", 35.0)], "uuid string, fare double"))

    cheap = df.filter("fare < 15").select("uuid")  # a data column: filtered after the merge, for MOR
    assert "LessThan(fare,15.0)" in pushed_filters(cheap) and not spark_filters(cheap)
    assert [r.uuid for r in cheap.collect()] == ["d"]  # never the stale base record of 'a' (10.0)

    # the same DataFrame afterwards: every row, not those of a filter planned for an earlier query
    assert_same(df.select(*COLUMNS), frame(sql, LATEST))
    assert df.count() == 3
    assert df.filter("city = 'nyc'").count() == 1


def test_query_types_return_what_they_return_without_the_rule(sql, trips):
    path, table_type, (t1, t2, _, t4) = trips
    cases = {
        "incremental": {"query": "incremental", "begin.instant": t1},
        "incremental range": {"query": "incremental", "begin.instant": t1, "end.instant": t2},
        "as of the first commit": {"as.of.instant": t1},
        "as of the last commit": {"as.of.instant": t4},
        "read optimized": {"query": "read_optimized"},
    }
    fare_over_5 = {  # the uuids each returns with fare > 5 ('d' has 4.0)
        "incremental": ["a"], "incremental range": ["a"], "as of the first commit": ["a", "b", "c"],
        "as of the last commit": ["a", "c"],
        # MOR: the base files only, so 'a' as first written and 'b' not yet deleted
        "read optimized": ["a", "b", "c"] if table_type == "MERGE_ON_READ" else ["a", "c"],
    }
    queries = {
        "all columns": lambda df: df,
        "pruned and filtered": lambda df: df.filter("fare > 5").select("_hoodie_commit_time", "uuid", "fare"),
    }
    every_column = read_schema(sql.read.format("hoodie").load(path))
    for case, options in cases.items():
        for query_name, query in queries.items():
            with pyspark_relation(sql):
                plain = query(sql.read.format("hoodie").options(**options).load(path))
                rows, schema = plain.collect(), plain.schema
                plain_schema = read_schema(plain)
            assert plain_schema == every_column
            ours = query(sql.read.format("hoodie").options(**options).load(path))
            assert_same(ours, sql.createDataFrame(rows, schema))
            assert sorted(r.uuid for r in rows if r.fare > 5) == fare_over_5[case], (case, query_name)
        pruned = queries["pruned and filtered"](sql.read.format("hoodie").options(**options).load(path))
        assert read_schema(pruned) == "struct<_hoodie_commit_time:string,uuid:string,fare:double>", case
        assert "GreaterThan(fare,5.0)" in pushed_filters(pruned), case


def assert_table(sql, path: str, rows: list[tuple]) -> None:
    assert_same(sql.read.format("hoodie").load(path).select(*COLUMNS), frame(sql, rows))


def jvm_save(df, path: str, mode: str) -> None:
    """Spark's own DataFrameWriter.save (what save() is in a session without ``register``): Spark plans
    AppendData / OverwriteByExpression over PySpark's relation of the hoodie source, which the rule
    must leave as it is (a read-only table there would fail the write)."""
    df._jdf.write().format("hoodie").options(OPTS).mode(mode).save(path)


def test_writes_are_left_alone(sql, location):
    write(sql, location, FIRST, "upsert")
    write(sql, location, [("d", 1, 40.0, "la")], "append", operation="insert")
    # an upsert whose input is a (pruned, filtered) read of the table it writes
    current = sql.read.format("hoodie").load(location)
    current.filter("city = 'sf'").select("uuid", "ts", (F.col("fare") * 2).alias("fare"), "city") \
        .write.format("hoodie").options(**OPTS).mode("upsert").save(location)
    assert_table(sql, location, [("a", 1, 20.0, "sf"), ("b", 1, 40.0, "sf"), ("c", 1, 30.0, "nyc"), ("d", 1, 40.0, "la")])
    write(sql, location, [("e", 1, 50.0, "sf")], "overwrite")
    assert_table(sql, location, [("e", 1, 50.0, "sf")])

    jvm_save(frame(sql, [("f", 1, 60.0, "nyc")]), location, "append")
    read_back = sql.read.format("hoodie").load(location).select("uuid", F.col("ts") + 1, "fare", "city")
    jvm_save(read_back.filter("uuid = 'e'").toDF(*COLUMNS), location, "append")  # an upsert of 'e'
    assert_table(sql, location, [("e", 2, 50.0, "sf"), ("f", 1, 60.0, "nyc")])
    jvm_save(frame(sql, [("g", 1, 70.0, "la")]), location, "overwrite")
    assert_table(sql, location, [("g", 1, 70.0, "la")])


def test_without_python_filter_pushdown_reads_still_prune(sql, trips):
    """A session with the shim but spark.sql.python.filterPushdown.enabled off (hoodie_datasource.session
    turns it on): PySpark refuses readers that take filters, so Spark filters, and columns are still pruned."""
    path, _, _ = trips
    sql.conf.set("spark.sql.python.filterPushdown.enabled", "false")
    try:
        expensive = sql.read.format("hoodie").load(path).filter("fare > 15").select("uuid")
        assert read_schema(expensive) == "struct<uuid:string,fare:double>"
        assert spark_filters(expensive)
        assert sorted(r.uuid for r in expensive.collect()) == ["a", "c"]
    finally:
        sql.conf.set("spark.sql.python.filterPushdown.enabled", "true")
