"""A commit that would lose rows is refused: two tasks of one write each rewrote the same file group (here an
update and an insert packed into the partition's small file, as two tasks holding rows of one partition
would), so completing it would leave readers one of the two base files."""

from __future__ import annotations

import dataclasses

import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.client.write_client import start_write
from hoodie_datasource.errors import FileGroupWrittenTwiceError
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.file_names import write_token
from hoodie_datasource.write import record_keys
from hoodie_datasource.write.stage_timer import StageTimer
from tests.conftest import assert_failed_write_left_nothing, table_listing
from tests.unit.small_tables import batch, read_pairs

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}


def test_two_tasks_rewriting_one_file_group_are_not_committed(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    files = table_listing(path)
    update, insert = batch([("a", 2, "x", 5)]), batch([("b", 2, "x", 6)])
    session = start_write(open_storage(path), OPTS, update.schema)
    session.mark_inflight({})
    writer = session.record_writer()
    stats = [stat for task, rows in enumerate((update, insert))
             for stat in writer.write_records(record_keys.keyed(rows, session.config), write_token(task, 1, 0), task,
                                              StageTimer())]
    assert len({s.fileId for s in stats}) == 1 and len({s.path for s in stats}) == 2  # one group, two base files
    with pytest.raises(FileGroupWrittenTwiceError, match="Two tasks of this write wrote base files of file group"):
        session.commit(stats)
    assert_failed_write_left_nothing(path, files)
    assert read_pairs(path) == [("a", 1)]
    write_local(path, batch([("a", 2, "x", 5), ("b", 2, "x", 6)]), OPTS)  # the next write is not blocked
    assert read_pairs(path) == [("a", 5), ("b", 6)]


def test_marker_reconciliation_never_deletes_a_file_the_commit_lists(tmp_path):
    """The stats may spell a file's path otherwise than the markers' listing does (``x//f`` against ``x/f``, as a
    partition path of another writer may): the file is matched by its name, which holds its write token."""
    path = str(tmp_path / "t")
    rows = batch([("a", 1, "x", 1)])
    session = start_write(open_storage(path), OPTS, rows.schema)
    session.mark_inflight({})
    stats = session.record_writer().write_records(record_keys.keyed(rows, session.config), write_token(0, 1, 0), 0,
                                                  StageTimer())
    respelled = [dataclasses.replace(s, path=s.path.replace("/", "//", 1)) for s in stats]
    session.commit(respelled)
    assert {s.path for s in stats} <= table_listing(path)
    assert read_pairs(path) == [("a", 1)]
