"""The table handle (``table.table.Table``): loaded with one read of ``hoodie.properties`` and one listing
of the timeline, refreshed with one listing, changed by what a writer knows it did (``with_instant``)
without listing; and what a write costs in listings of the timeline on local disk: a default upsert lists
it twice, when it loads the table and under the lock before its commit point (three times before the
handle), and the table services that run after the commit point go on from the table the commit left."""

from __future__ import annotations

import pickle

import pyarrow as pa

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.instant import COMPACTION, Instant, State
from tests.counting_storage import CountingStorage
from tests.unit.small_tables import batch, read_pairs

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}
MOR = {**OPTS, "storage.type": "MERGE_ON_READ"}


class ReadCounting(CountingStorage):
    def __init__(self, uri: str) -> None:
        super().__init__(uri)
        self.read_paths: list[str] = []

    def read(self, rel: str) -> bytes:
        self.read_paths.append(rel)
        return super().read(rel)


def test_a_table_is_loaded_with_one_read_of_its_properties_and_one_listing(tmp_path):
    path = str(tmp_path / "t")
    first = write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    storage = ReadCounting(path)
    table = Table.load(storage)
    assert storage.read_paths == [".hoodie/hoodie.properties"] and storage.timeline_listings() == 1
    assert [i.timestamp for i in table.timeline.completed()] == [first]
    second = write_local(path, batch([("b", 2, "y", 2)]), OPTS)
    storage.read_paths.clear()
    assert table.timeline.last_completed_write().timestamp == first  # a handle shows the table as it was listed
    refreshed = table.refresh()
    assert storage.read_paths == [] and storage.timeline_listings() == 1
    assert [i.timestamp for i in refreshed.timeline.completed()] == [first, second]


def test_a_writer_puts_its_own_instants_on_the_table_without_listing_it(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), MOR)
    write_local(path, batch([("a", 2, "x", 2)]), MOR)
    table = Table.load(path)
    requested = Instant("29990101000000000", COMPACTION, State.REQUESTED)
    pending = table.with_instant(requested)
    assert pending.timeline.instants[-1] == requested and pending.timeline.pending() == [requested]
    done = pending.with_instant(requested.with_state(State.COMPLETED))
    # a completed compaction stands as the commit it completes as, as a listing shows it
    assert done.timeline.instants[-1] == Instant("29990101000000000", "commit", State.COMPLETED)
    assert done.timeline.is_compaction(done.timeline.instants[-1]) and done.timeline.pending() == []
    assert len(table.timeline.instants) == 2  # the table it was made from is unchanged


def test_a_table_travels_pickled_with_its_decoded_instant_files_but_not_its_listing(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "y", 2)]), OPTS)
    storage = ReadCounting(path)
    table = Table.load(storage)
    assert len(table.fs_view.file_groups()) == 2 and "id" in table.schema.names
    travelled = pickle.loads(pickle.dumps(table))
    assert {"fs_view", "schema", "data_schema"}.isdisjoint(vars(travelled))
    storage.read_paths.clear()
    latest = travelled.timeline.last_completed_write()
    assert travelled.timeline.read_metadata(latest) == table.timeline.read_metadata(latest)
    assert not [p for p in storage.read_paths if p.startswith(".hoodie/")]  # decoded once, before it travelled


def test_a_table_as_of_an_instant_has_the_schema_it_had_then(tmp_path):
    path = str(tmp_path / "t")
    first = write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    wider = batch([("b", 2, "x", 2)]).append_column("note", pa.array(["new"]))
    write_local(path, wider, OPTS)
    table = Table.load(path)
    assert "note" in table.data_schema.names and "note" not in table.as_of(first).data_schema.names
    assert table.as_of(None) is table


def test_a_default_upsert_lists_the_timeline_twice(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "y", 2)]), OPTS)
    write_local(path, batch([("a", 2, "x", 3)]), OPTS)
    storage = ReadCounting(path)
    write_local(storage, batch([("b", 3, "y", 4), ("c", 3, "x", 5)]), OPTS)  # cleaning and archival on, as by default
    assert storage.timeline_listings() == 2  # the table's load; under the lock before the commit point
    assert storage.read_paths.count(".hoodie/hoodie.properties") == 1
    assert read_pairs(path) == [("a", 3), ("b", 4), ("c", 5)]


def test_an_upsert_compacting_inline_lists_the_timeline_five_times(tmp_path):
    """The two of the write and, on a merge-on-read table, the folder once more after its instant exists, to find a
    compaction another process scheduled meanwhile; then compaction's: once after its plan is written, to find
    writers that started meanwhile (``schedule_compaction``), and once before running it (``execute_compaction``);
    cleaning and archival go on from the table the compaction left (eight listings before the handle)."""
    path = str(tmp_path / "t")
    options = {**MOR, "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"}
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "y", 2)]), options)
    storage = ReadCounting(path)
    write_local(storage, batch([("a", 2, "x", 3)]), options)
    assert storage.timeline_listings() == 5
    table = Table.load(path)
    assert [table.timeline.is_compaction(i) for i in table.timeline.completed()] == [False, False, True]
    assert read_pairs(path, query_type="read_optimized") == [("a", 3), ("b", 2)]


def test_hoodie_table_is_the_handle_for_users(tmp_path):
    """``HoodieTable`` loads the table once: what it shows stays as listed until ``refresh()``; its own
    writes and services leave it showing what they did, without listing the timeline for it."""
    path = str(tmp_path / "t")
    table = HoodieTable(path)
    first = table.write(batch([("a", 1, "x", 1), ("b", 1, "y", 2)]), **OPTS)  # the table's first write creates it
    assert table.latest_commit() == first
    scanned = table.scan()
    assert sorted(zip(scanned.column("id").to_pylist(), scanned.column("v").to_pylist())) == [("a", 1), ("b", 2)]
    other = write_local(path, batch([("a", 2, "x", 3)]), OPTS)  # another writer
    assert table.latest_commit() == first and table.completed_commits() == [first]
    assert table.refresh().latest_commit() == other
    pulled = table.scan(**{"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": first})
    assert pulled.column("id").to_pylist() == ["a"]
    table.write(batch([("a", 3, "x", 4)]), **{**OPTS, "hoodie.clean.automatic": "false"})
    cleaned = table.clean(**{"hoodie.cleaner.commits.retained": "1"})
    assert cleaned is not None and table.timeline().find(cleaned).is_completed  # no refresh needed
    assert read_pairs(path) == [("a", 4), ("b", 2)]
