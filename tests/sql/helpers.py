"""Shared statements and checks of the SQL tests."""

from __future__ import annotations

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
