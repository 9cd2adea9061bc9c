"""SQL on a table of a version this library reads but does not write (version 8, Apache Hudi 1.0): CREATE
TABLE registers it and SELECT reads it; INSERT, UPDATE, DELETE and CALL run_clean are refused naming the
version, and the table's files stay as they were."""

from __future__ import annotations

import pytest

from tests.conftest import table_listing, unzip_table

V8 = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip"


def test_sql_writes_to_a_version_8_table_are_refused(sql, name, tmp_path):
    path = str(unzip_table(V8, tmp_path))
    before = table_listing(path)
    sql.sql(f"CREATE TABLE {name} USING hoodie LOCATION '{path}'")
    assert sql.sql(f"SELECT count(*) FROM {name}").collect()[0][0] == 6
    for statement in (f"INSERT INTO {name} SELECT ts, uuid, rider, driver, fare, city FROM {name} LIMIT 1",
                      f"UPDATE {name} SET fare = 0.0 WHERE city = 'chennai'",
                      f"DELETE FROM {name} WHERE city = 'chennai'",
                      f"CALL run_clean(table => '{name}', retain_commits => 1)"):
        with pytest.raises(Exception, match="is a Hudi table of version 8"):
            sql.sql(statement).collect()
        assert table_listing(path) == before, statement
    assert sql.sql(f"SELECT count(*) FROM {name}").collect()[0][0] == 6
