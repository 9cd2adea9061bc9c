"""Savepoints Apache Hudi made (``CALL create_savepoint``) on a table we clean and archive (no JVM): the
savepoint is filed under the time of the commit it keeps, and its files must outlive our cleaner and its
instants our archiver, or Hudi's ``rollback_to_savepoint`` has nothing to restore. The savepoint here is
written as Hudi's ``SavepointActionExecutor`` writes it (its Avro ``HoodieSavepointMetadata`` lists the
base and log files of the latest file slices as of the commit); tests/hudi_oracle/test_we_continue_hudis.py
has Java Hudi make one and restore to it."""

from __future__ import annotations

import io
import os

import fastavro
import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.errors import TimelineError
from hoodie_datasource.services.cleaner import SAVEPOINTED_TIMESTAMPS
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.table import Table
from tests.unit.small_tables import batch
from tests.unit.small_tables import read_pairs as rows

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
        "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false",
        # the metadata table compacts at each write: archival, which its latest compaction bounds, goes as far
        "hoodie.metadata.compact.max.delta.commits": "1"}
RETAIN_ONE = {"hoodie.cleaner.commits.retained": "1"}

# Apache Hudi's HoodieSavepointMetadata (hudi-common's HoodieSavepointMetadata.avsc)
SAVEPOINT_METADATA = {
    "type": "record", "name": "HoodieSavepointMetadata", "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "savepointedBy", "type": "string"},
        {"name": "savepointedAt", "type": "long"},
        {"name": "comments", "type": "string"},
        {"name": "partitionMetadata", "type": {"type": "map", "values": {
            "type": "record", "name": "HoodieSavepointPartitionMetadata",
            "fields": [{"name": "partitionPath", "type": "string"},
                       {"name": "savepointDataFile", "type": {"type": "array", "items": "string"}}]}}},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}


def savepoint(path: str, instant_time: str) -> set[str]:
    """Savepoint the commit ``instant_time`` as Hudi does (``<t>.savepoint.inflight``, then ``<t>.savepoint``
    beside ``<t>.commit``); the files it holds."""
    files: dict[str, list[str]] = {}
    for piece in Table.load(path).fs_view.latest_file_slices(as_of=instant_time):
        files.setdefault(piece.partition_path, []).extend(
            [piece.base_file.name, *(log.name for log in piece.log_files)])
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(SAVEPOINT_METADATA), [{
        "savepointedBy": "test", "savepointedAt": 0, "comments": "", "version": 1,
        "partitionMetadata": {p: {"partitionPath": p, "savepointDataFile": names} for p, names in files.items()}}])
    storage = open_storage(path, {})
    storage.write(f".hoodie/{instant_time}.savepoint.inflight", b"")
    storage.write(f".hoodie/{instant_time}.savepoint", out.getvalue())
    return {name for names in files.values() for name in names}


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
                                                 "hoodie.cleaner.fileversions.retained": "1"}],
                         ids=["keep_latest_commits", "keep_latest_file_versions"])
def test_the_cleaner_keeps_the_files_of_a_savepoint(tmp_path, policy):
    """Hudi's CleanPlanner skips a slice whose base or log file a savepoint holds; the clean records the
    savepoints it kept (``savepointed_timestamps``) for Hudi's incremental cleaner."""
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
