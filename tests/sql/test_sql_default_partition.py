"""SQL writes of a table partitioned by a string column whose batch spells Hudi's default partition
(``__HIVE_DEFAULT_PARTITION__``) two ways: null and the empty string are one partition path, but a clustered
SQL write has Spark cluster its rows by the column's values, so they may reach two tasks. Both then wrote
the default partition's one small file group, and the commit kept one task's file (a row was lost)."""

from __future__ import annotations

import pytest

from hoodie_datasource import HoodieTable
from tests.conftest import assert_failed_write_left_nothing, table_listing
from tests.sql.helpers import assert_rows, create_trips

EXPECTED = [("a", 2, 5.0), ("b", 1, 2.0), ("c", 1, 3.0), ("d", 1, 4.0)]
SCHEMA = "uuid string, ts long, fare double"
# the null and '' rows in two of eight tasks: the shuffle is not coalesced into one
SPREAD = {"spark.sql.adaptive.coalescePartitions.enabled": "false", "spark.sql.shuffle.partitions": "8"}


def test_null_and_empty_partition_values_in_one_insert(sql, name, location):
    create_trips(sql, name, location)
    sql.sql(f"INSERT INTO {name} VALUES ('a', 1, 1.0, NULL), ('b', 1, 2.0, 'sf')")
    commits = HoodieTable(location).completed_commits()
    files = table_listing(location)
    insert = f"INSERT INTO {name} VALUES ('c', 1, 3.0, NULL), ('d', 1, 4.0, ''), ('a', 2, 5.0, '')"
    saved = {key: sql.conf.get(key) for key in SPREAD}
    try:
        for key, value in SPREAD.items():
            sql.conf.set(key, value)
        with pytest.raises(Exception, match="reached two tasks of this SQL write"):
            sql.sql(insert)
        assert HoodieTable(location).completed_commits() == commits
        assert_failed_write_left_nothing(location, files)
        sql.conf.set("spark.hoodie.sql.clusteredWrites", "false")  # what the error says to do
        sql.sql(insert)
    finally:
        sql.conf.unset("spark.hoodie.sql.clusteredWrites")
        for key, value in saved.items():
            sql.conf.set(key, value)
    assert_rows(sql, f"SELECT uuid, ts, fare FROM {name}", EXPECTED, SCHEMA)
    assert_rows(sql, f"SELECT uuid, ts, fare FROM {name} WHERE city IS NULL OR city = ''",
                [("a", 2, 5.0), ("c", 1, 3.0), ("d", 1, 4.0)], SCHEMA)
