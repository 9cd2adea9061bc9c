"""Hudi's CALL procedures, with Hudi's names, arguments and result columns."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.errors import AnalysisException

from hoodie_datasource import HoodieTable
from tests.sql.helpers import create_trips, insert_trips

pytestmark = pytest.mark.spark


def _writes(sql, name: str, count: int) -> None:
    for ts in range(1, count + 1):
        sql.sql(f"INSERT INTO {name} VALUES ('a', {ts}, {ts * 10.0}, 'sf'), ('b', {ts}, 1.0, 'nyc')")


def test_show_commits_and_commit_metadata(sql, name, location):
    create_trips(sql, name, location)
    _writes(sql, name, 3)
    commits = HoodieTable(location).completed_commits()

    rows = sql.sql(f"CALL show_commits(table => '{name}', limit => 2)").collect()
    assert [r.commit_time for r in rows] == commits[::-1][:2]  # newest first
    assert all(r.action == "commit" and r.total_records_written == 2 and r.total_partitions_written == 2
               and r.total_files_updated == 2 and r.total_files_added == 0 and r.total_errors == 0 for r in rows)
    first = sql.sql(f"CALL show_commits('{name}', 10)").collect()[-1]  # positional arguments too
    assert (first.commit_time, first.total_files_added, first.total_records_written) == (commits[0], 2, 2)

    stats = sql.sql(f"CALL show_commits_metadata(table => '{name}', limit => 100)").collect()
    assert sorted((r.commit_time, r.partition) for r in stats) == sorted(
        (c, p) for c in commits for p in ("city=nyc", "city=sf"))
    assert {r.num_writes for r in stats} == {1}


def test_run_clean_and_rollback_to_instant(sql, name, location):
    create_trips(sql, name, location)
    _writes(sql, name, 3)
    rows = sql.sql(f"CALL run_clean(table => '{name}', retain_commits => 1)").collect()
    assert len(rows) == 1 and rows[0].total_files_deleted >= 2
    assert [i.timestamp for i in HoodieTable(location).instants() if i.action == "clean"] == [rows[0].start_clean_time]

    latest = HoodieTable(location).latest_commit()
    sql.sql(f"INSERT INTO {name} VALUES ('a', 9, 99.0, 'sf')")
    new = HoodieTable(location).latest_commit()
    assert sql.sql(f"CALL rollback_to_instant(table => '{name}', instant_time => '{new}')").collect()[0][0] is True
    assert HoodieTable(location).latest_commit() == latest
    assert sorted(tuple(r) for r in sql.sql(f"SELECT uuid, fare FROM {name}").collect()) == [("a", 30.0), ("b", 1.0)]


def test_run_and_show_compaction(sql, name, location):
    create_trips(sql, name, location, "mor")
    _writes(sql, name, 2)  # the second write is in log files
    scheduled = sql.sql(f"CALL run_compaction(op => 'schedule', table => '{name}')").collect()
    assert len(scheduled) == 1 and scheduled[0].state == "REQUESTED" and scheduled[0].operation_size == 2
    shown = sql.sql(f"CALL show_compaction(table => '{name}')").collect()
    assert [tuple(r) for r in shown] == [tuple(scheduled[0])]

    ran = sql.sql(f"CALL run_compaction(op => 'execute', path => '{location}')").collect()
    assert [(r.timestamp, r.state) for r in ran] == [(scheduled[0].timestamp, "COMPLETED")]
    assert sorted(tuple(r) for r in sql.sql(f"SELECT uuid, fare FROM {name}_ro").collect()) == [("a", 20.0), ("b", 1.0)]


def test_unknown_procedure_or_argument_lists_the_valid_ones(sql, name, location):
    create_trips(sql, name, location)
    listed = "Unknown procedure 'show_comits'; the procedures are: .*run_clean, .*show_commits"
    with pytest.raises(AnalysisException, match=listed):
        sql.sql(f"CALL show_comits(table => '{name}')")
    with pytest.raises(AnalysisException, match="unknown argument 'limt'; its arguments are: table, limit"):
        sql.sql(f"CALL show_commits(table => '{name}', limt => 1)")
    with pytest.raises(Exception, match="trigger_max_commits are not supported"):  # never silently ignored
        sql.sql(f"CALL run_clean(table => '{name}', trigger_max_commits => 2)")
    with pytest.raises(AnalysisException, match="no table nope"):
        sql.sql("CALL show_commits(table => 'nope')")


def test_show_fsview_all_and_latest(sql, name, location):
    create_trips(sql, name, location, "mor")
    _writes(sql, name, 2)  # one base file and one log file per partition
    latest = sql.sql(f"CALL show_fsview_latest(table => '{name}')").collect()
    assert sorted(r.partition for r in latest) == ["city=nyc", "city=sf"]
    assert all(r.num_delta_files == 1 and r.data_file.endswith(".parquet") and r.data_file_size > 0 for r in latest)
    only_sf = sql.sql(f"CALL show_fsview_latest(table => '{name}', partition_path => 'city=sf')").collect()
    assert [r.partition for r in only_sf] == ["city=sf"]

    sql.sql(f"CALL run_compaction(op => 'run', table => '{name}')")
    slices = sql.sql(f"CALL show_fsview_all(table => '{name}', path_regex => 'city=sf')").collect()
    assert len(slices) == 2  # the slice before the compaction and the compacted one
    assert sorted(r.num_delta_files for r in slices) == [0, 1]
    assert len({r.file_id for r in slices}) == 1


def test_show_fs_path_detail(sql, name, location):
    create_trips(sql, name, location)
    _writes(sql, name, 1)
    whole = sql.sql(f"CALL show_fs_path_detail(path => '{location}')").collect()
    files = [p for p in Path(location).rglob("*") if p.is_file()]
    assert [(r.storage_path, r.file_num, r.storage_size) for r in whole] == \
        [(location, len(files), sum(p.stat().st_size for p in files))]
    subs = sql.sql(f"CALL show_fs_path_detail(path => '{location}', is_sub => true)").collect()
    assert sorted(Path(r.storage_path).name for r in subs) == [".hoodie", "city=nyc", "city=sf"]
    assert [r.storage_size for r in subs] == sorted((r.storage_size for r in subs), reverse=True)  # sort by size


def test_procedures_take_session_options_which_arguments_override(sql, name, location):
    create_trips(sql, name, location)
    _writes(sql, name, 3)  # the default retains 10 commits: nothing cleaned
    sql.sql("SET hoodie.cleaner.commits.retained = 1")
    try:
        assert sql.sql(f"CALL run_clean(table => '{name}', retain_commits => 10)").collect() == []  # argument wins
        rows = sql.sql(f"CALL run_clean(table => '{name}')").collect()  # the session's retained = 1
    finally:
        sql.conf.unset("hoodie.cleaner.commits.retained")
    assert len(rows) == 1 and rows[0].total_files_deleted >= 2


def test_show_metadata_table(sql, name, location):
    sql.sql("SET hoodie.metadata.index.column.stats.enable = true")
    try:
        create_trips(sql, name, location)
        _writes(sql, name, 2)
    finally:
        sql.conf.unset("hoodie.metadata.index.column.stats.enable")
    table = HoodieTable(location)
    partitions = sql.sql(f"CALL show_metadata_table_partitions(table => '{name}')").collect()
    assert [r.partition for r in partitions] == ["city=nyc", "city=sf"]
    on_disk = {p.name: p.stat().st_size for p in (Path(location) / "city=sf").iterdir() if p.suffix == ".parquet"}
    files = sql.sql(f"CALL show_metadata_table_files(path => '{location}', partition => 'city=sf')").collect()
    assert [r.file_path for r in files] == sorted(on_disk) and table.metadata_files("city=sf") == on_disk
    stats = sql.sql(f"CALL show_metadata_table_column_stats(table => '{name}', partition => 'city=sf', "
                    "targetColumns => 'fare,ts')").collect()
    assert [(r.column_name, r.min_value, r.max_value, r.null_number) for r in stats] == \
        [("fare", "20.0", "20.0", 0), ("ts", "2", "2", 0)]  # sf holds one key, upserted by the second write
    sizes = {r.stat_key: r.stat_value for r in sql.sql(f"CALL show_metadata_table_stats(table => '{name}')").collect()}
    assert sizes["partitionCount"] == "2" and int(sizes["files.logFileCount"]) >= 1
    assert sizes == {k: str(v) for k, v in table.metadata_stats().items()}


def test_validate_metadata_table_files(sql, name, location):
    create_trips(sql, name, location)
    _writes(sql, name, 1)
    assert sql.sql(f"CALL validate_metadata_table_files(table => '{name}')").collect() == []
    gone = next((Path(location) / "city=nyc").glob("*.parquet"))
    size = gone.stat().st_size
    gone.unlink()
    (row,) = sql.sql(f"CALL validate_metadata_table_files(table => '{name}', verbose => false)").collect()
    assert tuple(row) == ("city=nyc", gone.name, False, True, 0, size)
    assert len(sql.sql(f"CALL validate_metadata_table_files(table => '{name}', verbose => true)").collect()) == 2


def test_create_init_and_delete_metadata_table(sql, name, location):
    create_trips(sql, name, location)
    _writes(sql, name, 1)
    folder = f"{location}/.hoodie/metadata"
    (deleted,) = sql.sql(f"CALL delete_metadata_table(table => '{name}')").collect()
    assert deleted.result == f"Deleted Metadata Table at '{folder}'" and not Path(folder).exists()
    with pytest.raises(Exception, match="Table .* has no metadata table"):
        sql.sql(f"CALL show_metadata_table_partitions(table => '{name}')").collect()
    with pytest.raises(Exception, match="does not exist"):
        sql.sql(f"CALL init_metadata_table(table => '{name}')").collect()
    (created,) = sql.sql(f"CALL create_metadata_table(table => '{name}')").collect()
    assert created.result.startswith(f"Created Metadata Table in {folder}")
    with pytest.raises(Exception, match="not empty"):
        sql.sql(f"CALL create_metadata_table(table => '{name}')").collect()
    (opened,) = sql.sql(f"CALL init_metadata_table(table => '{name}', read_only => true)").collect()
    assert opened.result.startswith(f"Opened Metadata Table in {folder}")
    assert HoodieTable(location).validate_metadata() == []
    assert [r.partition for r in sql.sql(f"CALL show_metadata_table_partitions('{name}')").collect()] == \
        ["city=nyc", "city=sf"]


def test_savepoint_procedures_create_show_restore_and_delete(sql, name, location):
    create_trips(sql, name, location)
    _writes(sql, name, 2)
    kept = HoodieTable(location).latest_commit()
    assert sql.sql(f"CALL create_savepoint(table => '{name}', commit_time => '{kept}', user => 'ops', "
                   f"comments => 'before the backfill')").collect()[0].create_savepoint_result is True
    assert [r.savepoint_time for r in sql.sql(f"CALL show_savepoints(table => '{name}')").collect()] == [kept]
    [info] = HoodieTable(location).show_savepoints()
    assert (info.instant_time, info.user, info.comments, info.partitions) == (kept, "ops", "before the backfill",
                                                                            ("city=nyc", "city=sf"))
    sql.sql(f"INSERT INTO {name} VALUES ('a', 9, 99.0, 'sf'), ('c', 9, 9.0, 'nyc')")
    with pytest.raises(Exception, match="no savepoint 1 in"):
        sql.sql(f"CALL rollback_to_savepoint(table => '{name}', instant_time => '1')").collect()
    assert sql.sql(f"CALL rollback_to_savepoint(table => '{name}')").collect()[0].rollback_savepoint_result is True
    assert sorted(tuple(r) for r in sql.sql(f"SELECT uuid, fare FROM {name}").collect()) == [("a", 20.0), ("b", 1.0)]
    assert [i.action for i in HoodieTable(location).instants()][-1] == "restore"
    assert sql.sql(f"CALL delete_savepoint(table => '{name}', instant_time => '{kept}')").collect()[0][0] is True
    assert sql.sql(f"CALL show_savepoints(table => '{name}')").collect() == []


def test_run_and_show_clustering(sql, name, location):
    create_trips(sql, name, location)
    insert_trips(sql, name)
    sql.sql(f"INSERT INTO {name} VALUES ('d', 1, 40.0, 'nyc')")
    scheduled = sql.sql(f"CALL run_clustering(table => '{name}', op => 'schedule', order => 'fare')").collect()
    assert [(r.input_group_size, r.state, r.involved_partitions) for r in scheduled] == [(2, "REQUESTED", "*")]
    instant = scheduled[0].timestamp
    with pytest.raises(Exception, match=f"pending clustering {instant} will rewrite them"):  # nothing written
        sql.sql(f"INSERT INTO {name} VALUES ('a', 2, 11.0, 'sf')")
    ran = sql.sql(f"CALL run_clustering(table => '{name}', op => 'execute', show_involved_partition => true)")
    assert [(r.timestamp, r.state, r.involved_partitions) for r in ran.collect()] == [
        (instant, "COMPLETED", "city=nyc,city=sf")]
    shown = sql.sql(f"CALL show_clustering(table => '{name}')").collect()
    assert [(r.timestamp, r.input_group_size, r.state) for r in shown] == [(instant, 2, "COMPLETED")]
    sql.sql(f"INSERT INTO {name} VALUES ('a', 2, 11.0, 'sf')")
    assert sorted((r.uuid, r.fare) for r in sql.sql(f"SELECT uuid, fare FROM {name}").collect()) == [
        ("a", 11.0), ("b", 20.0), ("c", 30.0), ("d", 40.0)]
    with pytest.raises(Exception, match="predicate are not supported"):
        sql.sql(f"CALL run_clustering(table => '{name}', predicate => 'city = \\'sf\\'')").collect()
