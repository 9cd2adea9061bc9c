"""``hoodie_table_changes(table, 'cdc', begin [, end])``: Hudi's CDC query in SQL, by table name and by
path, on a table created with ``hoodie.table.cdc.enabled``; the rows are the core reader's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.table_reader import read_table


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_table_changes_cdc(sql, name, location, table_type):
    sql.sql(f"""
        CREATE TABLE {name} (uuid STRING, ts BIGINT, city STRING, fare DOUBLE) USING hoodie
        PARTITIONED BY (city) LOCATION '{location}'
        TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', type = '{table_type}',
                       'hoodie.table.cdc.enabled' = 'true')""")
    sql.sql(f"INSERT INTO {name} VALUES ('a', 1, 10.0, 'sf'), ('b', 1, 20.0, 'sf'), ('c', 1, 30.0, 'nyc')")
    first = HoodieTable(location).completed_commits()[0]
    sql.sql(f"UPDATE {name} SET fare = 35.0 WHERE uuid = 'a'")
    sql.sql(f"DELETE FROM {name} WHERE uuid = 'c'")
    commits = HoodieTable(location).completed_commits()
    assert "hoodie.table.cdc.enabled=true" in (Path(location) / ".hoodie" / "hoodie.properties").read_text()
    if table_type == "cow":  # the UPDATE rewrote sf's base file, the DELETE nyc's: a CDC log beside each
        assert len(list(Path(location).glob("*/.*.cdc"))) == 2
    core = read_table(location, ReadConfig(query_type="incremental", begin_instant=first, incremental_format="cdc"))
    expected = sorted(tuple(r.values()) for r in core.to_pylist())
    assert sorted((r[0], json.loads(r[2] or r[3])["uuid"]) for r in expected) == [("d", "c"), ("u", "a")]
    for table in (name, location):
        rows = sql.sql(f"SELECT * FROM hoodie_table_changes('{table}', 'cdc', '{first}')").collect()
        assert sorted(tuple(r) for r in rows) == expected
    # (begin, end]: the update only
    rows = sql.sql(f"SELECT op, ts_ms FROM hoodie_table_changes('{name}', 'CDC', '{first}', '{commits[1]}')").collect()
    assert [tuple(r) for r in rows] == [("u", commits[1])]
