"""TIMESTAMP AS OF / VERSION AS OF and the incremental table function ``hoodie_table_changes``."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pyspark.errors import AnalysisException

from hoodie_datasource import HoodieTable
from hoodie_datasource.timeline.instant_time import parse_instant
from tests.sql.helpers import assert_rows, create_trips, insert_trips

pytestmark = pytest.mark.spark

FIRST = [("a", 1, 10.0, "sf"), ("b", 1, 20.0, "sf"), ("c", 1, 30.0, "nyc")]
SECOND = [("a", 2, 11.0, "sf"), ("b", 1, 20.0, "sf"), ("c", 1, 30.0, "nyc")]
THIRD = [("a", 2, 11.0, "sf"), ("c", 1, 30.0, "nyc"), ("d", 3, 4.0, "la")]


@pytest.fixture(params=["cow", "mor"])
def history(request, sql, name, location):
    """A table with three commits; returns (name, location, [instants])."""
    create_trips(sql, name, location, request.param)
    insert_trips(sql, name)
    sql.sql(f"INSERT INTO {name} VALUES ('a', 2, 11.0, 'sf')")
    sql.sql(f"DELETE FROM {name} WHERE uuid = 'b'")
    sql.sql(f"INSERT INTO {name} VALUES ('d', 3, 4.0, 'la')")
    return name, location, HoodieTable(location).completed_commits()


def test_timestamp_and_version_as_of(sql, history):
    name, _, (t1, t2, t3, t4) = history
    assert_rows(sql, f"SELECT * FROM {name} TIMESTAMP AS OF '{t1}'", FIRST)
    assert_rows(sql, f"SELECT * FROM {name} TIMESTAMP AS OF '{t2}'", SECOND)
    assert_rows(sql, f"SELECT * FROM {name}_rt VERSION AS OF '{t4}'", THIRD)
    # a timestamp rather than an instant: the table as of the last commit at or before it (UTC timeline)
    between = parse_instant(t2) + (parse_instant(t3) - parse_instant(t2)) / 2
    stamp = between.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    assert_rows(sql, f"SELECT * FROM {name} TIMESTAMP AS OF '{stamp}'", SECOND)
    before = (parse_instant(t1) - timedelta(days=1)).strftime("%Y-%m-%d %H:%M:%S")
    assert_rows(sql, f"SELECT * FROM {name} TIMESTAMP AS OF '{before}'", [])


def test_hoodie_table_changes(sql, history):
    name, location, (t1, t2, t3, t4) = history
    assert_rows(sql, f"SELECT * FROM hoodie_table_changes('{name}', '{t1}')", [("a", 2, 11.0, "sf"), ("d", 3, 4.0, "la")])
    assert_rows(sql, f"SELECT * FROM hoodie_table_changes('{name}', '{t1}', '{t2}')", [("a", 2, 11.0, "sf")])
    assert_rows(sql, f"SELECT * FROM hoodie_table_changes('{name}', 'latest_state', '{t3}')", [("d", 3, 4.0, "la")])
    # a path instead of a table name: the table's own columns, meta columns first
    by_path = sql.sql(f"SELECT uuid FROM hoodie_table_changes('{location}', '{t3}', '{t4}')")
    assert [r.uuid for r in by_path.collect()] == ["d"]
    commit_times = sql.sql(f"SELECT DISTINCT _hoodie_commit_time FROM hoodie_table_changes('{name}', '{t1}')")
    assert sorted(r[0] for r in commit_times.collect()) == [t2, t4]


def test_bad_table_changes_calls(sql, history):
    name = history[0]
    with pytest.raises(AnalysisException, match="takes \\(table, begin instant"):
        sql.sql(f"SELECT * FROM hoodie_table_changes('{name}')").collect()
    # 'cdc' is a query type (tests/sql/test_sql_cdc.py), not a begin instant; without CDC logs it is inferred
    assert sql.sql(f"SELECT * FROM hoodie_table_changes('{name}', 'cdc', '000')").columns == [
        "op", "ts_ms", "before", "after"]
    sql.sql("CREATE OR REPLACE TEMPORARY VIEW plain AS SELECT 1 AS x")
    with pytest.raises(AnalysisException, match="plain is not a hoodie table"):
        sql.sql("SELECT * FROM hoodie_table_changes('plain', '000')").collect()
    with pytest.raises(Exception, match="begin.instanttime"):
        sql.sql(f"SELECT * FROM hoodie_table_changes('{name}', 'not-an-instant')").collect()
