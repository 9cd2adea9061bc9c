"""INSERT OVERWRITE with an empty source, as Spark and Hudi have it: a static overwrite of the whole table or of a
``PARTITION (...)`` empties what it names with a replacecommit (which ``CALL rollback_to_instant`` undoes); a
dynamic partition overwrite with no rows replaces nothing and writes no commit."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.write_client import start_write
from hoodie_datasource.storage.registry import open_storage
from tests.conftest import require_module
from tests.sql.helpers import assert_rows, create_trips

hudi = require_module("hudi")
from hudi import HudiTableBuilder  # noqa: E402

# create_trips' columns as the catalog orders them: a partitioned table has its partition column last
COLUMNS = {True: "uuid, ts, fare, city", False: "uuid, ts, city, fare"}
STORED = [("a", 2, 11.0, "sf"), ("b", 1, 20.0, "sf"), ("c", 1, 30.0, "nyc")]


def _table(sql, name: str, location: str, table_type: str, partitioned: bool) -> None:
    """The trips rows in two commits: an insert, then an update of 'a' (a log file of a merge-on-read table)."""
    create_trips(sql, name, location, table_type, partitioned)
    sql.sql(f"INSERT INTO {name} ({COLUMNS[True]}) VALUES ('a', 1, 10.0, 'sf'), ('b', 1, 20.0, 'sf'), "
            "('c', 1, 30.0, 'nyc')")
    sql.sql(f"INSERT INTO {name} ({COLUMNS[True]}) VALUES ('a', 2, 11.0, 'sf')")
    assert_rows(sql, f"SELECT {COLUMNS[True]} FROM {name}", STORED)


def _nothing(columns: str) -> str:
    """A query of these trips columns returning no row."""
    return f"SELECT {columns} FROM VALUES ('z', 9, 'la', 9.0) AS v(uuid, ts, city, fare) WHERE false"


def _rows(sql, name: str) -> list[tuple]:
    return sorted(tuple(r) for r in sql.sql(f"SELECT {COLUMNS[True]} FROM {name}").collect())


def _rs_rows(location: str) -> list[tuple]:
    """The table's rows as hudi-rs, an independent reader, reads them."""
    batches = HudiTableBuilder.from_base_uri(location).build().read()
    data = pa.Table.from_batches(batches) if batches else None
    if data is None or data.num_rows == 0:
        return []
    return sorted(tuple(r.values()) for r in data.select(["uuid", "ts", "fare", "city"]).to_pylist())


def _rollback(sql, name: str, instant: str) -> bool:
    return sql.sql(f"CALL rollback_to_instant(table => '{name}', instant_time => '{instant}')").collect()[0][0]


def _check_replaced(sql, name: str, location: str, before: list[str], replaced_partitions: set[str],
                    expected: list[tuple]) -> None:
    """The overwrite is one replacecommit replacing every file group of those partitions and writing no file;
    the table holds ``expected`` (hudi-rs reads the same); rolling it back restores the rows it replaced."""
    table = HoodieTable(location)
    commits = table.completed_commits()
    assert commits[:-1] == before, "the overwrite is one new commit"
    overwrite = commits[-1]
    assert table.timeline().find(overwrite).action == "replacecommit"
    metadata = table.commit_metadata(overwrite)
    assert metadata["operationType"] in ("INSERT_OVERWRITE", "INSERT_OVERWRITE_TABLE")
    assert not any(metadata["partitionToWriteStats"].values())
    replaced = metadata["partitionToReplaceFileIds"]
    assert set(replaced) == replaced_partitions and all(replaced.values())
    assert _rows(sql, name) == sorted(expected)
    assert _rs_rows(location) == sorted(expected)

    assert _rollback(sql, name, overwrite) is True
    assert HoodieTable(location).completed_commits() == before
    assert _rows(sql, name) == sorted(STORED)
    assert _rs_rows(location) == sorted(STORED)


@pytest.mark.parametrize("partitioned", [True, False], ids=["partitioned", "unpartitioned"])
@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_static_overwrite_of_the_table_with_no_rows_empties_it(sql, name, location, table_type, partitioned):
    _table(sql, name, location, table_type, partitioned)
    before = HoodieTable(location).completed_commits()
    sql.sql(f"INSERT OVERWRITE {name} {_nothing(COLUMNS[partitioned])}")
    partitions = {p for p in HoodieTable(location).commit_metadata(before[0])["partitionToWriteStats"]}
    assert len(partitions) == (2 if partitioned else 1)
    _check_replaced(sql, name, location, before, partitions, [])


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_static_overwrite_of_a_partition_with_no_rows_empties_that_partition(sql, name, location, table_type):
    _table(sql, name, location, table_type, True)
    before = HoodieTable(location).completed_commits()
    sql.sql(f"INSERT OVERWRITE {name} PARTITION (city = 'sf') {_nothing('uuid, ts, fare')}")
    sf = [p for p in HoodieTable(location).commit_metadata(before[0])["partitionToWriteStats"] if "sf" in p]
    _check_replaced(sql, name, location, before, set(sf), [r for r in STORED if r[3] != "sf"])


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_dynamic_overwrite_with_no_rows_replaces_nothing(sql, name, location, table_type):
    _table(sql, name, location, table_type, True)
    before = HoodieTable(location).completed_commits()
    sql.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        sql.sql(f"INSERT OVERWRITE {name} {_nothing(COLUMNS[True])}")
        # a V2 table's static values are then columns of the rows (Spark's OverwritePartitionsDynamic)
        sql.sql(f"INSERT OVERWRITE {name} PARTITION (city = 'sf') {_nothing('uuid, ts, fare')}")
    finally:
        sql.conf.unset("spark.sql.sources.partitionOverwriteMode")
    assert HoodieTable(location).completed_commits() == before
    assert _rows(sql, name) == sorted(STORED)


