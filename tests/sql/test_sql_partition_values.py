"""Partition values that are not plain relative paths through SQL: INSERT, the filtered SELECT (with its
partition pruning), UPDATE and DELETE find each row, COW and MOR, the native read on and off."""

from __future__ import annotations

import pytest

from tests.sql.helpers import assert_rows, create_trips

SCHEMA = "uuid string, ts bigint, fare double, city string"
CITIES = ["a//b", "a/", "/tmp/somewhere", "../escape", "50%", "new york"]


@pytest.mark.parametrize("native", ["true", "false"])
@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_unsafe_partition_values_in_sql(sql, name, location, table_type, native):
    create_trips(sql, name, location, table_type)
    rows = [(f"k{i}", 1, float(i), city) for i, city in enumerate(CITIES)]
    sql.sql(f"INSERT INTO {name} VALUES " + ", ".join(f"('{u}', {t}, {f}, '{c}')" for u, t, f, c in rows))
    sql.conf.set("spark.hoodie.read.native", native)
    try:
        assert_rows(sql, f"SELECT * FROM {name}", rows, SCHEMA)
        assert_rows(sql, f"SELECT * FROM {name} WHERE city = 'a//b'", rows[:1], SCHEMA)
        assert_rows(sql, f"SELECT * FROM {name} WHERE city IN ('a/', '50%')", [rows[1], rows[4]], SCHEMA)
        sql.sql(f"UPDATE {name} SET fare = 99.0 WHERE city = '/tmp/somewhere'")
        sql.sql(f"DELETE FROM {name} WHERE city = '../escape'")
        expected = [r if r[3] != "/tmp/somewhere" else (r[0], r[1], 99.0, r[3]) for r in rows if r[3] != "../escape"]
        assert_rows(sql, f"SELECT * FROM {name}", expected, SCHEMA)
    finally:
        sql.conf.unset("spark.hoodie.read.native")
