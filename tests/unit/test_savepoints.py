"""Savepoints (``HoodieTable.create_savepoint``, ``show_savepoints``, ``delete_savepoint``) on a table we clean
and archive (no JVM): the savepoint is filed under the time of the commit it keeps, as Hudi's
``SavepointActionExecutor`` files it (Avro ``HoodieSavepointMetadata`` listing the base and log files of the
latest file slices as of the commit), and its files must outlive our cleaner under every policy and its
commit our archiver, or a restore has nothing to return to. tests/hudi_oracle/test_savepoint_oracle.py has
Java Hudi read and restore ours; tests/hudi_oracle/test_we_continue_hudis.py has it make one we keep."""

from __future__ import annotations

import io
import os
from datetime import timedelta

import fastavro
import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.errors import SavepointError, TimelineError
from hoodie_datasource.services import cleaner
from hoodie_datasource.services.cleaner import SAVEPOINTED_TIMESTAMPS, savepointed_files
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.instant_time import utc_now
from tests.unit.small_tables import batch
from tests.unit.small_tables import read_pairs as rows

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
        "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false",
        # the metadata table compacts at each write: archival, which its latest compaction bounds, goes as far
        "hoodie.metadata.compact.max.delta.commits": "1"}
RETAIN_ONE = {"hoodie.cleaner.commits.retained": "1"}
BY_HOURS = {"hoodie.cleaner.policy": "KEEP_LATEST_BY_HOURS", "hoodie.cleaner.hours.retained": "1"}

def savepoint(path: str, instant_time: str) -> set[str]:
    """Savepoint the commit ``instant_time``; the files it holds."""
    assert HoodieTable(path).create_savepoint(instant_time) == instant_time
    return set(savepointed_files(HoodieTable(path).timeline()))


def present(path: str) -> set[str]:
    return {name for p in ("x", "y") if os.path.isdir(os.path.join(path, p)) for name in os.listdir(os.path.join(path, p))}


def test_a_savepoint_is_kept_apart_from_the_commit_it_shares_its_time_with(tmp_path):
    path = str(tmp_path / "t")
    first = write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    replace = write_local(path, batch([("b", 2, "x", 2)]), {**OPTS, "operation": "insert_overwrite"})
    savepoint(path, replace)
    timeline = HoodieTable(path).timeline()
    assert [(i.timestamp, i.action) for i in timeline.instants] == [(first, "commit"), (replace, "replacecommit")]
    assert [s.timestamp for s in timeline.savepoints] == [replace]
    assert rows(path) == [("b", 2)]


@pytest.mark.parametrize("policy", [RETAIN_ONE, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                                 "hoodie.cleaner.fileversions.retained": "1"}, BY_HOURS],
                         ids=["keep_latest_commits", "keep_latest_file_versions", "keep_latest_by_hours"])
def test_the_cleaner_keeps_the_files_of_a_savepoint(tmp_path, monkeypatch, policy):
    """Hudi's CleanPlanner skips a slice whose base or log file a savepoint holds; the clean records the
    savepoints it kept (``savepointed_timestamps``) for Hudi's incremental cleaner. By hours, the clean runs two
    hours on: no commit is within the hour retained, so only the latest slices are."""
    monkeypatch.setattr(cleaner, "utc_now", lambda: utc_now() + timedelta(hours=2))
    path = str(tmp_path / "t")
    first = write_local(path, batch([("a", 1, "x", 1), ("b", 1, "y", 1)]), OPTS)
    kept = write_local(path, batch([("a", 2, "x", 2), ("b", 2, "y", 2)]), OPTS)
    held = savepoint(path, kept)
    for ts in (3, 4):
        write_local(path, batch([("a", ts, "x", ts), ("b", ts, "y", ts)]), OPTS)
    clean = HoodieTable(path).clean(**policy)
    assert not [name for name in present(path) if first in name], "the slices of the first commit are cleaned"
    assert len(held) == 2 and held <= present(path)
    assert rows(path, as_of_instant=kept) == [("a", 2), ("b", 2)]
    assert HoodieTable(path).commit_metadata(clean)["extraMetadata"] == {SAVEPOINTED_TIMESTAMPS: kept}


def test_the_cleaner_keeps_a_savepointed_file_group_that_was_replaced(tmp_path):
    path = str(tmp_path / "t")
    kept = write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    held = savepoint(path, kept)
    for ts in (2, 3, 4):
        write_local(path, batch([("a", ts, "x", ts)]), {**OPTS, "operation": "insert_overwrite"})
    assert HoodieTable(path).clean(**RETAIN_ONE) is not None, "the group the second commit wrote is cleaned"
    assert held <= present(path)
    assert rows(path) == [("a", 4)] and rows(path, as_of_instant=kept) == [("a", 1)]


def test_the_cleaner_keeps_a_savepointed_slice_with_its_log_files(tmp_path):
    path = str(tmp_path / "t")
    mor = {**OPTS, "storage.type": "MERGE_ON_READ"}
    write_local(path, batch([("a", 1, "x", 1)]), mor)
    kept = write_local(path, batch([("a", 2, "x", 2)]), mor)
    held = savepoint(path, kept)
    assert any(".log." in name for name in held)
    HoodieTable(path).compact(**{"hoodie.compact.inline.max.delta.commits": "1"})
    write_local(path, batch([("a", 3, "x", 3)]), {**mor, "operation": "insert_overwrite"})
    write_local(path, batch([("a", 4, "x", 4)]), mor)
    assert HoodieTable(path).clean(**RETAIN_ONE) is not None
    assert held <= present(path)
    assert rows(path, as_of_instant=kept) == [("a", 2)] and rows(path) == [("a", 4)]


