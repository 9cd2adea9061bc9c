"""A SQL table whose schema a DataFrame write changed on storage (a widened column, a new column): SQL takes
the table's columns from storage, as Hudi's catalog does (``HoodieCatalogTable.tableSchema``), not from the
column list the catalog kept when the table was created."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests.sql.helpers import assert_rows

pytestmark = pytest.mark.spark

BIG = 5_000_000_000  # beyond int
COLUMNS = ["uuid", "ts", "n", "note", "city"]
SCHEMA = "uuid string, ts bigint, n bigint, note string, city string"
OPTIONS = {"hoodie.datasource.write.recordkey.field": "uuid", "hoodie.datasource.write.precombine.field": "ts",
           "hoodie.datasource.write.partitionpath.field": "city"}


def _hudi_rs_rows(location: str) -> list[tuple]:
    import hudi  # hudi-rs, an independent reader

    table = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(location).build().read())
    return sorted(tuple(row[c] for c in COLUMNS) for row in table.to_pylist())


def _evolve_with_dataframe_writes(sql, name: str, location: str, table_type: str) -> None:
    sql.sql(f"""
        CREATE TABLE {name} (uuid STRING, ts BIGINT, n INT, city STRING) USING hoodie
        PARTITIONED BY (city) LOCATION '{location}'
        TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', type = '{table_type}')""")
    sql.sql(f"INSERT INTO {name} VALUES ('a', 1, 1, 'sf'), ('b', 1, 2, 'nyc')")
    _upsert(sql, location, [("c", 1, BIG, "sf")], "uuid string, ts bigint, n bigint, city string")  # int -> bigint
    _upsert(sql, location, [("d", 1, 4, "new", "nyc")], SCHEMA)  # + note


def _upsert(sql, location: str, rows: list[tuple], schema: str) -> None:
    sql.createDataFrame(rows, schema).write.format("hoodie").options(**OPTIONS).mode("upsert").save(location)


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_sql_sees_the_schema_a_dataframe_write_evolved(sql, name, location, table_type):
    _evolve_with_dataframe_writes(sql, name, location, table_type)

    # SELECT *: the widened column's values beyond int, the new column, the partition column last
    rows = [("a", 1, 1, None, "sf"), ("b", 1, 2, None, "nyc"), ("c", 1, BIG, None, "sf"), ("d", 1, 4, "new", "nyc")]
    assert sql.table(name).columns == COLUMNS
    assert_rows(sql, f"SELECT * FROM {name}", rows, SCHEMA)
    assert_rows(sql, f"SELECT uuid, n FROM {name} WHERE n > 2147483647", [("c", BIG)], "uuid string, n bigint")

    # DESCRIBE shows the table's types, and the catalog entry itself took them (the metastore, as other
    # sessions and engines see it)
    described = {r.col_name: r.data_type for r in sql.sql(f"DESCRIBE TABLE {name}").collect()}
    assert (described["n"], described["note"]) == ("bigint", "string")
    entry = sql._jsparkSession.sharedState().externalCatalog().getTable("default", name)
    assert entry.schema().simpleString() == "struct<uuid:string,ts:bigint,n:bigint,note:string,city:string>"

    # INSERT with the new column and a bigint value; UPDATE and MERGE on the new column
    sql.sql(f"INSERT INTO {name} (uuid, ts, n, note, city) VALUES ('e', 1, {BIG + 1}, 'sql', 'sf')")
    sql.sql(f"UPDATE {name} SET note = 'upd' WHERE uuid = 'a'")
    sql.sql(f"""MERGE INTO {name} t USING (SELECT 'b' AS uuid, 2L AS ts, {BIG + 2}L AS n, 'mrg' AS note) s
                ON t.uuid = s.uuid WHEN MATCHED THEN UPDATE SET n = s.n, note = s.note, ts = s.ts""")
    rows = [("a", 1, 1, "upd", "sf"), ("b", 2, BIG + 2, "mrg", "nyc"), ("c", 1, BIG, None, "sf"),
            ("d", 1, 4, "new", "nyc"), ("e", 1, BIG + 1, "sql", "sf")]
    assert_rows(sql, f"SELECT * FROM {name}", rows, SCHEMA)
    assert _hudi_rs_rows(location) == sorted(rows)


def test_later_dataframe_writes_reach_sql_again(sql, name, location):
    """The schema is taken again after every write (cached by the table's timeline, never stale)."""
    _evolve_with_dataframe_writes(sql, name, location, "cow")
    assert_rows(sql, f"SELECT uuid, note FROM {name} WHERE uuid = 'd'", [("d", "new")], "uuid string, note string")
    _upsert(sql, location, [("f", 1, 6, "x", 1.5, "sf")],
            "uuid string, ts bigint, n bigint, note string, tip double, city string")
    assert sql.table(name).columns == [*COLUMNS[:-1], "tip", "city"]
    assert_rows(sql, f"SELECT uuid, tip FROM {name} WHERE tip IS NOT NULL", [("f", 1.5)], "uuid string, tip double")
