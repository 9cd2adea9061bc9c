"""SQL writes that carry Hudi's soft-delete column ``_hoodie_is_deleted``, and a null partition value read
back through SQL."""

from __future__ import annotations

import pytest

from tests.sql.helpers import assert_rows

pytestmark = pytest.mark.spark

SCHEMA = "uuid string, ts bigint, fare double, _hoodie_is_deleted boolean, city string"


def create(sql, name, location, table_type):
    sql.sql(f"""
        CREATE TABLE {name} (uuid STRING, ts BIGINT, fare DOUBLE, _hoodie_is_deleted BOOLEAN, city STRING)
        USING hoodie PARTITIONED BY (city) LOCATION '{location}'
        TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', type = '{table_type}')""")
    sql.sql(f"""INSERT INTO {name} VALUES ('a', 1, 10.0, false, 'sf'), ('b', 1, 20.0, false, 'sf'),
                                          ('c', 1, 30.0, false, 'nyc')""")


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_insert_into_with_soft_deletes(sql, name, location, table_type):
    create(sql, name, location, table_type)
    # b is soft-deleted, a updated, z (not in the table) soft-deleted: it is not written
    sql.sql(f"""INSERT INTO {name} VALUES ('b', 2, 0.0, true, 'sf'), ('a', 2, 11.0, false, 'sf'),
                                          ('z', 2, 5.0, true, 'la')""")
    assert_rows(sql, f"SELECT * FROM {name}", [("a", 2, 11.0, False, "sf"), ("c", 1, 30.0, False, "nyc")],
                SCHEMA)


def test_merge_source_carrying_soft_deletes(sql, name, location):
    create(sql, name, location, "mor")
    sql.createDataFrame([("a", 5, 1.0, True, "sf"), ("c", 5, 3.0, False, "nyc"), ("y", 5, 2.0, True, "la")],
                        SCHEMA).createOrReplaceTempView("soft")
    sql.sql(f"""MERGE INTO {name} t USING soft s ON t.uuid = s.uuid
                WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
    assert_rows(sql, f"SELECT * FROM {name}", [("b", 1, 20.0, False, "sf"), ("c", 5, 3.0, False, "nyc")], SCHEMA)


def test_null_partition_value_reads_back_as_null(sql, name, location):
    sql.sql(f"""
        CREATE TABLE {name} (uuid STRING, ts BIGINT, fare DOUBLE, city STRING) USING hoodie
        PARTITIONED BY (city) LOCATION '{location}' TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts')""")
    sql.sql(f"INSERT INTO {name} VALUES ('a', 1, 10.0, NULL), ('b', 1, 20.0, 'sf')")
    # Hudi's key generators put a null partition value in __HIVE_DEFAULT_PARTITION__; the column reads null
    import os
    assert os.path.isdir(os.path.join(location, "city=__HIVE_DEFAULT_PARTITION__"))
    schema = "uuid string, ts bigint, fare double, city string"
    assert_rows(sql, f"SELECT * FROM {name}", [("a", 1, 10.0, None), ("b", 1, 20.0, "sf")], schema)
    assert_rows(sql, f"SELECT * FROM {name} WHERE city IS NULL", [("a", 1, 10.0, None)], schema)
    sql.sql(f"INSERT INTO {name} VALUES ('a', 2, 11.0, NULL)")
    assert_rows(sql, f"SELECT * FROM {name}", [("a", 2, 11.0, None), ("b", 1, 20.0, "sf")], schema)
