"""The ``hoodie`` command line, run in this process (through ``main``, in click's isolated streams) and once as a
real subprocess, on real tables (ours, written in this process, and one of Apache Hudi's in ../shared): each JSON
answer is the library's answer (``HoodieTable``, the commit metadata, the file system view, storage's own files);
each service changes the table as the library's call does; ``validate`` finds each kind of planted problem; errors
exit 1 or 2 with one line on stderr. No JVM."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import click
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from hoodie_datasource.cli.__main__ import main
from hoodie_datasource.cli.app import hoodie
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.hoodie_table import HoodieTable
from hoodie_datasource.services.table_validation import ProblemKind
from hoodie_datasource.table.file_names import BaseFileName, LogFileName
from tests.conftest import REPO, unzip_table
from tests.unit.small_tables import batch, read_pairs

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}
MOR = {**OPTS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
COMPACT_EACH = "hoodie.compact.inline.max.delta.commits=1"


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self):
        return json.loads(self.stdout)


def hoodie_cli(*args: str, code: int = 0) -> Ran:
    """``hoodie args...`` in this process, through ``main`` (its error handling and exit codes too)."""
    with CliRunner().isolation() as (out, err, _):
        exit_code = main(list(args))
        sys.stdout.flush()
        sys.stderr.flush()
    ran = Ran(exit_code, out.getvalue().decode(), err.getvalue().decode())
    assert ran.code == code, ran
    return ran


def as_json(*args: str, code: int = 0):
    return hoodie_cli(*args, "--output", "json", code=code).json


def mor_table(path: Path) -> str:
    """A MERGE_ON_READ table with a metadata table: two partitions, an insert, then updates into logs."""
    write_local(str(path), batch([("a", 1, "x", 1), ("b", 1, "y", 1)]), MOR)
    write_local(str(path), batch([("a", 2, "x", 2), ("c", 1, "y", 1)]), MOR)
    write_local(str(path), batch([("a", 3, "x", 3)]), MOR)
    return str(path)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> str:
    return mor_table(tmp_path_factory.mktemp("cli") / "t")


@pytest.fixture
def table(built, tmp_path) -> str:
    """A copy of the built table, for a test that changes it."""
    return str(shutil.copytree(built, tmp_path / "t"))


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in sorted(group.commands.items()):
        found.append((*prefix, name))
        if isinstance(command, click.Group):
            found += _commands(command, (*prefix, name))
    return found


def test_every_command_has_help():
    commands = _commands(hoodie)
    assert {c[0] for c in commands} >= {"show", "commits", "commit", "fsview", "stats", "compaction", "clustering",
                                        "clean", "rollback", "savepoint", "restore", "validate"}
    for command in [(), *commands]:
        ran = hoodie_cli(*command, "--help")
        assert ran.stdout.startswith(f"Usage: hoodie {' '.join(command)}".rstrip()) and "--help" in ran.stdout


def test_show_is_the_table_config(built):
    shown = as_json("show", built)
    config = HoodieTable(built).config
    assert shown["properties"] == dict(config.raw) and shown["table_type"] == "MERGE_ON_READ"
    assert shown["base_path"] == built and shown["metadata_table"] == f"{built}/.hoodie/metadata"
    human = hoodie_cli("show", built).stdout.splitlines()
    assert human[0].split() == ["property", "value"]
    assert ["hoodie.table.recordkey.fields", "id"] in [line.split() for line in human]


def test_commits_and_one_commit_are_the_commit_metadata(built):
    table = HoodieTable(built)
    writes = table.completed_commits()
    shown = as_json("commits", built)
    assert [c["commit_time"] for c in shown] == writes[::-1]
    for row in shown:
        stats = [s for ss in table.commit_metadata(row["commit_time"])["partitionToWriteStats"].values() for s in ss]
        assert row["total_records_written"] == sum(s["numWrites"] for s in stats)
        assert row["total_update_records_written"] == sum(s["numUpdateWrites"] for s in stats)
        assert row["total_bytes_written"] == sum(s["totalWriteBytes"] for s in stats)
    assert as_json("commits", built, "--limit", "1") == shown[:1]

    second = writes[1]
    stats = table.commit_metadata(second)["partitionToWriteStats"]
    partitions = as_json("commit", built, second)
    assert {p["partition_path"]: p["total_records_inserted"] for p in partitions} == {
        p: sum(s["numInserts"] for s in ss) for p, ss in stats.items()}
    files = as_json("commit", built, second, "--files")
    assert sorted((f["partition_path"], f["file_id"], f["file_size"]) for f in files) == sorted(
        (p, s["fileId"], s["fileSizeInBytes"]) for p, ss in stats.items() for s in ss)
    lines = hoodie_cli("commit", built, second, "--files").stdout.splitlines()
    assert lines[0].split()[:3] == ["action", "partition_path", "file_id"] and len(lines) == 2 + len(files)


def test_archived_commits(tmp_path):
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.metadata.compact.max.delta.commits": "1"}
    for ts in range(1, 7):
        write_local(path, batch([("a", ts, "x", ts)]), opts)
    table = HoodieTable(path)
    archived = table.archive(**{"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                                "hoodie.cleaner.commits.retained": "1"})
    timeline = table.refresh().timeline()
    writes = [t for t in table.completed_commits() if t in archived]
    assert writes
    assert [c["commit_time"] for c in as_json("commits", path, "--archived")] == writes[::-1]
    assert [c["commit_time"] for c in as_json("commits", path)] == [
        t for t in table.completed_commits()[::-1] if t not in timeline.archived]
    window = as_json("commits", path, "--archived", "--start-ts", writes[0], "--end-ts", writes[-1])
    assert [c["commit_time"] for c in window] == writes[:0:-1]  # the start excluded, the end included
    hoodie_cli("commits", path, "--start-ts", writes[0], code=2)  # only with --archived


def test_fsview_is_the_file_system_view(built):
    table = HoodieTable(built)
    latest = table.table.fs_view.latest_file_slices()
    shown = as_json("fsview", built, "--latest")
    assert sorted((r["partition"], r["file_id"], r["base_instant"], r["num_delta_files"]) for r in shown) == sorted(
        (s.partition_path, s.file_id, s.base_instant, len(s.log_files)) for s in latest)
    only_x = as_json("fsview", built, "--partition", "x")
    assert only_x and {r["partition"] for r in only_x} == {"x"}
    every = as_json("fsview", built)
    assert len(every) >= len(shown) and {r["partition"] for r in every} == {"x", "y"}


def test_stats_wa_and_filesizes(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "x", 1)]), OPTS)
    updated = write_local(path, batch([("a", 2, "x", 2)]), OPTS)  # the file group is rewritten whole
    wa = as_json("stats", "wa", path)
    assert wa[-1] == {"commit_time": "Total", "total_upserted": 1, "total_written": 4,
                      "write_amplification_factor": "4.00"}
    assert {"commit_time": updated, "total_upserted": 1, "total_written": 2, "write_amplification_factor": "2.00"} in wa

    sizes = sorted(f.stat().st_size for f in Path(path, "x").iterdir() if BaseFileName.parse(f.name))
    shown = as_json("stats", "filesizes", path)
    every = shown[-1]
    assert (every["commit_time"], every["num_files"], every["min"], every["max"]) == ("ALL", 2, sizes[0], sizes[-1])
    assert every["avg"] == pytest.approx(sum(sizes) / 2)
    assert [r["num_files"] for r in shown[:-1]] == [1, 1]
    assert as_json("stats", "filesizes", path, "--partition", "nope") == []


def test_compaction_schedule_show_run(table):
    before = read_pairs(table)
    scheduled = as_json("compaction", "schedule", table, "--option", COMPACT_EACH)["scheduled"]
    assert scheduled and HoodieTable(table).timeline().find(scheduled).state.name == "REQUESTED"
    assert as_json("compaction", "show", table) == [
        {"timestamp": scheduled, "operation_size": 1, "state": "REQUESTED"}]
    assert as_json("compaction", "run", table) == {"completed": [scheduled]}
    assert HoodieTable(table).timeline().find(scheduled).is_completed
    assert read_pairs(table) == before
    # nothing pending: run schedules one and runs it, or says there is nothing to compact
    assert hoodie_cli("compaction", "run", table, "--option", COMPACT_EACH).stdout.startswith("Nothing to compact")
    assert hoodie_cli("compaction", "run", table, "--instant", "20200101000000000", code=1).stderr.startswith(
        "error: TimelineError: No pending compaction 20200101000000000")


def test_clean_dry_run_lists_what_clean_deletes(table):
    hoodie_cli("compaction", "run", table, "--option", COMPACT_EACH)
    retain = ("--option", "hoodie.cleaner.commits.retained=1")
    planned = as_json("clean", table, "--dry-run", *retain)
    assert planned["dry_run"] and planned["files"]
    paths = [Path(table, f["partition"], f["file"]) for f in planned["files"]]
    assert all(p.exists() for p in paths)
    cleaned = as_json("clean", table, *retain)
    assert cleaned[0]["total_files_deleted"] == len(paths) and not any(p.exists() for p in paths)
    assert as_json("clean", table, "--dry-run", *retain)["files"] == []
    assert as_json("validate", table) == {"valid": True, "problems": []}


def test_rollback_of_the_latest_commit(table):
    before = HoodieTable(table).completed_commits()
    assert as_json("rollback", table, before[-1]) == {"rolled_back": before[-1], "result": True}
    assert HoodieTable(table).completed_commits() == before[:-1]
    assert read_pairs(table) == [("a", 2), ("b", 1), ("c", 1)]


def test_errors_are_one_line_on_stderr(table, tmp_path):
    older = HoodieTable(table).completed_commits()[0]
    failed = hoodie_cli("rollback", table, older, code=1)
    assert failed.stdout == "" and failed.stderr.count("\n") == 1
    assert failed.stderr.startswith("error: TimelineError: Only the latest completed write can be rolled back")
    assert "Traceback" in hoodie_cli("--debug", "rollback", table, older, code=1).stderr
    assert "Traceback" in hoodie_cli("rollback", table, older, "--debug", code=1).stderr
    missing = hoodie_cli("commits", str(tmp_path / "none"), code=1)
    assert missing.stderr.startswith("error: TableNotFoundError: No Hudi table at")
    bad_policy = hoodie_cli("clean", table, "--option", "hoodie.cleaner.policy=KEEP_NOTHING", code=2)
    assert "hoodie.cleaner.policy" in bad_policy.stderr and bad_policy.stderr.count("\n") == 1
    assert "'nokey' is not key=value" in hoodie_cli("commits", table, "--option", "nokey", code=2).stderr
    assert "No such command" in hoodie_cli("comits", table, code=2).stderr
    assert "Invalid value for '--output'" in hoodie_cli("commits", table, "--output", "xml", code=2).stderr


# ---- validate: each kind of problem planted in a copy of the table


def _first(table: str, parse) -> Path:
    return next(p for p in sorted(Path(table).glob("*/*")) if parse(p.name))


def _delete_base_file(table: str) -> tuple[str, set[ProblemKind]]:
    victim = _first(table, BaseFileName.parse)
    victim.unlink()
    return victim.relative_to(table).as_posix(), {ProblemKind.MISSING_FILE, ProblemKind.METADATA_MISMATCH}


def _orphan_file(table: str) -> tuple[str, set[ProblemKind]]:
    source = _first(table, BaseFileName.parse)
    parsed = BaseFileName.parse(source.name)
    orphan = source.with_name(f"{parsed.file_id}_{parsed.write_token}_20200101000000000.parquet")
    shutil.copy(source, orphan)
    return orphan.relative_to(table).as_posix(), {ProblemKind.ORPHAN_FILE, ProblemKind.METADATA_MISMATCH}


def _leftover_marker(table: str) -> tuple[str, set[ProblemKind]]:
    completed = HoodieTable(table).completed_commits()[0]
    marker = Path(table, ".hoodie", ".temp", completed, "x", "f.parquet.marker.CREATE")
    marker.parent.mkdir(parents=True)
    marker.write_bytes(b"")
    return f".hoodie/.temp/{completed}", {ProblemKind.LEFTOVER_MARKERS}


def _truncated_footer(table: str) -> tuple[str, set[ProblemKind]]:
    victim = _first(table, BaseFileName.parse)
    data = victim.read_bytes()
    victim.write_bytes(data[:-20])
    return victim.relative_to(table).as_posix(), {ProblemKind.UNREADABLE_BASE_FILE, ProblemKind.METADATA_MISMATCH}


def _corrupt_log_block(table: str) -> tuple[str, set[ProblemKind]]:
    victim = _first(table, LogFileName.parse)
    data = bytearray(victim.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 16] = b"\xff" * 16  # the same size: only the block's content is damaged
    victim.write_bytes(bytes(data))
    return victim.relative_to(table).as_posix(), {ProblemKind.CORRUPT_LOG_BLOCK}


def _metadata_out_of_sync(table: str) -> tuple[str, set[ProblemKind]]:
    victim = _first(table, BaseFileName.parse)
    pq.write_table(pq.read_table(victim), victim, compression="none")  # readable, of another size
    return victim.relative_to(table).as_posix(), {ProblemKind.METADATA_MISMATCH}


@pytest.mark.parametrize("plant", [_delete_base_file, _orphan_file, _leftover_marker, _truncated_footer,
                                   _corrupt_log_block, _metadata_out_of_sync], ids=lambda f: f.__name__.strip("_"))
def test_validate_finds_each_planted_problem(table, plant):
    assert as_json("validate", table) == {"valid": True, "problems": []}
    assert hoodie_cli("validate", table).stdout.endswith("no problems found\n")
    path, kinds = plant(table)
    found = as_json("validate", table, code=1)
    assert not found["valid"]
    assert {p["kind"] for p in found["problems"]} == {k.value for k in kinds}
    assert {p["path"] for p in found["problems"]} == {path}
    human = hoodie_cli("validate", table, code=1).stdout
    assert f"{len(found['problems'])} problem(s)" in human and path in human


@pytest.mark.parametrize("zip_rel", ["sample_table/mor/parquet/v6_nonpartitioned_rollback.zip",
                                     "quickstart_trips_table/mor/avro/v6_trips_8i1u.zip"])
def test_shared_hudi_tables(tmp_path, zip_rel):
    """Apache Hudi's own MERGE_ON_READ tables (one whose second delta commit was rolled back: its log file kept, a
    command block appended): sound, and their timeline, commits and files as the library reads them."""
    path = str(unzip_table(zip_rel, tmp_path))
    table = HoodieTable(path)
    assert as_json("validate", path) == {"valid": True, "problems": []}
    assert [c["commit_time"] for c in as_json("commits", path)] == table.completed_commits()[::-1]
    for instant in table.completed_commits():
        stats = table.commit_metadata(instant)["partitionToWriteStats"]
        assert sorted((f["partition_path"], f["file_id"], f["total_records_written"])
                      for f in as_json("commit", path, instant, "--files")) == sorted(
            (p, s["fileId"], s["numWrites"]) for p, ss in stats.items() for s in ss)
    latest = as_json("fsview", path, "--latest")
    assert sorted((r["partition"], r["file_id"], r["num_delta_files"]) for r in latest) == sorted(
        (s.partition_path, s.file_id, len(s.log_files)) for s in table.table.fs_view.latest_file_slices())
    assert as_json("show", path)["properties"]["hoodie.table.type"] == "MERGE_ON_READ"


def test_a_real_process_keeps_stdout_to_one_json_document(built):
    """``python -m hoodie_datasource.cli``: with a terminal forced on stderr, the progress bar goes there and stdout
    holds only the document."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "FORCE_COLOR": "1"}
    ran = subprocess.run([sys.executable, "-m", "hoodie_datasource.cli", "validate", built, "--output", "json"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert ran.returncode == 0 and json.loads(ran.stdout) == {"valid": True, "problems": []}
    assert "Validating files" in ran.stderr


# ---- savepoints and restore


def test_savepoint_create_list_delete_and_restore(table):
    first, *later = HoodieTable(table).completed_commits()
    before = read_pairs(table, as_of_instant=first)
    assert as_json("savepoint", "create", table, "--instant", first, "--user", "ops", "--comments", "backfill") == {
        "savepoint": first}
    (listed,) = as_json("savepoint", "list", table)
    (info,) = HoodieTable(table).show_savepoints()
    assert listed == {"instant_time": first, "user": "ops", "comments": "backfill", "saved_at": info.saved_at,
                      "partitions": ["x", "y"]}
    assert "backfill" in hoodie_cli("savepoint", "list", table).stdout

    restored = as_json("restore", table, first)
    assert restored["restored_to"] == first and HoodieTable(table).timeline().find(restored["restore_instant"])
    assert HoodieTable(table).completed_commits() == [first] and read_pairs(table) == before
    assert as_json("validate", table) == {"valid": True, "problems": []}

    assert as_json("savepoint", "delete", table, first) == {"deleted": first}
    assert as_json("savepoint", "list", table) == []
    assert hoodie_cli("savepoint", "delete", table, first, code=1).stderr.startswith("error: SavepointError: ")
    assert later  # the writes the restore rolled back


# ---- clustering


def test_clustering_schedule_show_run(tmp_path):
    path = str(tmp_path / "t")
    for i in range(4):  # four small file groups in one partition
        write_local(path, batch([(f"k{i}", 1, "x", i)]), {**OPTS, "hoodie.parquet.small.file.limit": "0"})
    before = read_pairs(path)
    scheduled = as_json("clustering", "schedule", path)["scheduled"]
    (plan,) = HoodieTable(path).pending_clustering()
    assert as_json("clustering", "show", path, "--pending") == [
        {"instant_time": scheduled, "input_groups": plan.input_groups, "input_files": 4,
         "input_bytes": plan.input_bytes, "partitions": ["x"], "state": "REQUESTED"}]
    assert as_json("clustering", "show", path) == [
        {"timestamp": scheduled, "input_group_size": plan.input_groups, "state": "REQUESTED",
         "involved_partitions": "x"}]
    assert as_json("clustering", "run", path) == {"completed": [scheduled]}
    assert [r["state"] for r in as_json("clustering", "show", path)] == ["COMPLETED"]
    assert len(as_json("fsview", path, "--latest")) == 1 and read_pairs(path) == before
    assert as_json("validate", path) == {"valid": True, "problems": []}
    assert hoodie_cli("clustering", "run", path, "--instant", "20200101000000000", code=1).stderr.startswith(
        "error: TimelineError: No pending clustering 20200101000000000")
