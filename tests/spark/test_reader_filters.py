"""The filtering reader (used only through the jvm-shim): which filters it takes, and partition pruning."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql.datasource import DataSourceReader, EqualTo, GreaterThan, In, IsNull, Not, StringContains

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.planner import plan_read
from hoodie_datasource.spark.reader import FilteringReader, HoodieReader
from hoodie_datasource.table.table import Table

OPTS = {"table.name": "t", "recordkey.field": "uuid", "partitionpath.field": "city", "precombine.field": "ts"}


def _table(tmp_path, **extra):
    path = str(tmp_path / "t")
    rows = pa.table({"uuid": ["a", "b", "c"], "ts": [1, 1, 1], "fare": [10.0, 20.0, 30.0], "city": ["sf", "sf", "nyc"]})
    write_local(path, rows, {**OPTS, **extra})
    return plan_read(Table.load(path), ReadConfig())


def _read(reader) -> list[str]:
    return sorted(u for p in reader.partitions() for b in reader.read(p) for u in b.column("uuid").to_pylist())


def test_partition_filters_prune_slices_and_rows_are_filtered(tmp_path):
    plan = _table(tmp_path, hive_style_partitioning="true")
    reader = FilteringReader(plan, ReadConfig(), plan.schema)
    rejected = list(reader.pushFilters([EqualTo(("city",), "sf"), GreaterThan(("fare",), 15.0),
                                        StringContains(("uuid",), "b")]))
    assert rejected == []
    assert {s.partition_path for p in reader.partitions() for s in p.value} == {"city=sf"}
    assert _read(reader) == ["b"]


def test_no_pruning_when_paths_do_not_spell_values(tmp_path):
    plan = _table(tmp_path, **{"partitionpath.urlencode": "true"})
    reader = FilteringReader(plan, ReadConfig(), plan.schema)
    assert list(reader.pushFilters([In(("city",), ("nyc",))])) == []
    assert len({s.partition_path for p in reader.partitions() for s in p.value}) == 2  # both read, rows filtered
    assert _read(reader) == ["c"]


def test_the_plain_reader_takes_no_filters(tmp_path):
    plan = _table(tmp_path)
    reader = HoodieReader(plan, ReadConfig(), plan.schema)
    assert type(reader).pushFilters is DataSourceReader.pushFilters  # PySpark keeps every filter on Spark's side
    assert _read(reader) == ["a", "b", "c"]


DEFAULT = "__HIVE_DEFAULT_PARTITION__"


def _default_partition_table(tmp_path, **extra):
    """'' and null both go to the default partition path (and so does the literal value), keeping their value."""
    path = str(tmp_path / "t")
    rows = pa.table({"uuid": ["a", "e", "n", "h"], "ts": [1] * 4, "zone": ["z"] * 4, "city": ["a", "", None, DEFAULT]})
    write_local(path, rows, {**OPTS, **extra})
    return plan_read(Table.load(path), ReadConfig())


@pytest.mark.parametrize("extra", [{}, {"hive_style_partitioning": "true"},
                                   {"partitionpath.field": "zone,city", "hive_style_partitioning": "true"}],
                         ids=["plain", "hive", "two-fields"])
@pytest.mark.parametrize(("pushed", "uuids"), [
    (EqualTo(("city",), ""), ["e"]),
    (Not(EqualTo(("city",), "a")), ["e", "h"]),
    (In(("city",), ("", "a")), ["a", "e"]),
    (IsNull(("city",)), ["n"]),
    (EqualTo(("city",), DEFAULT), ["h"]),
    (Not(In(("city",), ("a", "x"))), ["e", "h"]),  # never the null value: Spark's NOT IN is null for it
    (EqualTo(("city",), "x"), []),
])
def test_the_default_partition_is_kept_for_each_value_it_may_hold(tmp_path, extra, pushed, uuids):
    plan = _default_partition_table(tmp_path, **extra)
    reader = FilteringReader(plan, ReadConfig(), plan.schema)
    assert list(reader.pushFilters([pushed])) == []
    assert _read(reader) == uuids
    kept = {s.partition_path.rsplit("/", 1)[-1] for p in reader.partitions() for s in p.value}
    assert (f"city={DEFAULT}" in kept or DEFAULT in kept) == any(u in ("e", "n", "h") for u in uuids)


def test_a_value_holding_a_slash_is_its_one_fields_whole_path(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, pa.table({"uuid": ["a", "b"], "ts": [1, 1], "city": ["x/y", "x"]}), OPTS)
    plan = plan_read(Table.load(path), ReadConfig())
    reader = FilteringReader(plan, ReadConfig(), plan.schema)
    assert list(reader.pushFilters([EqualTo(("city",), "x/y")])) == []
    assert {s.partition_path for p in reader.partitions() for s in p.value} == {"x/y"}
    assert _read(reader) == ["a"]
