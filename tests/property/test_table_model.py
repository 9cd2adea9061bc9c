"""Model-based tests: random sequences of writes and table services on small COW and MOR tables, checked
after every step against an in-memory model of what the table must hold.

Each sequence mixes upserts (duplicate keys within a batch, nulls in the payload, keys moving partitions
under GLOBAL_BLOOM and GLOBAL_SIMPLE), inserts of new keys, deletes, insert_overwrite of partitions, compaction,
clustering (sorted linear, z-order or hilbert), cleaning, rollback of the latest write, archival, and savepoints: one
made of the latest write, the latest one deleted, or the table restored to it (the model then holds the rows of the
savepointed write again). After each step the snapshot, an incremental pull of the last write and a time travel to
an earlier write and to every savepoint must equal the model's, and the metadata table (on, compacting every two
deltacommits, so its compaction, clean and archival run too) must list exactly the committed files and, in the
sequences keeping its index partitions, hold each base file's footer statistics and bloom filter and index exactly
the table's keys; at the end hudi-rs must read the same snapshot. Local engine, no JVM. ``HOODIE_PROPERTY_EXAMPLES``
sets the number of sequences (200 by default: CI; raise it for a longer run)."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field

import pyarrow as pa
import pytest
from hudi import HudiTableBuilder
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.errors import MetadataTableError, ReadWindowError, SavepointError
from hoodie_datasource.read.table_reader import read_table
from tests.metadata_checks import (
    assert_bloom_filters_true,
    assert_column_stats_true,
    assert_metadata_table_true,
    assert_record_index_true,
)

pytestmark = pytest.mark.property

EXAMPLES = int(os.environ.get("HOODIE_PROPERTY_EXAMPLES", "200"))
KEYS = [f"k{i}" for i in range(12)]
PARTITIONS = ["a", "b", "c"]
RETAINED = 2  # the cleaner keeps the slices of the last 2 writes: time travel further back is refused
SERVICES = {"hoodie.cleaner.commits.retained": str(RETAINED), "hoodie.keep.min.commits": "3",
            "hoodie.keep.max.commits": "4", "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false",
            "hoodie.metadata.compact.max.delta.commits": "2"}

# the metadata table's index partitions, all kept or none in a sequence
INDEX_PARTITIONS = ("hoodie.metadata.record.index.enable", "hoodie.metadata.index.column.stats.enable",
                    "hoodie.metadata.index.bloom.filter.enable")

Row = tuple[str, str, "int | None", int]  # id, p, v, ts
Key = tuple[str, ...]  # (id, p) under a partition-local index, (id,) under a global one


@dataclass
class Model:
    """What the table must hold: the live rows by key, each with the commit that wrote it, and the
    snapshot after every completed write (for time travel and incremental pulls)."""

    global_index: bool
    rows: dict[Key, tuple[Row, str]] = field(default_factory=dict)
    history: list[tuple[str, dict[Key, tuple[Row, str]]]] = field(default_factory=list)
    next_ts: int = 1
    fresh: int = 0  # ids never written, for inserts
    savepoints: list[str] = field(default_factory=list)
    # the first write of ``history`` time travel reaches: a restore goes back past cleans that ran after it
    reachable_from: int = 0
    # every completed commit the cleaner counts (writes, compactions, clusterings), and the earliest one the
    # last clean retained: a clustering or compaction moves the cleaner's window as a write does
    commits: list[str] = field(default_factory=list)
    retained_from: str = ""

    def key(self, row: Row) -> Key:
        return (row[0],) if self.global_index else (row[0], row[1])

    def commit(self, instant: str) -> None:
        self.history.append((instant, dict(self.rows)))
        self.commits.append(instant)

    def readable(self) -> list[tuple[str, dict[Key, tuple[Row, str]]]]:
        """The earlier writes an as-of read must serve exactly: the last ``RETAINED`` writes before the latest
        one that the last clean kept and that a restore did not go back past."""
        window = self.history[max(len(self.history) - RETAINED, self.reachable_from):-1]
        return [(instant, rows) for instant, rows in window if instant >= self.retained_from]

    def snapshot(self, rows: dict[Key, tuple[Row, str]] | None = None) -> list[Row]:
        return _sorted(r for r, _ in (self.rows if rows is None else rows).values())


def _sorted(rows) -> list[Row]:
    """Rows in a stable order (a null payload sorts first)."""
    return sorted(rows, key=lambda r: (r[0], r[1], r[2] is not None, r[2] or 0, r[3]))


def _table(rows: list[Row]) -> pa.Table:
    return pa.table({"id": pa.array([r[0] for r in rows], pa.string()), "p": pa.array([r[1] for r in rows], pa.string()),
                     "v": pa.array([r[2] for r in rows], pa.int64()), "ts": pa.array([r[3] for r in rows], pa.int64())})


def _read(path: str, **cfg: str) -> list[Row]:
    out = read_table(path, ReadConfig(**cfg))
    return _sorted(zip(out.column("id").to_pylist(), out.column("p").to_pylist(), out.column("v").to_pylist(),
                       out.column("ts").to_pylist()))


payload = st.one_of(st.none(), st.integers(-5, 5))
upsert_batch = st.lists(st.tuples(st.sampled_from(KEYS), st.sampled_from(PARTITIONS), payload), min_size=1, max_size=8)
step = st.one_of(
    st.tuples(st.just("upsert"), upsert_batch),
    st.tuples(st.just("insert"), st.lists(st.tuples(st.sampled_from(PARTITIONS), payload), min_size=1, max_size=4)),
    st.tuples(st.just("delete"), st.lists(st.tuples(st.sampled_from(KEYS), st.sampled_from(PARTITIONS)),
                                          min_size=1, max_size=4)),
    st.tuples(st.just("insert_overwrite"), upsert_batch),
    st.tuples(st.just("compact"), st.none()),
    st.tuples(st.just("cluster"), st.sampled_from(["linear", "z-order", "hilbert"])),
    st.tuples(st.just("clean"), st.none()),
    st.tuples(st.just("rollback"), st.none()),
    st.tuples(st.just("archive"), st.none()),
    st.tuples(st.just("savepoint"), st.none()),
    st.tuples(st.just("delete_savepoint"), st.none()),
    st.tuples(st.just("restore"), st.none()),
)


def _options(table_type: str, index_type: str, indexes: bool) -> dict[str, str]:
    return {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.index.type": index_type, **SERVICES,
            **{key: str(indexes).lower() for key in INDEX_PARTITIONS}}


def _apply(path: str, model: Model, options: dict[str, str], name: str, arg, table_type: str) -> bool:
    """Run one step on the table and the model; False when the step does not apply (skipped)."""
    ts0 = model.next_ts
    if name in ("upsert", "insert_overwrite"):
        rows = [(key, part, v, ts0 + i) for i, (key, part, v) in enumerate(arg)]
        model.next_ts += len(rows)
        if name == "insert_overwrite":
            if model.global_index:
                return False  # an overwrite does not look keys up in other partitions
            rows = list({(r[0], r[1]): r for r in rows}.values())  # no duplicate keys: Hudi keeps them all
        instant = write_local(path, _table(rows), {**options, "hoodie.datasource.write.operation": name})
        if name == "insert_overwrite":
            for key in [k for k, (r, _) in model.rows.items() if r[1] in {row[1] for row in rows}]:
                del model.rows[key]
        latest: dict[Key, Row] = {}
        for row in rows:  # within a batch the highest ordering value wins
            if model.key(row) not in latest or row[3] > latest[model.key(row)][3]:
                latest[model.key(row)] = row
        for key, row in latest.items():
            model.rows[key] = (row, instant)
        model.commit(instant)
    elif name == "insert":
        rows = []
        for i, (part, v) in enumerate(arg):
            rows.append((f"new{model.fresh}", part, v, ts0 + i))
            model.fresh += 1
        model.next_ts += len(rows)
        instant = write_local(path, _table(rows), {**options, "hoodie.datasource.write.operation": "insert"})
        for row in rows:
            model.rows[model.key(row)] = (row, instant)
        model.commit(instant)
    elif name == "delete":
        rows = [(key, part, None, ts0 + i) for i, (key, part) in enumerate(arg)]
        model.next_ts += len(rows)
        if not model.history:
            return False
        instant = write_local(path, _table(rows), {**options, "hoodie.datasource.write.operation": "delete"})
        for row in rows:
            model.rows.pop(model.key(row), None)
        model.commit(instant)
    elif name == "compact":
        if table_type != "MERGE_ON_READ" or not model.history:
            return False
        model.commits.extend(HoodieTable(path).compact())
    elif name == "cluster":
        if not model.history:
            return False
        model.commits.extend(HoodieTable(path).cluster(**{"hoodie.clustering.plan.strategy.sort.columns": "v,id",
                                                          "hoodie.layout.optimize.strategy": arg}))
    elif name == "clean":
        if not model.history:
            return False
        HoodieTable(path).clean(**SERVICES)
        # CleanPlanner.getEarliestCommitToRetain: the RETAINED-th latest completed commit of any kind
        model.retained_from = model.commits[max(0, len(model.commits) - RETAINED)]
    elif name == "archive":
        if not model.history:
            return False
        HoodieTable(path).archive(**SERVICES)
    elif name == "rollback":
        if not model.history:
            return False
        table = HoodieTable(path)
        latest = table.timeline().last_completed_write()
        if latest is None or not model.history or latest.timestamp != model.history[-1][0]:
            return False  # the latest completed write is a compaction, or there is none
        if latest.timestamp in model.savepoints:
            return False  # refused: tests/unit/test_savepoints.py
        try:
            table.rollback(latest.timestamp)
        except MetadataTableError:  # the record index's compaction holds it: refused before anything changed
            assert "hoodie.metadata.record.index.enable" in options and options[
                "hoodie.metadata.record.index.enable"] == "true"
            return False
        model.commits.remove(model.history.pop()[0])
        model.rows = dict(model.history[-1][1]) if model.history else {}
        model.reachable_from = min(model.reachable_from, max(len(model.history) - 1, 0))
    elif name == "savepoint":  # of the latest write (``arg``: another one, counted from the latest)
        target = model.history[arg or -1][0] if model.history else None
        if target is None or target in model.savepoints:
            return False
        try:
            HoodieTable(path).create_savepoint(target)
        except SavepointError as exc:  # the cleaner is past the write
            assert "the cleaner retains commits from" in str(exc)
            return False
        model.savepoints.append(target)
    elif name == "delete_savepoint":
        if not model.savepoints:
            return False
        HoodieTable(path).delete_savepoint(model.savepoints.pop())
    elif name == "restore":  # to the latest savepoint; without one, to the write before the latest, savepointed now
        if not model.savepoints and not _apply(path, model, options, "savepoint", -min(len(model.history), 2),
                                               table_type):
            return False
        HoodieTable(path).rollback_to_savepoint(model.savepoints[-1], **SERVICES)
        kept = [instant for instant, _ in model.history].index(model.savepoints[-1])
        model.history = model.history[:kept + 1]
        model.commits = [instant for instant in model.commits if instant <= model.savepoints[-1]]
        model.rows = dict(model.history[-1][1])
        model.reachable_from = kept
    return True


def _check(path: str, model: Model, indexes: bool) -> None:
    assert _read(path) == model.snapshot(), "snapshot"
    assert_metadata_table_true(path)
    if indexes:
        assert_column_stats_true(path, ["_hoodie_record_key", "id", "p", "v", "ts"])
        assert_bloom_filters_true(path)
    if indexes and model.global_index:  # a partition-local index may store a key in several partitions
        assert_record_index_true(path)
    if not model.history:
        return
    instant, rows = model.history[-1]
    begin = model.history[-2][0] if len(model.history) > 1 else "0"
    written = _sorted(r for r, commit in rows.values() if commit == instant)
    try:
        pulled = _read(path, query_type="incremental", begin_instant=begin, end_instant=instant)
    except ReadWindowError:
        pulled = None  # the previous write was cleaned or archived out of the read window
    if pulled is not None:
        assert pulled == written, f"incremental ({begin}, {instant}]"
    for past, past_rows in model.readable():
        assert _read(path, as_of_instant=past) == model.snapshot(past_rows), f"as of {past}"
    for past in model.savepoints:  # however far the cleaner ran
        rows_then = next(rows for instant, rows in model.history if instant == past)
        assert _read(path, as_of_instant=past) == model.snapshot(rows_then), f"as of the savepoint {past}"


def _hudi_rs(path: str) -> list[Row]:
    batches = HudiTableBuilder.from_base_uri(path).build().read()  # none when no file slice holds a row
    if not batches:
        return []
    data = pa.Table.from_batches(batches)
    return _sorted(zip(data.column("id").to_pylist(), data.column("p").to_pylist(), data.column("v").to_pylist(),
                       data.column("ts").to_pylist()))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table_type=st.sampled_from(["COPY_ON_WRITE", "MERGE_ON_READ"]),
       index_type=st.sampled_from(["BLOOM", "GLOBAL_BLOOM", "SIMPLE", "GLOBAL_SIMPLE", "RECORD_INDEX"]),
       steps=st.lists(step, min_size=2, max_size=8), indexes=st.booleans())
def test_random_sequences_match_the_model(table_type: str, index_type: str, steps, indexes: bool) -> None:
    # RECORD_INDEX updates a key written with another partition where it is stored (its row's fields as written):
    # a snapshot shows what the model holds; without a ready record index it tags as GLOBAL_SIMPLE (moves)
    model = Model(global_index=index_type.startswith("GLOBAL_") or index_type == "RECORD_INDEX")
    options = _options(table_type, index_type, indexes)
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "t")
        for name, arg in steps:
            if _apply(path, model, options, name, arg, table_type):
                event(name)  # pytest --hypothesis-show-statistics counts the steps run
                note(f"ran {name} {arg!r}")  # a failure's report lists the steps that ran
                _check(path, model, indexes)
        if model.history:
            assert _hudi_rs(path) == model.snapshot(), "hudi-rs"