def test_archival_stops_at_the_first_savepoint(tmp_path):
    path = str(tmp_path / "t")
    instants = [write_local(path, batch([("a", i, "x", i)]), OPTS) for i in range(2)]
    savepoint(path, instants[1])
    instants += [write_local(path, batch([("a", i, "x", i)]), OPTS) for i in range(2, 6)]
    archived = HoodieTable(path).archive(**{"hoodie.keep.min.commits": "1", "hoodie.keep.max.commits": "2"})
    assert archived == instants[:1]
    assert [s.timestamp for s in HoodieTable(path).timeline().savepoints] == [instants[1]]


def test_a_savepointed_commit_is_not_rolled_back(tmp_path):
    """As Hudi's BaseRollbackActionExecutor.validateSavepointRollbacks refuses it."""
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    kept = write_local(path, batch([("a", 2, "x", 2)]), OPTS)
    held = savepoint(path, kept)
    with pytest.raises(TimelineError, match="savepointed"):
        HoodieTable(path).rollback(kept)
    assert held <= present(path) and rows(path) == [("a", 2)]


def test_a_savepoint_is_hudis_and_shows_who_made_it(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "y", 1)]), {**OPTS, "storage.type": "MERGE_ON_READ"})
    kept = write_local(path, batch([("a", 2, "x", 2)]), {**OPTS, "storage.type": "MERGE_ON_READ"})
    table = HoodieTable(path)
    assert table.create_savepoint(user="ops", comments="before the backfill") == kept  # the latest by default
    names = sorted(os.listdir(os.path.join(path, ".hoodie")))
    assert f"{kept}.savepoint.inflight" in names and f"{kept}.savepoint" in names
    with open(os.path.join(path, ".hoodie", f"{kept}.savepoint"), "rb") as f:
        [record] = fastavro.reader(io.BytesIO(f.read()))
    slices = Table.load(path).fs_view.latest_file_slices(as_of=kept)
    assert record["partitionMetadata"] == {
        p: {"partitionPath": p, "savepointDataFile": [n for s in slices if s.partition_path == p for n in s.file_names]}
        for p in ("x", "y")}
    assert any(".log." in n for n in record["partitionMetadata"]["x"]["savepointDataFile"])
    assert (record["savepointedBy"], record["comments"]) == ("ops", "before the backfill")
    [info] = table.show_savepoints()
    assert (info.instant_time, info.user, info.comments, info.saved_at, info.partitions) == (
        kept, "ops", "before the backfill", record["savepointedAt"], ("x", "y"))


def test_a_savepoint_is_refused_where_hudi_refuses_it(tmp_path):
    path = str(tmp_path / "t")
    first, second, third = (write_local(path, batch([("a", i, "x", i)]), OPTS) for i in range(3))
    table = HoodieTable(path)
    with pytest.raises(SavepointError, match="no such commit on the active timeline"):
        table.create_savepoint("20200101000000000")
    table.create_savepoint(third)
    with pytest.raises(SavepointError, match="savepointed already"):
        table.create_savepoint(third)
    clean_time = table.clean(**RETAIN_ONE)
    assert clean_time is not None
    for older in (first, second):
        with pytest.raises(SavepointError, match=f"retains commits from {third}"):
            table.create_savepoint(older)
    with pytest.raises(SavepointError, match="not a completed commit"):
        table.create_savepoint(clean_time)
    assert [s.instant_time for s in table.show_savepoints()] == [third]


def test_a_deleted_savepoint_lets_the_cleaner_remove_its_files(tmp_path):
    path = str(tmp_path / "t")
    kept = write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    held = savepoint(path, kept)
    write_local(path, batch([("a", 2, "x", 2)]), OPTS)
    write_local(path, batch([("a", 3, "x", 3)]), OPTS)
    HoodieTable(path).clean(**RETAIN_ONE)
    assert held <= present(path)
    with pytest.raises(SavepointError, match="No savepoint 20200101000000000"):
        HoodieTable(path).delete_savepoint("20200101000000000")
    HoodieTable(path).delete_savepoint(kept)
    assert not [n for n in os.listdir(os.path.join(path, ".hoodie")) if "savepoint" in n]
    assert HoodieTable(path).show_savepoints() == []
    HoodieTable(path).clean(**RETAIN_ONE)
    assert not held & present(path)
    assert rows(path) == [("a", 3)]


def test_archival_beyond_savepoints_keeps_the_savepointed_commits(tmp_path):
    """``hoodie.archive.beyond.savepoint``: commits before and after the savepoint are archived, the savepointed
    one stays on the active timeline, time travel to it still reads its rows, and a restore is refused."""
    path = str(tmp_path / "t")
    instants = [write_local(path, batch([("a", i, "x", i)]), OPTS) for i in range(2)]
    savepoint(path, instants[1])
    instants += [write_local(path, batch([("a", i, "x", i)]), OPTS) for i in range(2, 7)]
    beyond = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.archive.beyond.savepoint": "true"}
    archived = HoodieTable(path).archive(**beyond)
    assert archived == [instants[0], *instants[2:5]]
    timeline = HoodieTable(path).timeline()
    assert instants[1] not in timeline.archived and set(archived) <= timeline.archived
    assert rows(path, as_of_instant=instants[1]) == [("a", 1)] and rows(path) == [("a", 6)]
    with pytest.raises(SavepointError, match="hoodie.archive.beyond.savepoint=true"):
        HoodieTable(path).rollback_to_savepoint(instants[1], **{"hoodie.archive.beyond.savepoint": "true"})
    with pytest.raises(SavepointError, match="commits after it are archived"):
        HoodieTable(path).rollback_to_savepoint(instants[1])
