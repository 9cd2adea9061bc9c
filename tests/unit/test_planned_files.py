"""A read plan as files (what the jvm-shim hands Spark's parquet scan), and the pinned, restricted
plans that read the rest: the two never overlap, and a commit landing in between changes neither."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.file_reader import read_file_slice
from hoodie_datasource.read.planned_files import PlannedFile, planned_files, stores_as_is
from hoodie_datasource.read.planner import plan_read
from hoodie_datasource.table.table import Table
from tests.conftest import unzip_table
from tests.unit.small_tables import batch

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}
MOR = {**OPTS, "storage.type": "MERGE_ON_READ"}


def files(plan) -> dict[str, PlannedFile]:
    """Planned files by partition (one file group per partition here)."""
    return {os.path.basename(os.path.dirname(f.path)): f for f in planned_files(plan).files}


def test_copy_on_write_base_files_are_native_with_their_exact_sizes(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "y", 2)]), OPTS)
    t2 = write_local(path, batch([("a", 2, "x", 10)]), OPTS)
    plan = plan_read(Table.load(path), ReadConfig())
    assert (planned_files(plan).instant, planned_files(plan).begin) == (t2, None)
    planned = files(plan)
    assert sorted(planned) == ["x", "y"]
    assert all(f.native and f.size == os.path.getsize(f.path) for f in planned.values())
    assert pq.read_table(planned["x"].path).column("v").to_pylist() == [10]  # the rewritten file


def test_merge_on_read_slices_with_log_files_are_left_to_our_reader(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "y", 2)]), MOR)
    write_local(path, batch([("a", 2, "x", 10)]), MOR)  # a log file in x
    planned = files(plan_read(Table.load(path), ReadConfig()))
    assert (planned["x"].native, planned["y"].native) == (False, True)
    # read-optimized reads base files only: all native, at the base file's size (not the slice's)
    read_optimized = files(plan_read(Table.load(path), ReadConfig(query_type="read_optimized")))
    assert all(f.native and f.size == os.path.getsize(f.path) for f in read_optimized.values())


def test_incremental_pulls_carry_their_commit_range(tmp_path):
    path = str(tmp_path / "t")
    t1 = write_local(path, batch([("a", 1, "x", 1), ("b", 1, "y", 2)]), OPTS)
    t2 = write_local(path, batch([("a", 2, "x", 10)]), OPTS)
    write_local(path, batch([("b", 3, "y", 20)]), OPTS)
    pull = ReadConfig(query_type="incremental", begin_instant=t1, end_instant=t2)
    planned = planned_files(plan_read(Table.load(path), pull))
    assert [os.path.basename(os.path.dirname(f.path)) for f in planned.files] == ["x"]  # the group t2 wrote
    assert (planned.begin, planned.instant) == (t1, t2)


def pairs(plan) -> list[tuple]:
    out = pa.concat_tables(pa.Table.from_batches(list(read_file_slice(plan, s)), plan.schema) for s in plan.slices)
    return sorted(zip(out.column("id").to_pylist(), out.column("v").to_pylist()))


def test_a_pinned_plan_ignores_later_commits_and_keeps_to_its_file_groups(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "y", 2)]), MOR)
    t2 = write_local(path, batch([("a", 2, "x", 10)]), MOR)
    before = plan_read(Table.load(path), ReadConfig())
    assert before.instant == t2
    t3 = write_local(path, batch([("b", 3, "y", 20), ("c", 3, "z", 30)]), MOR)  # lands between the two steps
    pinned = plan_read(Table.load(path), ReadConfig().pinned_to(t2))
    assert pairs(pinned) == pairs(before) == [("a", 10), ("b", 2)]
    assert pairs(plan_read(Table.load(path), ReadConfig())) == [("a", 10), ("b", 20), ("c", 30)]
    merged = {f.group for f in planned_files(before).files if not f.native}
    assert pairs(pinned.only(frozenset(merged))) == [("a", 10)]  # x, the slice with a log file, only
    pull = ReadConfig(query_type="incremental", begin_instant="000")
    assert plan_read(Table.load(path), pull).instant == t3
    assert plan_read(Table.load(path), pull.pinned_to(t2)).commit_range == ("000", t2)


def test_files_that_store_a_column_with_another_type_are_not_native(tmp_path):
    """Hudi's time-based key generator table: the partition column is a string in the table's schema,
    while some commits stored it as epoch milliseconds (our reader casts; Spark's would fail)."""
    base = str(unzip_table("sample_table/cow/v9_timebasedkeygen_epochmillis.zip", tmp_path))
    plan = plan_read(Table.load(base), ReadConfig())
    assert plan.schema.field("ts_millis").type == pa.string()
    stored = {f.native: pq.read_schema(f.path).field("ts_millis").type for f in planned_files(plan).files}
    assert stored == {True: pa.string(), False: pa.int64()}
    schema = pa.schema([("Id", pa.string())])
    assert not stores_as_is(pa.schema([("id", pa.string())]), schema)  # only case-insensitively the same
    assert stores_as_is(pa.schema([("other", pa.int64())]), schema)  # absent: read as nulls
