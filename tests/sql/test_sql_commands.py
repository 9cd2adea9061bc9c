"""SHOW PARTITIONS, TRUNCATE TABLE [PARTITION] and ALTER TABLE DROP PARTITION on hoodie tables."""

from __future__ import annotations

import pytest

from hoodie_datasource import HoodieTable
from tests.sql.helpers import assert_rows, create_trips, insert_trips

pytestmark = pytest.mark.spark


def _partitions(sql, statement: str) -> list[str]:
    return sorted(r[0] for r in sql.sql(statement).collect())


def _hudi_rs_keys(location: str) -> list[str]:
    import hudi  # hudi-rs, an independent reader

    batches = hudi.HudiTableBuilder.from_base_uri(location).build().read()
    return sorted(k for b in batches for k in b.column("uuid").to_pylist())


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_show_partitions_and_truncate_partition(sql, name, location, table_type):
    create_trips(sql, name, location, table_type)
    insert_trips(sql, name)
    sql.sql(f"INSERT INTO {name} VALUES ('d', 1, 5.0, 'la')")
    assert _partitions(sql, f"SHOW PARTITIONS {name}") == ["city=la", "city=nyc", "city=sf"]
    assert _partitions(sql, f"SHOW PARTITIONS {name} PARTITION (city = 'sf')") == ["city=sf"]

    sql.sql(f"TRUNCATE TABLE {name} PARTITION (city = 'sf')")
    assert_rows(sql, f"SELECT * FROM {name}", [("c", 1, 30.0, "nyc"), ("d", 1, 5.0, "la")])
    assert _partitions(sql, f"SHOW PARTITIONS {name}") == ["city=la", "city=nyc"]
    # one delete_partition commit (a replacecommit), which hudi-rs reads too
    table = HoodieTable(location)
    assert table.commit_metadata(table.latest_commit())["operationType"] == "DELETE_PARTITION"
    assert _hudi_rs_keys(location) == ["c", "d"]

    sql.sql(f"ALTER TABLE {name} DROP PARTITION (city = 'la')")  # Hudi's drop partition: the same
    assert_rows(sql, f"SELECT * FROM {name}", [("c", 1, 30.0, "nyc")])


@pytest.mark.parametrize("partitioned", [True, False])
def test_truncate_table(sql, name, location, partitioned):
    create_trips(sql, name, location, partitioned=partitioned)
    sql.sql(f"INSERT INTO {name} (uuid, ts, fare, city) VALUES ('a', 1, 10.0, 'sf'), ('c', 1, 30.0, 'nyc')")
    before = HoodieTable(location).latest_commit()

    sql.sql(f"TRUNCATE TABLE {name}")
    assert sql.sql(f"SELECT * FROM {name}").count() == 0
    assert _hudi_rs_keys(location) == []
    # the table is still there: time travel reads what it held, and it takes new rows
    assert sql.sql(f"SELECT * FROM {name} TIMESTAMP AS OF '{before}'").count() == 2
    sql.sql(f"INSERT INTO {name} (uuid, ts, fare, city) VALUES ('e', 1, 1.0, 'sf')")
    assert [r[0] for r in sql.sql(f"SELECT uuid FROM {name}").collect()] == ["e"]
