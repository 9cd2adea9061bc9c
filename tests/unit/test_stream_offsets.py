"""Offsets of streaming reads (``read.stream_offsets``): where a query starts, how far a micro-batch
reaches under each limit, and that a write in flight before a completed one blocks the stream (or fails
it) instead of being skipped for good."""

from __future__ import annotations

import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.client.write_client import start_write
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.config.stream_config import StreamReadConfig, resolve_stream_read_config
from hoodie_datasource.errors import HoodieConfigError, ReadWindowError
from hoodie_datasource.read.stream_offsets import START_OF_TIMELINE, end_offset, initial_offset
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.timeline import Timeline
from tests.conftest import unzip_table
from tests.unit.small_tables import batch

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}


def timeline(path: str) -> Timeline:
    storage = open_storage(path)
    return Table.load(storage).timeline


@pytest.fixture
def commits(tmp_path) -> tuple[str, list[str]]:
    """A table of three commits writing 1, 2 and 4 rows."""
    path = str(tmp_path / "t")
    times = []
    for n, size in enumerate((1, 2, 4)):
        times.append(write_local(path, batch([(f"k{n}-{i}", 1, "x", i) for i in range(size)]), OPTS))
    return path, times


def test_a_query_starts_before_every_commit_at_the_latest_or_at_an_instant(commits):
    path, times = commits
    assert initial_offset(timeline(path), StreamReadConfig()) == START_OF_TIMELINE
    assert initial_offset(timeline(path), resolve_stream_read_config({"startOffset": "latest"})) == times[-1]
    given = resolve_stream_read_config({"hoodie.datasource.streaming.startOffset": times[0]})
    assert initial_offset(timeline(path), given) == times[0]


def test_a_micro_batch_reaches_the_latest_commit_or_as_far_as_its_limit(commits):
    path, times = commits
    t, cfg = timeline(path), StreamReadConfig()
    assert end_offset(t, cfg, START_OF_TIMELINE) == times[-1]
    assert end_offset(t, cfg, times[-1]) == times[-1]  # nothing new
    assert end_offset(t, cfg, START_OF_TIMELINE, max_instants=2) == times[1]
    assert end_offset(t, cfg, times[0], max_instants=1) == times[1]
    assert end_offset(t, cfg, START_OF_TIMELINE, max_rows=3) == times[1]  # 1 + 2 rows
    assert end_offset(t, cfg, START_OF_TIMELINE, max_rows=2) == times[0]
    assert end_offset(t, cfg, times[1], max_rows=1) == times[2]  # at least one commit, however large
    assert end_offset(t, cfg, START_OF_TIMELINE, cap=times[1]) == times[1]  # Trigger.AvailableNow's target


def test_a_write_in_flight_before_a_completed_one_blocks_the_stream_or_fails_it(commits):
    path, times = commits
    slow = start_write(open_storage(path), OPTS, batch([("late", 1, "x", 0)]).schema)  # alive: it beats
    try:
        later = write_local(path, batch([("after", 1, "x", 0)]), OPTS)
        assert later > slow.instant_time
        t = timeline(path)
        assert end_offset(t, StreamReadConfig(), times[0]) == times[-1]  # not past the write in flight
        assert end_offset(t, StreamReadConfig(), times[-1]) == times[-1]
        with pytest.raises(ReadWindowError, match=f"Write {slow.instant_time} is still in flight"):
            end_offset(t, StreamReadConfig(hollow_commits="FAIL"), times[0])
    finally:
        slow.abort()
    assert end_offset(timeline(path), StreamReadConfig(), times[-1]) == later  # rolled back: the stream moves on


@pytest.mark.parametrize(("options", "message"), [
    ({"startOffset": "yesterday"}, "startOffset"),
    ({"maxInstantsPerTrigger": "0"}, "max.instants.per.trigger"),
    ({"maxInstantsPerTrigger": "1", "maxRowsPerTrigger": "5"}, "not both"),
    ({"hoodie.datasource.read.handle.hollow.commit": "USE_TRANSITION_TIME"}, "not supported"),
    ({"hoodie.datasource.read.handle.hollow.commit": "WAIT"}, "valid values are: FAIL, BLOCK"),
])
def test_bad_stream_options_are_refused_naming_them(options, message):
    with pytest.raises(HoodieConfigError, match=message):
        resolve_stream_read_config(options)


def test_offsets_of_a_hudi_1_table_are_completion_times(tmp_path):
    """On a table of version 8 and later offsets are completion times, as ``HoodieStreamSourceV2`` takes them
    (``read.incremental_range``): one write per micro-batch, in the order the writes completed, each batch
    only its own write's rows."""
    path = str(unzip_table("sample_table/cow/v9_timebasedkeygen_nonhivestyle.zip", tmp_path))
    t, cfg = timeline(path), StreamReadConfig()
    writes = sorted(t.completed(), key=lambda w: w.completion)
    assert len(writes) == 4 and all(w.timestamp < w.completion for w in writes)
    assert initial_offset(t, resolve_stream_read_config({"startOffset": "latest"})) == writes[-1].completion
    start, seen = START_OF_TIMELINE, []
    for write in writes:
        end = end_offset(t, cfg, start, max_instants=1)
        assert end == write.completion
        rows = read_table(path, ReadConfig(query_type="incremental", begin_instant=start, end_instant=end))
        assert set(rows.column("_hoodie_commit_time").to_pylist()) <= {write.timestamp}
        seen += zip(rows.column("_hoodie_commit_time").to_pylist(), rows.column("_hoodie_record_key").to_pylist())
        start = end
    assert end_offset(t, cfg, start) == start  # nothing new
    every = read_table(path)  # each record's latest version came in the batch of the write that wrote it
    assert set(zip(every.column("_hoodie_commit_time").to_pylist(), every.column("_hoodie_record_key").to_pylist())) \
        <= set(seen)
