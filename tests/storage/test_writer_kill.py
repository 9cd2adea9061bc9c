"""A writer killed with SIGKILL at its commit point leaves the table as it was, and the next write
cleans up after it, on local disk and on S3 alike.

The writer runs in its own process and stops just before creating its completed instant: its data
files, markers, partition metadata and inflight instant exist. Killed there, it never runs its own
rollback. Readers must not see its files (no completed instant names them); the next writer finds the
pending instant and rolls it back (``rollback_failed_writes``: a pending write belongs to a dead writer
in the single-writer model), deleting its data files and markers, before writing its own rows.
"""

from __future__ import annotations

import multiprocessing
import posixpath

import pyarrow as pa

from hoodie_datasource.table.table_config import load_table_config
from hoodie_datasource.timeline.instant import ROLLBACK, State
from hoodie_datasource.timeline.timeline import Timeline
from hoodie_datasource.write.local_engine import write_local
from hoodie_datasource.write.markers import MARKER_SUFFIX, marker_dir
from tests.storage import commit_workers
from tests.storage.tables import Place, committed_files, data_files, pairs, rows, snapshot

COMMIT_POINT_TIMEOUT_S = 120.0


def test_writer_killed_at_its_commit_point(place: Place) -> None:
    write_local(place.uri, rows("first"), place.write_options())
    write_local(place.uri, rows("second", 4), place.write_options())
    before = snapshot(place)
    assert before == sorted(pairs(rows("first")) + pairs(rows("second", 4)))
    storage = place.storage()
    committed_before = data_files(storage)

    context = multiprocessing.get_context("spawn")
    at_commit_point = context.Event()
    # updates rows of both earlier commits and inserts one: new slices of the existing file groups
    dead = pa.table({"id": ["first-0", "second-1", "dead-0"], "ts": [2, 2, 2], "p": ["x", "y", "x"],
                     "v": ["dead"] * 3})
    writer = context.Process(target=commit_workers.write_until_commit_point,
                             args=(place.uri, place.write_options(), dead, at_commit_point))
    writer.start()
    try:
        assert at_commit_point.wait(COMMIT_POINT_TIMEOUT_S), f"the writer never reached its commit point ({writer.exitcode})"
        writer.kill()  # SIGKILL: no rollback, no finally, no atexit
        writer.join(30)
    finally:
        if writer.is_alive():
            writer.kill()
            writer.join()
    assert writer.exitcode == -9

    timeline = Timeline.load(storage, load_table_config(storage))
    (pending,) = timeline.pending()
    assert pending.state is State.INFLIGHT
    dead_files = data_files(storage) - committed_before
    assert dead_files and all(posixpath.basename(f).endswith(f"_{pending.timestamp}.parquet") for f in dead_files)
    markers = [f.path for f in storage.list_tree(marker_dir(pending.timestamp))]
    assert sorted(m.split(MARKER_SUFFIX)[0][len(marker_dir(pending.timestamp)) + 1:] for m in markers) == sorted(dead_files)
    assert snapshot(place) == before  # its files are on the store, but no completed instant names them

    after = write_local(place.uri, rows("next", 2, ts=3), place.write_options())

    assert snapshot(place) == sorted(before + pairs(rows("next", 2)))
    timeline = Timeline.load(storage, load_table_config(storage))
    assert timeline.pending() == []
    assert [i for i in timeline.instants if i.timestamp == pending.timestamp] == []  # its instant files are gone
    (rollback,) = [i for i in timeline.instants if i.action == ROLLBACK]
    assert rollback.is_completed and pending.timestamp < rollback.timestamp < after
    assert data_files(storage) == committed_files(storage)
    assert not (dead_files & data_files(storage))  # listed again: every file of the dead write is deleted
    assert storage.list_tree(".hoodie/.temp") == []  # its markers too, and the new write's
