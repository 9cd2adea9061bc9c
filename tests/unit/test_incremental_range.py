"""Incremental ranges (``read.incremental_range``): by instant time on a table of version 6, by completion time on
one of version 8 and later (as Apache Hudi 1.x: ``IncrementalQueryAnalyzer``), and a plan pinned to its own end
(what the jvm-shim's second planning step does) plans the same read. Java's answers to these ranges are in
tests/hudi_oracle/test_completion_time_reads."""

from __future__ import annotations

import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.incremental_range import incremental_range
from hoodie_datasource.read.planner import plan_read
from hoodie_datasource.table.table import Table
from tests.conftest import unzip_table
from tests.unit.small_tables import batch

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}
HUDI_1_TABLES = ["sample_table/cow/v9_timebasedkeygen_nonhivestyle.zip", "sample_table/mor/avro/v9_txns_complex_meta.zip"]


@pytest.mark.parametrize("zip_name", HUDI_1_TABLES)
def test_a_hudi_1_table_ranges_by_completion_time(tmp_path, zip_name):
    timeline = Table.load(str(unzip_table(zip_name, tmp_path))).timeline
    first, second = timeline.completed()[:2]
    assert first.completion < second.timestamp < second.completion
    between = str(int(second.timestamp) + 1)
    assert between < second.completion
    for begin in (first.completion, second.timestamp, between):
        span = incremental_range(timeline, begin, None, "FAIL")
        assert span.by_completion and span.writes[0] == second and first not in span.writes
    assert incremental_range(timeline, second.completion, None, "FAIL").writes[0] != second
    assert incremental_range(timeline, first.timestamp, second.timestamp, "FAIL").writes == (first,)
    assert incremental_range(timeline, "0", None, "FAIL").end == max(i.completion for i in timeline.completed())


def test_a_version_6_table_ranges_by_instant_time(tmp_path):
    path = str(tmp_path / "t")
    times = [write_local(path, batch([(f"k{n}", 1, "x", n)]), OPTS) for n in range(3)]
    timeline = Table.load(path).timeline
    span = incremental_range(timeline, times[0], None, "FAIL")
    assert not span.by_completion and [i.timestamp for i in span.writes] == times[1:] and span.end == times[-1]
    assert incremental_range(timeline, times[0], times[1], "FAIL").upto == times[1]


@pytest.mark.parametrize("zip_name", HUDI_1_TABLES)
def test_a_plan_pinned_to_its_end_is_the_same_read(tmp_path, zip_name):
    table = Table.load(str(unzip_table(zip_name, tmp_path)))
    second = table.timeline.completed()[1]
    for end in (None, second.completion):
        cfg = ReadConfig(query_type="incremental", begin_instant=second.timestamp, end_instant=end)
        plan = plan_read(table, cfg)
        again = plan_read(table, cfg.pinned_to(plan.instant))
        assert second.timestamp in plan.commit_times and plan.commit_range is None
        assert (again.slices, again.commit_times, again.visible_instants) == \
            (plan.slices, plan.commit_times, plan.visible_instants)
