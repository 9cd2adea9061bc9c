"""ALTER TABLE ADD COLUMNS / ALTER COLUMN TYPE: the new schema is committed to the timeline, as Hudi does."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from pyspark.errors import AnalysisException

from hoodie_datasource import HoodieTable
from tests.sql.helpers import assert_rows, create_trips

pytestmark = pytest.mark.spark


def _hudi_rs_rows(location: str, columns: list[str]) -> list[tuple]:
    import hudi  # hudi-rs, an independent reader

    table = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(location).build().read())
    return sorted(tuple(row[c] for c in columns) for row in table.to_pylist())


@pytest.mark.parametrize(("table_type", "partitioned"), [("cow", True), ("mor", True), ("cow", False)])
def test_add_columns(sql, name, location, table_type, partitioned):
    create_trips(sql, name, location, table_type, partitioned)
    sql.sql(f"INSERT INTO {name} (uuid, ts, fare, city) VALUES ('a', 1, 10.0, 'sf'), ('b', 1, 20.0, 'nyc')")

    sql.sql(f"ALTER TABLE {name} ADD COLUMNS (note STRING, tip DOUBLE)")
    # the catalog: new columns after the data columns, the partition column still last
    expected = ["uuid", "ts", "fare", "note", "tip", "city"] if partitioned else \
        ["uuid", "ts", "city", "fare", "note", "tip"]
    assert sql.table(name).columns == expected
    # the timeline: an ALTER_SCHEMA commit (deltacommit on MOR) carrying the new schema
    table = HoodieTable(location)
    latest = table.latest_commit()
    metadata = table.commit_metadata(latest)
    assert metadata["operationType"] == "ALTER_SCHEMA"
    assert [f["name"] for f in json.loads(metadata["extraMetadata"]["schema"])["fields"]][-2:] == ["note", "tip"]
    action = "deltacommit" if table_type == "mor" else "commit"
    assert {i.action for i in table.instants() if i.timestamp == latest} == {action}

    # rows without the new columns, with them, and an update of an old row
    sql.sql(f"INSERT INTO {name} (uuid, ts, fare, city) VALUES ('c', 1, 30.0, 'sf')")
    sql.sql(f"INSERT INTO {name} (uuid, ts, fare, city, note, tip) VALUES ('d', 1, 40.0, 'nyc', 'new', 4.0)")
    sql.sql(f"INSERT INTO {name} (uuid, ts, fare, city, note, tip) VALUES ('b', 2, 21.0, 'nyc', 'upd', 2.0)")
    schema = "uuid string, ts bigint, fare double, note string, tip double, city string"
    rows = [("a", 1, 10.0, None, None, "sf"), ("b", 2, 21.0, "upd", 2.0, "nyc"),
            ("c", 1, 30.0, None, None, "sf"), ("d", 1, 40.0, "new", 4.0, "nyc")]
    assert_rows(sql, f"SELECT uuid, ts, fare, note, tip, city FROM {name}", rows, schema)
    cols = ["uuid", "ts", "fare", "note", "tip", "city"]
    assert _hudi_rs_rows(location, cols) == sorted(rows, key=lambda r: r[0])


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_alter_column_type_widens(sql, name, location, table_type):
    sql.sql(f"""
        CREATE TABLE {name} (uuid STRING, ts BIGINT, n INT, city STRING) USING hoodie
        PARTITIONED BY (city) LOCATION '{location}'
        TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', type = '{table_type}')""")
    sql.sql(f"INSERT INTO {name} VALUES ('a', 1, 7, 'sf')")

    sql.sql(f"ALTER TABLE {name} ALTER COLUMN n TYPE BIGINT")
    assert dict(sql.table(name).dtypes)["n"] == "bigint"
    sql.sql(f"INSERT INTO {name} VALUES ('b', 1, 5000000000, 'sf')")  # does not fit an int
    schema = "uuid string, ts bigint, n bigint, city string"
    assert_rows(sql, f"SELECT * FROM {name}", [("a", 1, 7, "sf"), ("b", 1, 5000000000, "sf")], schema)
    assert _hudi_rs_rows(location, ["uuid", "n"]) == [("a", 7), ("b", 5000000000)]


def test_refused_changes_change_nothing(sql, name, location):
    create_trips(sql, name, location)
    sql.sql(f"INSERT INTO {name} VALUES ('a', 1, 10.0, 'sf')")
    commits = HoodieTable(location).completed_commits()

    with pytest.raises(AnalysisException, match="ts"):
        sql.sql(f"ALTER TABLE {name} ALTER COLUMN ts TYPE INT")  # narrowing
    with pytest.raises(AnalysisException, match="position"):
        sql.sql(f"ALTER TABLE {name} ADD COLUMNS (x STRING FIRST)")
    with pytest.raises(Exception, match="fare.*cannot change from double to string|cannot be cast|string"):
        sql.sql(f"ALTER TABLE {name} ALTER COLUMN fare TYPE STRING")
    assert HoodieTable(location).completed_commits() == commits
    assert sql.table(name).columns == ["uuid", "ts", "fare", "city"]
    assert_rows(sql, f"SELECT * FROM {name}", [("a", 1, 10.0, "sf")])
