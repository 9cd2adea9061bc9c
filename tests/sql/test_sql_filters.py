"""Filters in SQL reach the Python reader (the shim plans each query with a fresh source): partitions
are pruned and rows filtered, exactly, and no query reuses another query's filters. Base files Spark
reads itself get the filters as any parquet scan does."""

from __future__ import annotations

import pytest

from tests.sql.helpers import assert_rows, create_trips, insert_trips

pytestmark = pytest.mark.spark


def test_partition_and_row_filters(sql, name, location):
    create_trips(sql, name, location)
    insert_trips(sql, name)
    assert_rows(sql, f"SELECT * FROM {name} WHERE city = 'sf'", [("a", 1, 10.0, "sf"), ("b", 1, 20.0, "sf")])
    assert_rows(sql, f"SELECT uuid FROM {name} WHERE city IN ('sf', 'la') AND fare > 15", [("b",)], "uuid string")
    assert_rows(sql, f"SELECT uuid FROM {name} WHERE city = 'sf' OR fare > 25", [("a",), ("b",), ("c",)], "uuid string")
    native = sql.sql(f"SELECT uuid FROM {name} WHERE city = 'sf'")._jdf.queryExecution().executedPlan().toString()
    assert "FileScan parquet" in native and "PushedFilters: [IsNotNull(city), EqualTo(city,sf)]" in native
    sql.conf.set("spark.hoodie.read.native", "false")
    try:
        pushed = sql.sql(f"SELECT uuid FROM {name} WHERE city = 'sf'")._jdf.queryExecution().executedPlan().toString()
        # the reader took the filter, so Spark plans no Filter of its own (pruning: tests/spark/test_reader_filters.py)
        assert "BatchScan" in pushed and "Filter (" not in pushed
        kept = sql.sql(f"SELECT uuid FROM {name} WHERE upper(city) = 'SF'")._jdf.queryExecution().executedPlan().toString()
        assert "Filter (" in kept  # one the reader cannot apply exactly stays with Spark
    finally:
        sql.conf.unset("spark.hoodie.read.native")


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_filtered_then_unfiltered_queries_on_one_dataframe(sql, name, location, table_type):
    create_trips(sql, name, location, table_type)
    insert_trips(sql, name)
    sql.sql(f"UPDATE {name} SET fare = 35.0 WHERE uuid = 'a'")  # MOR: the new fare is in a log file
    df = sql.table(name)
    assert sorted(r.uuid for r in df.filter("fare > 25").collect()) == ["a", "c"]
    assert [r.uuid for r in df.filter("fare < 15").collect()] == []  # never the stale base record of 'a'
    assert df.filter("city = 'sf'").count() == 2
    assert df.count() == 3 and df.agg({"fare": "sum"}).first()[0] == 85.0
    assert_rows(sql, f"SELECT uuid FROM {name} WHERE _hoodie_record_key = 'b'", [("b",)], "uuid string")
    assert_rows(sql, f"SELECT uuid FROM {name}_ro WHERE fare < 15", [("a",)] if table_type == "mor" else [],
                "uuid string")
