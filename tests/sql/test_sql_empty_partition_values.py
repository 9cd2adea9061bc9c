"""Rows whose partition value is null, '' or literally ``__HIVE_DEFAULT_PARTITION__`` all live under the
partition path ``__HIVE_DEFAULT_PARTITION__`` (Hudi's ``KeyGenUtils.getPartitionPath``), while their data
files keep the value itself. Partition pruning must keep that partition for every predicate one of the
three values may satisfy, or the filter, a DELETE or an UPDATE silently misses rows. Each answer is
checked against Spark's on the same rows in a plain temp view, and hudi-rs reads the table's rows."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

from tests.conftest import require_module

pytestmark = pytest.mark.spark

DEFAULT = "__HIVE_DEFAULT_PARTITION__"
SCHEMA = "uuid string, ts bigint, fare double, city string"
ROWS = [("a", 1, 1.0, "a"), ("b", 1, 2.0, "b"), ("e", 1, 3.0, ""), ("n", 1, 4.0, None), ("h", 1, 5.0, DEFAULT)]
# a new version of a row of each partition: on a merge-on-read table, a log file in each file group
UPSERTS = [("a", 2, 1.5, "a"), ("e", 2, 3.5, ""), ("n", 2, 4.5, None)]
PREDICATES = ["city = ''", "city <> 'a'", "city IN ('', 'a')", "city IS NULL", f"city = '{DEFAULT}'", "city < 'a'",
              "NOT city IN ('a', 'b')"]


def _create(sql, name: str, location: str, table_type: str, hive_style: bool, partitioned_by: str = "city",
            **properties: str) -> None:
    extra = "".join(f", '{key}' = '{value}'" for key, value in properties.items())
    sql.sql(f"""
        CREATE TABLE {name} (uuid STRING, ts BIGINT, fare DOUBLE, zone STRING, city STRING) USING hoodie
        PARTITIONED BY ({partitioned_by}) LOCATION '{location}'
        TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', type = '{table_type}',
                       'hoodie.datasource.write.hive_style_partitioning' = '{str(hive_style).lower()}'{extra})""")


def _insert(sql, name: str, rows: list[tuple]) -> None:
    """Null, '' and the literal default value are one partition path: one task writes them all."""
    values = ", ".join(f"('{u}', {t}, {f}, 'z', {'NULL' if c is None else repr(c)})" for u, t, f, c in rows)
    sql.conf.set("spark.hoodie.sql.clusteredWrites", "false")
    try:
        sql.sql(f"INSERT INTO {name} (uuid, ts, fare, zone, city) VALUES {values}")
    finally:
        sql.conf.unset("spark.hoodie.sql.clusteredWrites")


def _current(rows: list[tuple], upserts: list[tuple]) -> list[tuple]:
    by_key = {r[0]: r for r in rows}
    by_key.update({r[0]: r for r in upserts})
    return sorted(by_key.values())


def _sorted(df) -> list[tuple]:
    return sorted((tuple(r) for r in df.collect()), key=lambda r: r[0])


def _log_files(location: str) -> list[str]:
    return [f for root, _, files in os.walk(location) if ".hoodie" not in root for f in files if ".log." in f]


def _hudi_rs_rows(location: str) -> list[tuple]:
    hudi = require_module("hudi")
    batches = hudi.HudiTableBuilder.from_base_uri(location).build().read()
    data = pa.Table.from_batches(batches).select(["uuid", "ts", "fare", "city"])
    return sorted(tuple(r.values()) for r in data.to_pylist())


def _check_predicates(sql, name: str, location: str, rows: list[tuple]) -> None:
    view = f"{name}_expected"
    sql.createDataFrame(rows, SCHEMA).createOrReplaceTempView(view)
    frame = sql.read.format("hoodie").load(location).select("uuid", "ts", "fare", "city")
    for predicate in PREDICATES:
        expected = _sorted(sql.sql(f"SELECT * FROM {view} WHERE {predicate}"))
        assert _sorted(sql.sql(f"SELECT uuid, ts, fare, city FROM {name} WHERE {predicate}")) == expected, predicate
        assert _sorted(frame.filter(predicate)) == expected, predicate


@pytest.fixture(params=["true", "false"], ids=["native", "python"])
def native(request, sql):
    sql.conf.set("spark.hoodie.read.native", request.param)
    yield request.param == "true"
    sql.conf.unset("spark.hoodie.read.native")


# each reader meets both table types and both path styles (every combination took 4 more minutes of CI)
@pytest.mark.parametrize("native, table_type, hive_style", [
    ("true", "cow", True), ("true", "mor", False), ("false", "cow", False), ("false", "mor", True),
], ids=["native-cow-hive", "native-mor-plain", "python-cow-plain", "python-mor-hive"], indirect=["native"])
def test_default_partition_rows_are_found_by_filters_delete_and_update(sql, name, location, native, table_type,
                                                                        hive_style):
    _create(sql, name, location, table_type, hive_style)
    _insert(sql, name, ROWS)
    _insert(sql, name, UPSERTS)
    partitions = {d for d in os.listdir(location) if not d.startswith(".")}
    assert partitions == ({f"city={v}" for v in ("a", "b", DEFAULT)} if hive_style else {"a", "b", DEFAULT})
    assert bool(_log_files(location)) == (table_type == "mor")
    rows = _current(ROWS, UPSERTS)
    _check_predicates(sql, name, location, rows)

    sql.sql(f"DELETE FROM {name} WHERE city = ''")
    rows = [r for r in rows if r[3] != ""]
    sql.sql(f"UPDATE {name} SET fare = fare + 100 WHERE city <> 'a'")
    rows = [(u, t, f + 100 if c is not None and c != "a" else f, c) for u, t, f, c in rows]
    sql.sql(f"DELETE FROM {name} WHERE city = '{DEFAULT}'")
    rows = [r for r in rows if r[3] != DEFAULT]
    _check_predicates(sql, name, location, rows)
    assert _sorted(sql.sql(f"SELECT uuid, ts, fare, city FROM {name}")) == sorted(rows, key=lambda r: r[0])
    assert _hudi_rs_rows(location) == sorted(rows, key=lambda r: r[0])


@pytest.mark.parametrize("native, table_type", [("true", "cow"), ("false", "mor")], ids=["native-cow", "python-mor"],
                         indirect=["native"])
def test_default_partition_of_one_field_of_several(sql, name, location, native, table_type):
    """A complex key generator's path: only the null/empty field's part is the default partition."""
    _create(sql, name, location, table_type, hive_style=True, partitioned_by="zone, city")
    _insert(sql, name, ROWS)
    _insert(sql, name, UPSERTS)
    assert f"zone=z/city={DEFAULT}" in {
        os.path.relpath(root, location) for root, _, files in os.walk(location) if ".hoodie_partition_metadata" in files}
    rows = _current(ROWS, UPSERTS)
    _check_predicates(sql, name, location, rows)
    sql.sql(f"UPDATE {name} SET fare = fare + 100 WHERE city = '' AND zone = 'z'")
    rows = [(u, t, f + 100 if c == "" else f, c) for u, t, f, c in rows]
    sql.sql(f"DELETE FROM {name} WHERE city IS NULL")
    rows = [r for r in rows if r[3] is not None]
    _check_predicates(sql, name, location, rows)
    assert _hudi_rs_rows(location) == rows


def test_default_partition_of_url_encoded_paths(sql, name, location, native):
    _create(sql, name, location, "mor", hive_style=False, **{"hoodie.datasource.write.partitionpath.urlencode": "true"})
    _insert(sql, name, ROWS + [("s", 1, 6.0, "x/y")])
    _insert(sql, name, UPSERTS)
    assert {"x%2Fy", DEFAULT} <= set(os.listdir(location))
    rows = _current(ROWS + [("s", 1, 6.0, "x/y")], UPSERTS)
    _check_predicates(sql, name, location, rows)
    sql.sql(f"DELETE FROM {name} WHERE city = '' OR city = 'x/y'")
    rows = [r for r in rows if r[3] not in ("", "x/y")]
    _check_predicates(sql, name, location, rows)
    assert _hudi_rs_rows(location) == rows
