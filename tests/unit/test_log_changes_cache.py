"""The jvm-shim's two Python scans of a merge-on-read slice, ``replaced`` then ``rows`` (``spark.reader``), decide
its log changes once per query: the ``rows`` scan takes the decision the ``replaced`` scan left in the host's
cache (``read.log_changes_cache``), never one of another state of the slice (a later commit appending a log
block), and decides again when the entry is missing or unreadable."""

from __future__ import annotations

import tempfile
import time

import numpy as np
import pyarrow as pa
import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.file_group import merged_reader
from hoodie_datasource.file_group.merged_reader import LogDecision
from hoodie_datasource.read import log_changes_cache
from hoodie_datasource.read.planner import plan_read
from hoodie_datasource.spark.reader import HoodieReader
from hoodie_datasource.spark.shim_options import REPLACED_FILE_COLUMN, REPLACED_ROW_COLUMN
from hoodie_datasource.storage import host_scratch
from hoodie_datasource.table.table import Table
from tests.unit.small_tables import batch
from tests.unit.test_log_changes import MOR_BUCKET

POSITIONS = pa.schema([(REPLACED_FILE_COLUMN, pa.int64()), (REPLACED_ROW_COLUMN, pa.int64())])


@pytest.fixture
def entries(tmp_path, monkeypatch):
    """The cache's directory, in a scratch of this test's own."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    host_scratch.directory.cache_clear()
    yield scratch / "hoodie-log-changes-cache"
    host_scratch.directory.cache_clear()


@pytest.fixture
def base_reads(monkeypatch) -> list[str]:
    """The base files the merge decodes the key and ordering columns of, one entry per decision made."""
    reads: list[str] = []
    original = merged_reader.read_base_file

    def counted(storage, relative, *args, **kwargs):
        reads.append(relative)
        return original(storage, relative, *args, **kwargs)

    monkeypatch.setattr(merged_reader, "read_base_file", counted)
    return reads


def scan(path: str, changes: str, **read) -> pa.Table:
    """One of the shim's two scans of the table's slices (a fresh plan, as every query gets)."""
    cfg = ReadConfig(**read)
    plan = plan_read(Table.load(path), cfg)
    reader = HoodieReader(plan, cfg, POSITIONS if changes == "replaced" else plan.schema, changes,
                          [s.group for s in plan.slices])
    batches = [b for p in reader.partitions() for b in reader.read(p)]
    return pa.Table.from_batches(batches, reader.arrow_schema)


def pairs(rows: pa.Table) -> list[tuple[str, int]]:
    return sorted(zip(rows.column("id").to_pylist(), rows.column("v").to_pylist()))


def two_commits(path: str) -> None:
    write_local(path, batch([("a", 5, "x", 1), ("b", 5, "x", 2), ("c", 5, "x", 3)]), MOR_BUCKET)
    write_local(path, batch([("b", 6, "x", 20), ("d", 1, "x", 40)]), MOR_BUCKET)


def test_the_rows_scan_takes_the_decision_the_replaced_scan_made(tmp_path, entries, base_reads):
    path = str(tmp_path / "t")
    two_commits(path)
    replaced = scan(path, "replaced")
    assert replaced.column(REPLACED_ROW_COLUMN).to_pylist() == [1]  # b, the second base row
    assert len(base_reads) == 1 and len(list(entries.glob("*.entry"))) == 1
    assert pairs(scan(path, "rows")) == [("b", 20), ("d", 40)]
    assert len(base_reads) == 1, "the rows scan decided the slice's log changes again"


def test_a_block_appended_to_the_slice_is_never_read_from_the_old_entry(tmp_path, entries, base_reads):
    path = str(tmp_path / "t")
    two_commits(path)
    second = plan_read(Table.load(path), ReadConfig()).instant
    scan(path, "replaced")
    assert pairs(scan(path, "rows")) == [("b", 20), ("d", 40)]
    old = {p.name: p.read_bytes() for p in entries.glob("*.entry")}
    write_local(path, batch([("a", 9, "x", 10), ("b", 6, "x", 21)]), MOR_BUCKET)
    # as Hudi appends a commit's blocks to the slice's log file where the storage can append: the same name
    first, appended = sorted((tmp_path / "t" / "x").glob(".*.log.*"))
    first.write_bytes(first.read_bytes() + appended.read_bytes())
    appended.unlink()
    # the rows scan alone: only the old query's entry is there, for the same files but the shorter log file
    assert pairs(scan(path, "rows")) == [("a", 10), ("b", 21), ("d", 40)]
    assert len(base_reads) == 2
    assert {p.name: p.read_bytes() for p in entries.glob("*.entry")} == old
    assert sorted(scan(path, "replaced").column(REPLACED_ROW_COLUMN).to_pylist()) == [0, 1]
    # as of the second commit: the same files as the entry just made, but the appended block is not visible
    assert pairs(scan(path, "rows", as_of_instant=second)) == [("b", 20), ("d", 40)]
    assert len(base_reads) == 4


def test_a_missing_or_unreadable_entry_is_decided_again(tmp_path, entries, base_reads):
    path = str(tmp_path / "t")
    two_commits(path)
    scan(path, "replaced")
    [entry] = entries.glob("*.entry")
    entry.write_bytes(entry.read_bytes()[:-3])
    assert pairs(scan(path, "rows")) == [("b", 20), ("d", 40)]
    entry.unlink()
    assert pairs(scan(path, "rows")) == [("b", 20), ("d", 40)]
    assert len(base_reads) == 3


def test_the_cache_keeps_within_its_budget_dropping_the_least_recently_used(entries, monkeypatch):
    monkeypatch.setattr(log_changes_cache, "BUDGET", 40_000)
    monkeypatch.setattr(log_changes_cache, "EVICT_ONE_IN", 1)
    decision = LogDecision(np.arange(1000, dtype=np.int64), np.arange(500, dtype=np.int64))  # 12 KB an entry
    log_changes_cache.store("first", decision)
    for i in range(10):
        log_changes_cache.store(f"other {i}", decision)
        time.sleep(0.02)  # apart by more than the file system's clock tick: eviction goes by modification time
        assert log_changes_cache.load("first") is not None  # used: the others go first
        time.sleep(0.02)
    assert sum(p.stat().st_size for p in entries.glob("*.entry")) <= 40_000
    loaded = log_changes_cache.load("other 9")
    assert loaded is not None and loaded.replaced.tolist() == list(range(1000)) and loaded.winners.tolist() == list(
        range(500))
    assert log_changes_cache.load("other 0") is None


def test_a_changes_scan_splits_its_slices_by_parallelism_not_by_size(tmp_path, entries):
    """A changes scan decodes a fraction of a slice's bytes: its slices go into ``parallelism`` tasks however
    small the split size, and every slice is read by exactly one of them (the rows as the merged read's)."""
    path = str(tmp_path / "t")
    write_local(path, batch([(k, 1, p, 1) for k, p in (("a", "w"), ("b", "x"), ("c", "y"), ("d", "z"))]), MOR_BUCKET)
    write_local(path, batch([(k, 2, p, 2) for k, p in (("a", "w"), ("b", "x"), ("c", "y"), ("d", "z"))]), MOR_BUCKET)
    cfg = ReadConfig(split_size=1, parallelism=2)
    plan = plan_read(Table.load(path), cfg)
    assert len(HoodieReader(plan, cfg, plan.schema).partitions()) == 4
    groups = [s.group for s in plan.slices]
    for changes, schema in (("replaced", POSITIONS), ("rows", plan.schema)):
        reader = HoodieReader(plan, cfg, schema, changes, groups)
        parts = reader.partitions()
        assert len(parts) == 2 and sorted(s.group for p in parts for s in p.value) == sorted(groups)
    assert scan(path, "replaced").column(REPLACED_FILE_COLUMN).to_pylist() == [0, 1, 2, 3]
    assert pairs(scan(path, "rows")) == [("a", 2), ("b", 2), ("c", 2), ("d", 2)]
