"""Instants, timeline file names (layouts 1 and 2), loading real timelines, atomic transitions."""

from __future__ import annotations

import pytest

from hoodie_datasource.config.table_config import load_table_config, table_checksum
from hoodie_datasource.errors import CommitConflictError, TimelineError
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.instant import Instant, State, validate_instant_time
from hoodie_datasource.timeline.instant_time import new_instant_time
from hoodie_datasource.timeline.timeline import Timeline
from hoodie_datasource.timeline.transitions import create_requested, transition_to_completed, transition_to_inflight
from tests.conftest import unzip_table


@pytest.mark.parametrize(
    "name, expected",
    [
        ("20240418173551906.commit", Instant("20240418173551906", "commit", State.COMPLETED)),
        ("20240418173551906.inflight", Instant("20240418173551906", "commit", State.INFLIGHT)),
        ("20240418173551906.commit.requested", Instant("20240418173551906", "commit", State.REQUESTED)),
        ("20240418173551906.deltacommit.inflight", Instant("20240418173551906", "deltacommit", State.INFLIGHT)),
        ("20250713010535797_20250713010536001.commit",
         Instant("20250713010535797", "commit", State.COMPLETED, "20250713010536001")),
        ("hoodie.properties", None),
        ("20240418173551906.commit.abc.tmp", None),
    ],
)
def test_instant_file_names_round_trip(name, expected):
    parsed = Instant.parse(name)
    assert parsed == expected
    if parsed is not None:
        assert parsed.file_name(2 if parsed.completion else 1) == name


def test_compaction_completes_as_commit_and_layout2_needs_completion_time():
    compaction = Instant("20240101000000000", "compaction", State.COMPLETED)
    assert compaction.file_name(1) == "20240101000000000.commit"
    with pytest.raises(TimelineError, match="needs a completion time"):
        compaction.file_name(2)


def test_instant_time_validation_and_generation():
    assert validate_instant_time("20240418173551906") == "20240418173551906"
    with pytest.raises(TimelineError, match="yyyyMMddHHmmss"):
        validate_instant_time("2024-04-18")
    later = new_instant_time("99991231235959998")
    assert later == "99991231235959999" and len(new_instant_time()) == 17


@pytest.mark.parametrize(
    "zip_name, commits, version",
    [
        ("sample_table/cow/v6_nonpartitioned.zip", ["20240418173550988", "20240418173551906"], 6),
        ("sample_table/cow/v8_nonpartitioned.zip", ["20250713010535797", "20250713010536861"], 8),
    ],
)
def test_load_real_timelines(tmp_path, zip_name, commits, version):
    base = open_storage(str(unzip_table(zip_name, tmp_path)))
    config = load_table_config(base)
    assert config.version == version
    timeline = Timeline.load(base, config)
    assert [i.timestamp for i in timeline.completed()] == commits
    metadata = timeline.read_metadata(timeline.completed()[-1])
    assert metadata["partitionToWriteStats"] and "schema" in metadata["extraMetadata"]


def test_checksum_matches_a_real_table(tmp_path):
    config = load_table_config(open_storage(str(unzip_table("sample_table/cow/v6_nonpartitioned.zip", tmp_path))))
    raw = dict(config.raw)
    assert str(table_checksum(config.database, config.name)) == raw["hoodie.table.checksum"]


def test_transitions_are_create_once(tmp_path):
    from hoodie_datasource.config.table_config import TableConfig, write_table_config

    config = TableConfig("t", "COPY_ON_WRITE", 6, 1, ("id",), (), None, "", False, False, True, "PARQUET", "p")
    storage = open_storage(str(tmp_path))
    write_table_config(storage, config)
    table = Table.load(storage, config=config)
    requested = create_requested(table, "20240101000000000", "commit")
    inflight = transition_to_inflight(table, requested)
    transition_to_completed(table, inflight, b"{}")
    with pytest.raises(CommitConflictError, match="never overwritten"):
        transition_to_completed(table, inflight, b'{"another": "writer"}')
    # a retry of the same create (its first answer lost) finds its own content: the commit stands
    assert transition_to_completed(table, inflight, b"{}").state is State.COMPLETED
    loaded = Timeline.load(storage, config)
    assert [i.state for i in loaded.instants] == [State.COMPLETED]
    assert storage.read(loaded.path_of(loaded.instants[0])) == b"{}"
    assert not [p for p in (tmp_path / ".hoodie").iterdir() if p.name.endswith(".tmp")]
