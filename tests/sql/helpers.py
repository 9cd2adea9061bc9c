"""Shared statements and checks of the SQL tests."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

from chispa import assert_df_equality

TRIPS_SCHEMA = "uuid string, ts bigint, fare double, city string"  # partition columns come last in a catalog table


def create_trips(sql, name: str, location: str, table_type: str = "cow", partitioned: bool = True) -> None:
    sql.sql(f"""
        CREATE TABLE {name} (uuid STRING, ts BIGINT, city STRING, fare DOUBLE) USING hoodie
        {"PARTITIONED BY (city)" if partitioned else ""} LOCATION '{location}'
        TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', type = '{table_type}')""")


def insert_trips(sql, name: str) -> None:
    sql.sql(f"INSERT INTO {name} VALUES ('a', 1, 10.0, 'sf'), ('b', 1, 20.0, 'sf'), ('c', 1, 30.0, 'nyc')")


def cleaned_trips(sql, name: str, location: str) -> list[str]:
    """Four commits, then a clean keeping one (the sf file group's versions of the first two are gone);
    returns the completed commits."""
    from hoodie_datasource import HoodieTable

    create_trips(sql, name, location)
    insert_trips(sql, name)
    for values in ("('a', 2, 11.0, 'sf')", "('a', 3, 12.0, 'sf')", "('b', 4, 21.0, 'sf')"):
        sql.sql(f"INSERT INTO {name} VALUES {values}")
    assert HoodieTable(location).clean(**{"hoodie.cleaner.commits.retained": "1"}) is not None
    return HoodieTable(location).completed_commits()


def assert_rows(sql, query: str, rows: list[tuple], schema: str = TRIPS_SCHEMA) -> None:
    """``query`` returns exactly ``rows`` (any order)."""
    expected = sql.createDataFrame(rows, schema)
    assert_df_equality(sql.sql(query), expected, ignore_row_order=True, ignore_nullable=True)


@contextlib.contextmanager
def python_reads(sql):
    """Every row read by the Python reader, as before native reads."""
    sql.conf.set("spark.hoodie.read.native", "false")
    try:
        yield
    finally:
        sql.conf.unset("spark.hoodie.read.native")


def physical_plan(df) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


def scans(df) -> dict[str, int]:
    """How many parquet scans and Python scans the executed plan has."""
    plan = physical_plan(df)
    return {"parquet": plan.count("FileScan parquet"), "python": plan.count("BatchScan ")}


def canonical(df) -> list[str]:
    """The rows as sorted JSON (maps and nested values included, which chispa cannot sort)."""
    return sorted(json.dumps(r.asDict(recursive=True), sort_keys=True, default=repr) for r in df.collect())


def assert_same_as_python_reads(sql, make) -> None:
    """``make()`` (a DataFrame) returns the same rows natively as with the Python reader alone."""
    with python_reads(sql):
        expected = make()
        rows, schema = canonical(expected), expected.schema
    actual = make()
    assert actual.schema == schema
    assert canonical(actual) == rows


@contextlib.contextmanager
def jvm_log(spark, logger: str) -> Iterator:
    """What the JVM logger ``logger`` logs at INFO and above meanwhile, in a ``java.io.StringWriter`` (the
    JVM's own stderr is not this process's)."""
    jvm = spark._jvm
    core = jvm.org.apache.logging.log4j.core
    context = jvm.org.apache.logging.log4j.LogManager.getContext(False)
    config = context.getConfiguration()
    writer = jvm.java.io.StringWriter()
    appender = core.appender.WriterAppender.createAppender(
        core.layout.PatternLayout.createDefaultLayout(), None, writer, "hoodie-test-capture", False, True)
    appender.start()
    info = jvm.org.apache.logging.log4j.Level.INFO
    logger_config = core.config.LoggerConfig(logger, info, True)
    logger_config.addAppender(appender, info, None)
    config.addLogger(logger, logger_config)
    context.updateLoggers()
    try:
        yield writer
    finally:
        config.removeLogger(logger)
        context.updateLoggers()
        appender.stop()