def test_static_overwrite_of_typed_partitions(sql, name, location):
    """A date and an int partition column: the clause's values name the partition as a row holding them would;
    a clause leaving a column dynamic names every stored partition holding its values, as Spark deletes the rows
    matching it (and Hudi lists those partitions)."""
    sql.sql(f"""
        CREATE TABLE {name} (id STRING, v INT, day DATE, hour INT) USING hoodie PARTITIONED BY (day, hour)
        LOCATION '{location}' TBLPROPERTIES (primaryKey = 'id')""")
    sql.sql(f"""INSERT INTO {name} VALUES ('a', 1, DATE'2026-01-01', 1), ('b', 2, DATE'2026-01-01', 2),
                ('c', 3, DATE'2026-01-02', 1), ('d', 4, DATE'2026-01-02', 2)""")
    table = HoodieTable(location)
    stored = sorted(table.commit_metadata(table.latest_commit())["partitionToWriteStats"])

    def ids_after(statement: str) -> list[str]:
        sql.sql(statement)
        return sorted(r.id for r in sql.sql(f"SELECT id FROM {name}").collect())

    def replaced() -> list[str]:
        table.refresh()  # the table as the statement left it
        return sorted(table.commit_metadata(table.latest_commit())["partitionToReplaceFileIds"])

    assert ids_after(f"INSERT OVERWRITE {name} PARTITION (day = DATE'2026-01-01', hour = 1) "
                     "SELECT 'z', 0 WHERE false") == ["b", "c", "d"]
    assert replaced() == [stored[0]]
    assert ids_after(f"INSERT OVERWRITE {name} PARTITION (day = DATE'2026-01-01', hour) SELECT 'e', 5, 3") == [
        "c", "d", "e"]
    assert replaced() == [stored[1]]  # (2026-01-01, 1) has no file group left to replace
    assert ids_after(f"INSERT OVERWRITE {name} PARTITION (day = DATE'2026-01-02', hour) "
                     "SELECT 'z', 0, 1 WHERE false") == ["e"]
    assert replaced() == stored[2:]
    assert [i.action for i in table.instants()] == ["commit"] + ["replacecommit"] * 3


def test_static_partition_overwrite_with_rows_replaces_the_named_partition(sql, name, location):
    _table(sql, name, location, "cow", True)
    sql.sql(f"INSERT OVERWRITE {name} PARTITION (city = 'sf') SELECT 'd', 3, 4.0")
    assert _rows(sql, name) == sorted([("c", 1, 30.0, "nyc"), ("d", 3, 4.0, "sf")])


def test_rollback_to_instant_takes_only_the_latest_completed_write(sql, name, location):
    """Hudi's RollbackToInstantTimeProcedure: the instant must be a completed commit, and the latest one
    (``BaseRollbackActionExecutor``: "Found commits after time ..."); a refused call changes nothing."""
    _table(sql, name, location, "cow", True)
    sql.sql(f"INSERT OVERWRITE {name} {_nothing(COLUMNS[True])}")
    commits = HoodieTable(location).completed_commits()
    trips = pa.schema([("uuid", pa.string()), ("ts", pa.int64()), ("fare", pa.float64()), ("city", pa.string())])
    pending = start_write(open_storage(location), {"hoodie.table.name": name}, trips)  # a write under way
    try:
        for instant, message in ((commits[-2], "latest"), ("20200101000000000", "no instant"),
                                 (pending.instant_time, "requested, not completed")):
            with pytest.raises(Exception, match=message):
                _rollback(sql, name, instant)
            assert HoodieTable(location).completed_commits() == commits
            assert _rows(sql, name) == []
        assert HoodieTable(location).timeline().find(pending.instant_time) is not None
    finally:
        pending.abort()


def test_static_partition_holding_a_comma_is_refused(sql, name, location):
    """The static partitions travel as hoodie.static.overwrite.partition.paths, comma separated: a partition
    path holding a ',' would name other partitions, so the statement is refused and nothing changes."""
    _table(sql, name, location, "cow", True)
    commits = HoodieTable(location).completed_commits()
    with pytest.raises(Exception, match="holds a ','"):
        sql.sql(f"INSERT OVERWRITE {name} PARTITION (city = 'sf,nyc') SELECT 'z', 1, 1.0")
    assert HoodieTable(location).completed_commits() == commits
    assert _rows(sql, name) == sorted(STORED)
