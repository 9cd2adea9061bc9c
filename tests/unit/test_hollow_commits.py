"""A batch incremental read whose range holds a write still in flight before a completed one (a hollow
commit) fails naming it, as Hudi's default ``FAIL`` does, or with ``BLOCK`` reads only up to it: a pipeline
keeping the end of its pull as its next start would otherwise skip that write's records for good."""

from __future__ import annotations

import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.client.write_client import start_write
from hoodie_datasource.config.read_config import resolve_read_config
from hoodie_datasource.errors import HoodieConfigError, ReadWindowError
from hoodie_datasource.storage.registry import open_storage
from tests.unit.small_tables import batch, read_pairs

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}


def test_a_hollow_commit_in_an_incremental_range_fails_the_read_or_blocks_it(tmp_path):
    path = str(tmp_path / "t")
    first = write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    slow = start_write(open_storage(path), OPTS, batch([("late", 1, "x", 0)]).schema)  # alive: it beats
    try:
        write_local(path, batch([("b", 1, "x", 2)]), OPTS)
        with pytest.raises(ReadWindowError, match=f"Write {slow.instant_time} is still in flight"):
            read_pairs(path, query_type="incremental", begin_instant="000")
        assert read_pairs(path, query_type="incremental", begin_instant="000", hollow_commits="BLOCK") == [("a", 1)]
        # a range ending before the write in flight, or starting after it, is exact
        assert read_pairs(path, query_type="incremental", begin_instant="000", end_instant=first) == [("a", 1)]
        assert read_pairs(path, query_type="incremental", begin_instant=slow.instant_time) == [("b", 2)]
        assert read_pairs(path) == [("a", 1), ("b", 2)]  # snapshots are not affected
    finally:
        slow.abort()
    assert read_pairs(path, query_type="incremental", begin_instant="000") == [("a", 1), ("b", 2)]



def test_the_policy_option_is_checked():
    assert resolve_read_config({"hoodie.datasource.read.handle.hollow.commit": "block"}).hollow_commits == "BLOCK"
    with pytest.raises(HoodieConfigError, match="not supported"):
        resolve_read_config({"hoodie.datasource.read.handle.hollow.commit": "USE_TRANSITION_TIME"})
