"""The filtering reader (used only through the jvm-shim): which filters it takes, and partition pruning."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, EqualTo, GreaterThan, In, StringContains

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.planner import plan_read
from hoodie_datasource.spark.reader import FilteringReader, HoodieReader
from hoodie_datasource.storage.registry import open_storage

OPTS = {"table.name": "t", "recordkey.field": "uuid", "partitionpath.field": "city", "precombine.field": "ts"}


def _table(tmp_path, **extra):
    path = str(tmp_path / "t")
    rows = pa.table({"uuid": ["a", "b", "c"], "ts": [1, 1, 1], "fare": [10.0, 20.0, 30.0], "city": ["sf", "sf", "nyc"]})
    write_local(path, rows, {**OPTS, **extra})
    return plan_read(open_storage(path), ReadConfig())


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
