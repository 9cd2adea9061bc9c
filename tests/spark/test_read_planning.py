"""A plain read resolves its options once and plans once. The data source resolves them in ``schema()``,
which loads the table (one listing of the timeline) and plans the read; the resolved options, the table and
the plan travel, pickled, to ``reader()``, which lists the timeline once more to check the plan still shows
the table's completed writes, and plans again only when it does not. Nothing is kept between two data
sources: each plans its own read. (In the caller's process ``spark.read_check`` resolves the options once
more, to raise a bad option's error before Spark wraps it.) No JVM: the data source is called as PySpark
calls it."""

from __future__ import annotations

import base64
import pickle

import pyarrow as pa
import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.spark import datasource
from hoodie_datasource.spark.datasource import HoodieDataSource
from hoodie_datasource.spark.shim_options import (
    PLAN_FILES_OPTION,
    PLAN_INSTANT_OPTION,
    PLAN_OPTION,
    PLANNED_SOURCE_OPTION,
)
from hoodie_datasource.table import table as table_module
from hoodie_datasource.table.table import Table
from tests.counting_storage import CountingStorage

pytestmark = pytest.mark.spark

OPTS = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "city"}


def rows(*values: tuple) -> pa.Table:
    uuid, ts, city = zip(*values)
    return pa.table({"uuid": list(uuid), "ts": list(ts), "city": list(city)})


def read(source: HoodieDataSource) -> list[tuple]:
    """``schema()``, then ``reader()`` on the instance as PySpark hands it over (pickled), read whole."""
    schema = source.schema()
    reader = pickle.loads(pickle.dumps(source)).reader(schema)
    table = pa.Table.from_batches([b for part in reader.partitions() for b in reader.read(part)])
    return sorted(zip(table.column("uuid").to_pylist(), table.column("ts").to_pylist()))


@pytest.fixture
def counted(tmp_path, monkeypatch) -> tuple[str, CountingStorage, list[dict]]:
    """A table of three rows, the counting storage every ``Table.load`` of it opens, and the options of each
    resolution of read options in the data source."""
    path = str(tmp_path / "trips")
    write_local(path, rows(("a", 1, "sf"), ("b", 1, "la"), ("c", 1, "sf")), OPTS)
    storage = CountingStorage(path)
    monkeypatch.setattr(table_module, "open_storage", lambda uri, options: storage)
    resolved: list[dict] = []
    real = datasource.resolve_read_config
    monkeypatch.setattr(datasource, "resolve_read_config", lambda options: resolved.append(options) or real(options))
    return path, storage, resolved


def test_a_plain_read_resolves_its_options_once_and_lists_the_timeline_once_per_call(counted):
    path, storage, resolved = counted
    assert read(HoodieDataSource({"path": path})) == [("a", 1), ("b", 1), ("c", 1)]
    assert len(resolved) == 1
    assert storage.timeline_listings() == 2  # schema() loads the table; reader() checks the plan is current


def test_a_data_source_read_again_after_a_commit_plans_again(counted):
    path, storage, _ = counted
    source = HoodieDataSource({"path": path})
    schema = source.schema()
    travelled = pickle.dumps(source)
    write_local(path, rows(("a", 2, "sf")), OPTS)
    reader = pickle.loads(travelled).reader(schema)
    table = pa.Table.from_batches([b for part in reader.partitions() for b in reader.read(part)])
    assert sorted(zip(table.column("uuid").to_pylist(), table.column("ts").to_pylist())) == [
        ("a", 2), ("b", 1), ("c", 1)]


def test_a_pinned_read_is_not_checked_again_and_two_data_sources_plan_their_own_reads(counted):
    path, storage, resolved = counted
    assert read(HoodieDataSource({"path": path})) == [("a", 1), ("b", 1), ("c", 1)]
    instant = Table.load(path).timeline.last_completed_write().timestamp
    write_local(path, rows(("a", 2, "sf")), OPTS)
    storage.timeline_listings()
    pinned = HoodieDataSource({"path": path, PLAN_INSTANT_OPTION: instant})
    assert read(pinned) == [("a", 1), ("b", 1), ("c", 1)]  # the table as it was at the instant
    assert storage.timeline_listings() == 1  # schema() only
    assert read(HoodieDataSource({"path": path})) == [("a", 2), ("b", 1), ("c", 1)]
    assert len(resolved) == 3


def test_the_shims_calls_take_the_plan_they_are_handed(counted, monkeypatch):
    """The jvm-shim hands its file listing's plan to the Python reads of the same query, and a DataFrame's first
    listing the data source PySpark pickled after ``schema()``: neither plans again; a pickled source of another
    read is not taken."""
    path, storage, _ = counted
    plans: list[str] = []
    real = datasource.plan_read
    monkeypatch.setattr(datasource, "plan_read", lambda table, cfg: plans.append(cfg.query_type) or real(table, cfg))
    listing = HoodieDataSource({"path": path, PLAN_FILES_OPTION: "true"})
    metadata = listing.schema().fields[0].metadata
    storage.timeline_listings()
    handed = HoodieDataSource({"path": path, PLAN_INSTANT_OPTION: metadata["instant"], PLAN_OPTION: metadata["plan"]})
    assert read(handed) == [("a", 1), ("b", 1), ("c", 1)]
    assert storage.timeline_listings() == 0 and plans == ["snapshot"]  # the listing's plan only

    made = HoodieDataSource({"path": path})
    made.schema()
    pickled = base64.b64encode(pickle.dumps(made)).decode()
    storage.timeline_listings()
    HoodieDataSource({"path": path, PLAN_FILES_OPTION: "true", PLANNED_SOURCE_OPTION: pickled}).schema()
    assert storage.timeline_listings() == 1 and len(plans) == 2  # the handed plan, checked against the timeline

    other_read = {"path": path, PLAN_FILES_OPTION: "true", PLANNED_SOURCE_OPTION: pickled,
                  "hoodie.datasource.query.type": "read_optimized"}
    HoodieDataSource(other_read).schema()
    assert plans[2:] == ["read_optimized"]  # another read: its own plan
