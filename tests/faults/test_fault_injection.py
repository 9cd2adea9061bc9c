"""Every named fault point (``hoodie_datasource.fault_points``), failed both ways (an exception, and
SIGKILL of the writer's process group), on copy-on-write and merge-on-read tables: the table stays
readable and exactly as before or after the operation, by our reader and hudi-rs, a lock the dead
writer held expires, and the next operation recovers (``tests.faults.harness`` says what is checked).

Writes run in the local engine here; ``test_spark_writer_faults`` kills Spark writers (driver JVM and
Python workers)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from hoodie_datasource import fault_points as fp
from hoodie_datasource.services.clustering import is_clustering_commit
from tests.faults.harness import (
    OCC,
    Rows,
    Table,
    applied,
    assert_left,
    batch,
    data_files,
    recover,
    run_writer,
    timeline,
)

pytestmark = pytest.mark.fault

COW, MOR = "COPY_ON_WRITE", "MERGE_ON_READ"
BASE = ["k0", "k1", "k2", "k3"]
UPDATE = batch("update", ["k0", "k3", "n0"], ts=2)  # two updates (one per partition) and an insert
NO_SERVICES = {"hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}
CLEAN = {**OCC, "hoodie.cleaner.commits.retained": "1"}
# the metadata table compacts at each write: archival, which its latest compaction bounds, can go as far
COMPACT_METADATA = {"hoodie.metadata.compact.max.delta.commits": "1"}
ARCHIVE = {**OCC, "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", **COMPACT_METADATA}


@dataclass(frozen=True)
class Prepared:
    """A table ready for the operation under test: the worker's spec, the rows before and after the
    operation, and what to run again when recovering (a service that was interrupted)."""

    spec: dict
    before: Rows
    after: Rows
    again: Callable[[], object] | None = None


def _upsert(table: Table) -> Prepared:
    table.write(batch("first", BASE))
    table.write(batch("second", ["k1", "k2", "n1"], ts=1))
    spec = {"op": "upsert", "path": table.path, "options": table.options, "rows": UPDATE.to_pydict()}
    return Prepared(spec, table.rows, applied(table.rows, UPDATE))


def _rollback(table: Table) -> Prepared:
    table.write(batch("first", BASE))
    before_update = table.rows
    table.write(UPDATE)
    instant = timeline(table.path).last_completed_write().timestamp
    spec = {"op": "rollback", "path": table.path, "options": OCC, "instant": instant}
    return Prepared(spec, table.rows, before_update)  # the next write finishes the rollback


def _versions(table: Table, rounds: int, **extra: str) -> None:
    """``rounds`` updates of every row after a first write, a compaction after each on merge-on-read:
    slices for the cleaner to remove, instants for archival to move."""
    table.write(batch("first", BASE), **NO_SERVICES, **extra)
    for n in range(rounds):
        table.write(batch(f"round{n}", BASE, ts=n + 2), **NO_SERVICES, **extra)
        if table.table_type == MOR:
            table.service().compact(**OCC)


def _clean(table: Table) -> Prepared:
    _versions(table, 2)
    spec = {"op": "clean", "path": table.path, "options": CLEAN}
    return Prepared(spec, table.rows, table.rows, lambda: table.service().clean(**CLEAN))


def _compact(table: Table) -> Prepared:
    table.write(batch("first", BASE))
    table.write(UPDATE)
    spec = {"op": "compact", "path": table.path, "options": OCC}
    return Prepared(spec, table.rows, table.rows, lambda: table.service().compact(**OCC))


def _cluster(table: Table) -> Prepared:
    """Two writes, then a clustering of every file group (each is small)."""
    table.write(batch("first", BASE))
    table.write(UPDATE)
    spec = {"op": "cluster", "path": table.path, "options": OCC}
    return Prepared(spec, table.rows, table.rows, lambda: table.service().cluster(**OCC))


def _archive(table: Table) -> Prepared:
    _versions(table, 5, **COMPACT_METADATA)
    spec = {"op": "archive", "path": table.path, "options": ARCHIVE}
    return Prepared(spec, table.rows, table.rows, lambda: table.service().archive(**ARCHIVE))


def _first_metadata_table(table: Table) -> Prepared:
    """A table written without a metadata table; the upsert builds it first."""
    table.write(batch("first", BASE), **{"hoodie.metadata.enable": "false"})
    spec = {"op": "upsert", "path": table.path, "options": table.options, "rows": UPDATE.to_pydict()}
    return Prepared(spec, table.rows, applied(table.rows, UPDATE))


def _metadata_compaction(table: Table) -> Prepared:
    """An upsert that compacts the metadata table first (it has two deltacommits since it was built)."""
    table.write(batch("first", BASE))
    options = {**table.options, "hoodie.metadata.compact.max.delta.commits": "2"}
    spec = {"op": "upsert", "path": table.path, "options": options, "rows": UPDATE.to_pydict()}
    return Prepared(spec, table.rows, applied(table.rows, UPDATE))


def _savepoint(table: Table) -> Prepared:
    table.write(batch("first", BASE))
    table.write(UPDATE)
    instant = timeline(table.path).last_completed_write().timestamp
    spec = {"op": "savepoint", "path": table.path, "options": OCC, "instant": instant}
    return Prepared(spec, table.rows, table.rows, lambda: table.service().create_savepoint(instant, **OCC))


def _restore(table: Table) -> Prepared:
    """A restore rolling back one upsert: whatever it died at, the table reads as before or after it."""
    table.write(batch("first", BASE))
    kept = timeline(table.path).last_completed_write().timestamp
    table.service().create_savepoint(kept, **OCC)
    at_savepoint = table.rows
    table.write(UPDATE)
    spec = {"op": "restore", "path": table.path, "options": OCC, "instant": kept}

    def again() -> None:  # finishes the restore, or does it whole when it died before its plan
        table.service().rollback_to_savepoint(kept, **OCC)
        table.rows = at_savepoint

    return Prepared(spec, table.rows, at_savepoint, again)


@dataclass(frozen=True)
class Point:
    name: str
    prepare: Callable[[Table], Prepared]
    outcome: str  # "before" | "after": the state the table is in once the operation died at the point
    holds_lock: bool  # the operation holds the table lock at the point
    table_types: tuple[str, ...] = (COW, MOR)
    metadata_ready: bool = True  # the metadata table's files partition is ready once the operation died


POINTS = [
    Point(fp.AFTER_REQUESTED, _upsert, "before", False),
    Point(fp.AFTER_INFLIGHT, _upsert, "before", False),
    Point(fp.AFTER_DATA_FILE_WRITTEN, _upsert, "before", False),
    Point(fp.BEFORE_COMMIT, _upsert, "before", False),
    Point(fp.WHILE_HOLDING_LOCK, _upsert, "before", True),  # first reached creating the instant
    Point(fp.METADATA_BEFORE_COMMIT, _upsert, "before", True),  # the commit's deltacommit, its logs written
    Point(fp.METADATA_BEFORE_COMMIT, _metadata_compaction, "before", True),  # its base files written
    Point(fp.METADATA_AFTER_COMMIT, _upsert, "before", True),  # recorded there, not in the data timeline
    Point(fp.METADATA_INITIALIZED, _first_metadata_table, "before", True, metadata_ready=False),
    Point(fp.AFTER_COMPLETED_CREATE, _upsert, "after", True),
    Point(fp.MID_ROLLBACK, _rollback, "after", True),  # the completed instant goes first
    Point(fp.MID_CLEAN, _clean, "after", True),
    Point(fp.MID_COMPACTION, _compact, "after", False, (MOR,)),
    Point(fp.AFTER_CLUSTERING_SCHEDULED, _cluster, "after", True),  # scheduled under the lock
    Point(fp.MID_CLUSTERING, _cluster, "after", False),
    Point(fp.BEFORE_COMMIT, _cluster, "after", False, (MOR,)),  # every file written, the lock not taken yet
    Point(fp.MID_ARCHIVAL, _archive, "after", True),
    Point(fp.AFTER_SAVEPOINT_INFLIGHT, _savepoint, "before", True, (COW,)),
    # a restore deletes the metadata table first and builds it again once done
    Point(fp.AFTER_RESTORE_REQUESTED, _restore, "before", True, (COW,), metadata_ready=False),
    Point(fp.MID_ROLLBACK, _restore, "after", True, (MOR,), metadata_ready=False),
    Point(fp.MID_RESTORE, _restore, "after", True, metadata_ready=False),
]
CASES = [pytest.param(p, mode, t, id=f"{p.name}-{p.prepare.__name__.strip('_')}-{mode}-{'cow' if t == COW else 'mor'}")
         for p in POINTS for mode in ("fail", "kill") for t in p.table_types]


def test_every_fault_point_is_covered():
    # the streaming sink's point is failed by tests/spark/test_streaming_replay.py
    assert {p.name for p in POINTS} == set(fp.POINTS) - {fp.AFTER_STREAM_BATCH_COMMITTED}


@pytest.mark.parametrize(("point", "mode", "table_type"), CASES)
def test_a_fault_leaves_the_table_before_or_after_and_it_recovers(tmp_path, point: Point, mode: str,
                                                                  table_type: str):
    table = Table(str(tmp_path / "t"), table_type)
    prepared = point.prepare(table)
    files_before = data_files(table.storage())

    outcome = run_writer(prepared.spec, point.name, mode)

    # at after_completed_create an exception is a lost answer: the writer finds its commit and succeeds
    lost_answer = mode == "fail" and point.name == fp.AFTER_COMPLETED_CREATE
    expected = prepared.after if point.outcome == "after" else prepared.before
    assert_left(table, outcome, mode, expected, point.holds_lock, succeeded=lost_answer,
                metadata_ready=point.metadata_ready)
    recover(table, prepared.again)
    if point.name == fp.MID_CLEAN:
        assert files_before - data_files(table.storage()), "the clean removed nothing"
    if point.name == fp.MID_COMPACTION:
        assert any(timeline(table.path).is_compaction(i) for i in timeline(table.path).completed())
    if prepared.spec["op"] == "cluster":
        assert any(is_clustering_commit(timeline(table.path), i) for i in timeline(table.path).completed())
    if point.name == fp.MID_ARCHIVAL:
        assert timeline(table.path).archived, "nothing was archived"
    if prepared.spec["op"] in ("savepoint", "restore"):
        assert [s.timestamp for s in timeline(table.path).savepoints] == [prepared.spec["instant"]]
    if prepared.spec["op"] == "restore":
        assert [i.action for i in timeline(table.path).instants if i.is_completed][-2:] == ["restore", "commit"
                                                                                            if table.table_type == COW
                                                                                            else "deltacommit"]
