"""`SET hoodie.*` session options reach SQL writes and reads, in Hudi's precedence (README, SQL)."""

from __future__ import annotations

import pytest

from hoodie_datasource import HoodieTable
from tests.sql.helpers import assert_rows, create_trips

pytestmark = pytest.mark.spark


@pytest.fixture
def session_set(sql):
    """``SET key = value`` for one test, unset after it."""
    keys = []

    def set_(key: str, value: str) -> None:
        sql.sql(f"SET {key} = {value}")
        keys.append(key)

    yield set_
    for key in keys:
        sql.conf.unset(key)


def _cleans(location: str) -> int:
    return sum(1 for i in HoodieTable(location).instants() if i.action == "clean" and i.is_completed)


def _four_writes(sql, name: str) -> None:
    for ts in range(1, 5):
        sql.sql(f"INSERT INTO {name} VALUES ('a', {ts}, {ts * 10.0}, 'sf'), ('b', {ts}, 1.0, 'nyc')")


def test_set_cleaner_retained_reaches_sql_writes(sql, name, location, session_set):
    create_trips(sql, name, location)
    session_set("hoodie.cleaner.commits.retained", "1")
    _four_writes(sql, name)

    assert _cleans(location) >= 1  # retained=1: later writes clean the slices they replaced
    assert_rows(sql, f"SELECT * FROM {name}", [("a", 4, 40.0, "sf"), ("b", 4, 1.0, "nyc")])


def test_without_set_the_default_retains_every_slice(sql, name, location):
    create_trips(sql, name, location)
    _four_writes(sql, name)
    assert _cleans(location) == 0  # default hoodie.cleaner.commits.retained = 10


def test_session_beats_table_properties_in_writes_as_in_hudi(sql, name, location, session_set):
    """Hudi's ProvidesHoodieConfig.combineOptions: Spark SQL configs over the catalog table's properties."""
    sql.sql(f"""
        CREATE TABLE {name} (uuid STRING, ts BIGINT, city STRING, fare DOUBLE) USING hoodie
        PARTITIONED BY (city) LOCATION '{location}'
        TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', hoodie.cleaner.commits.retained = '10')""")
    session_set("hoodie.cleaner.commits.retained", "1")
    _four_writes(sql, name)
    assert _cleans(location) >= 1


def test_table_properties_apply_without_set(sql, name, location):
    sql.sql(f"""
        CREATE TABLE {name} (uuid STRING, ts BIGINT, city STRING, fare DOUBLE) USING hoodie
        PARTITIONED BY (city) LOCATION '{location}'
        TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', hoodie.cleaner.commits.retained = '1')""")
    _four_writes(sql, name)
    assert _cleans(location) >= 1


def test_session_never_changes_what_defines_the_table(sql, name, location, session_set):
    create_trips(sql, name, location)
    session_set("hoodie.datasource.write.recordkey.field", "fare")
    session_set("hoodie.datasource.write.partitionpath.field", "uuid")
    sql.sql(f"INSERT INTO {name} VALUES ('a', 1, 10.0, 'sf')")
    sql.sql(f"INSERT INTO {name} VALUES ('a', 2, 11.0, 'sf')")  # still keyed by uuid: an update
    assert_rows(sql, f"SELECT * FROM {name}", [("a", 2, 11.0, "sf")])
    assert sql.sql(f"SELECT _hoodie_partition_path FROM {name}").first()[0] == "city=sf"


def test_set_query_type_reaches_sql_and_dataframe_reads(sql, name, location, session_set):
    create_trips(sql, name, location, "mor")
    sql.sql(f"INSERT INTO {name} VALUES ('a', 1, 10.0, 'sf')")
    sql.sql(f"INSERT INTO {name} VALUES ('a', 2, 11.0, 'sf')")  # in a log file
    assert_rows(sql, f"SELECT * FROM {name}", [("a", 2, 11.0, "sf")])

    session_set("hoodie.datasource.query.type", "read_optimized")
    assert_rows(sql, f"SELECT * FROM {name}", [("a", 1, 10.0, "sf")])  # base files only
    assert_rows(sql, f"SELECT * FROM {name}_rt", [("a", 2, 11.0, "sf")])  # the view's own query type wins
    df = sql.read.format("hoodie").load(location)
    assert [tuple(r) for r in df.select("uuid", "fare").collect()] == [("a", 10.0)]
    # an option of the read itself beats the session's
    df = sql.read.format("hoodie").option("hoodie.datasource.query.type", "snapshot").load(location)
    assert [tuple(r) for r in df.select("uuid", "fare").collect()] == [("a", 11.0)]
