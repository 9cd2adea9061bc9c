"""Tables our writes and table services shaped, read by Apache Hudi itself (0.15.0 and 1.1.1 on Spark 3.5),
every column compared, ``_hoodie_*`` included, COW and MOR:

* deletes: a soft delete (an upsert that keeps key, partition and ordering value and sets every other field
  to null, as Hudi's documentation spells it), a hard delete through ``_hoodie_is_deleted`` and one through
  the ``delete`` operation;
* schema evolution: int -> long, float -> double and int -> double widened, then a column added (on MOR,
  log blocks in the new schema over a base file in the old);
* services: our compaction (MOR), our clean (``hoodie.cleaner.commits.retained=1``), our rollback of a
  failed write (COW: it failed, and so did the rollback it began, which our next write finishes; MOR: a log
  append killed midway, rolled back by ``HoodieTable.rollback``) and our archival
  (``hoodie.keep.min.commits=2``, ``max.commits=3``: Hudi's archive log).

Then Java's procedures on the services tables: ``show_commits``, ``show_archived_commits``,
``show_rollbacks`` / ``show_rollback_detail``, ``show_compaction``, and in Hudi 1.1.1 ``show_cleans`` /
``show_clean_plans`` (Hudi 0.15 has neither), each compared with the instants and files our timeline holds.
A procedure names a catalog table, and Hudi 0.15's ``CREATE TABLE ... LOCATION`` rewrites
``hoodie.properties``, so they run on a copy. Every Java load checks ``hoodie.properties`` and its checksum
(``HoodieTableConfig``).

Hudi-side read options: only ``hoodie.datasource.query.type``, the incremental begin/end instants and
``as.of.instant``."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest

from hoodie_datasource import HoodieTable, fault_points
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.timeline.commit_metadata import write_stats_of
from hoodie_datasource.timeline.instant import COMPACTION, Instant, State
from tests.faults.harness import run_writer
from tests.hudi_oracle import HUDI_0_15, HudiOracle, HudiOracleError, assert_same_table, by_key
from tests.hudi_oracle.test_hudi_reads_ours import rows

pytestmark = pytest.mark.hudi_oracle

TABLE_TYPES = ["COPY_ON_WRITE", "MERGE_ON_READ"]
OPTIONS = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "city"}
SERVICES = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1"}
COMPACT = {"hoodie.compact.inline.max.delta.commits": "1"}
INCREMENTAL = "hoodie.datasource.query.type"


class InjectedFault(RuntimeError):
    """What the armed fault points raise in this module's failed write."""


def fail(point: str, **context: object) -> None:
    raise InjectedFault(point)


def options(table_type: str, **extra: str) -> dict:
    return {**OPTIONS, "hoodie.datasource.write.table.type": table_type, **extra}


def incremental(begin: str, end: str | None = None) -> tuple[dict, ReadConfig]:
    """The incremental read (begin, end] in Hudi's options and in ours."""
    java = {INCREMENTAL: "incremental", "hoodie.datasource.read.begin.instanttime": begin}
    if end:
        java["hoodie.datasource.read.end.instanttime"] = end
    return java, ReadConfig(query_type="incremental", begin_instant=begin, end_instant=end)


def assert_hudi_reads_as_we_do(hudi: HudiOracle, path: str, table_type: str, as_of: list[str],
                               windows: list[tuple[str, str | None]]) -> pa.Table:
    """Snapshot, read-optimized (MOR), time travel as of each of ``as_of``, incremental over each window;
    Java's snapshot."""
    java = hudi.read(path)
    assert_same_table(java, read_table(path))
    if table_type == "MERGE_ON_READ":
        assert_same_table(hudi.read(path, {INCREMENTAL: "read_optimized"}),
                          read_table(path, ReadConfig(query_type="read_optimized")))
    for instant in as_of:
        assert_same_table(hudi.read(path, {"as.of.instant": instant}), read_table(path, ReadConfig(as_of_instant=instant)))
    for begin, end in windows:
        java_options, ours = incremental(begin, end)
        assert_same_table(hudi.read(path, java_options), read_table(path, ours))
    return java


# --------------------------------------------------------------------------------------------------
# deletes and schema evolution

def soft_deleted(ids: list[str], ts: int, cities: list[str]) -> pa.Table:
    """Hudi's soft delete: key, partition and ordering value kept, every other field null."""
    n = len(ids)
    return pa.table({"id": pa.array(ids, pa.string()), "ts": pa.array([ts] * n, pa.int64()),
                     "city": pa.array(cities, pa.string()), "fare": pa.nulls(n, pa.float64()),
                     "seats": pa.nulls(n, pa.int32()), "paid": pa.nulls(n, pa.bool_())})


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_hudi_reads_our_soft_and_hard_deletes(hudi, tmp_path, table_type):
    path = str(tmp_path / "trips")
    opts = options(table_type)
    t1 = write_local(path, rows(["a", "b", "c", "e"], [1] * 4, ["sf", "nyc", "sf", "nyc"], [1.0, 2.0, 3.0, 4.0]), opts)
    t2 = write_local(path, soft_deleted(["a", "b"], 2, ["sf", "nyc"]), opts)
    flagged = rows(["c", "f"], [3, 3], ["sf", "la"], [3.5, 6.0]).append_column(
        "_hoodie_is_deleted", pa.array([True, False]))
    t3 = write_local(path, flagged, opts)
    write_local(path, rows(["e"], [4], ["nyc"], [0.0]), {**opts, "hoodie.datasource.write.operation": "delete"})
    # as of the soft delete (before _hoodie_is_deleted was a column) and of the flagged delete; incrementally
    # over all three deletes
    java = assert_hudi_reads_as_we_do(hudi, path, table_type, [t2, t3], [(t1, None)])
    got = {r["id"]: (r["ts"], r["fare"], r["seats"], r["paid"], r["_hoodie_is_deleted"]) for r in java.to_pylist()}
    assert got == {"a": (2, None, None, None, None), "b": (2, None, None, None, None), "f": (3, 6.0, 1, True, False)}


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_hudi_reads_our_widened_and_added_columns(hudi, tmp_path, table_type):
    path = str(tmp_path / "trips")
    opts = options(table_type)

    def batch(ids, ts, cities, n_type, f_type, m_type, **added):
        k = len(ids)
        return pa.table({"id": ids, "ts": pa.array([ts] * k, pa.int64()), "city": cities,
                         "n": pa.array([ts * 2**33 if n_type == pa.int64() else ts] * k, n_type),
                         "f": pa.array([ts + 0.25] * k, f_type), "m": pa.array([ts] * k, m_type),
                         **{name: pa.array(values, pa.string()) for name, values in added.items()}})

    t1 = write_local(path, batch(["a", "b", "c"], 1, ["sf", "sf", "nyc"], pa.int32(), pa.float32(), pa.int32()), opts)
    t2 = write_local(path, batch(["a"], 2, ["sf"], pa.int64(), pa.float64(), pa.float64()), opts)
    if table_type == "MERGE_ON_READ":  # the widened values went into a log file over t1's base file
        assert [p.name for p in (Path(path) / "sf").glob(".*.log.*")]
    write_local(path, batch(["b", "d"], 3, ["sf", "la"], pa.int64(), pa.float64(), pa.float64(),
                                 added=["b3", "d3"]), opts)
    # as of the narrow schema and of the widened one; the widening write alone, in the latest schema
    java = assert_hudi_reads_as_we_do(hudi, path, table_type, [t1, t2], [(t1, t2)])
    assert {f.name: str(f.type) for f in java.schema if f.name in ("n", "f", "m", "added")} == {
        "n": "int64", "f": "double", "m": "double", "added": "string"}
    got = {r["id"]: (r["n"], r["f"], r["m"], r["added"]) for r in java.to_pylist()}
    assert got == {"a": (2 * 2**33, 2.25, 2.0, None), "b": (3 * 2**33, 3.25, 3.0, "b3"), "c": (1, 1.25, 1.0, None),
                   "d": (3 * 2**33, 3.25, 3.0, "d3")}


# --------------------------------------------------------------------------------------------------
# compaction, clean, rollback, archival

@dataclass(frozen=True)
class ServicedTable:
    path: str
    table_type: str
    writes: list[str]  # the completed writes, oldest first
    failed: str  # the write that failed and was rolled back
    failed_files: list[str]  # what it had written, by name
    compactions: list[str]


def _fail_a_write_and_its_rollback(path: str, opts: dict) -> tuple[str, list[str]]:
    """A COW upsert that fails after writing its base file; the rollback it begins fails too, after its
    first deletion (fault points ``after_data_file_written`` and ``mid_rollback``): left pending for the
    next write. Its instant and the files it wrote."""
    hooks = ",".join(f"{point}={__name__}:fail" for point in (fault_points.AFTER_DATA_FILE_WRITTEN,
                                                              fault_points.MID_ROLLBACK))
    os.environ[fault_points.ENV_VAR] = hooks
    fault_points._hooks.cache_clear()
    try:
        with pytest.raises(InjectedFault):
            write_local(path, rows(["a"], [9], ["sf"], [9.0]), opts)
    finally:
        del os.environ[fault_points.ENV_VAR]
        fault_points._hooks.cache_clear()
    timeline = HoodieTable(path).timeline()
    rollback = next(i for i in timeline.pending() if i.action == "rollback")
    plan = timeline.read_plan(rollback.with_state(State.REQUESTED))
    return plan["instantToRollback"]["commitTime"], [f for r in plan["RollbackRequests"] for f in r["filesToBeDeleted"]]


def log_files(path: str) -> set[str]:
    return {p.name for p in Path(path).rglob(".*.log.*") if ".hoodie" not in p.parts}


def _kill_a_log_append(path: str, opts: dict) -> tuple[str, list[str]]:
    """A MOR upsert of stored keys killed (SIGKILL, its own process) once its log file is written, then rolled
    back by ``HoodieTable.rollback``. Its instant and the log files it wrote."""
    before = log_files(path)
    spec = {"op": "upsert", "path": path, "options": opts, "rows": rows(["a", "c"], [9, 9], ["sf", "sf"],
                                                                     [9.0, 9.0]).to_pydict()}
    outcome = run_writer(spec, fault_points.AFTER_DATA_FILE_WRITTEN, "kill")
    assert outcome.returncode < 0, outcome.stderr[-2000:]
    pending = HoodieTable(path).timeline().pending()
    assert [i.action for i in pending] == ["deltacommit"]
    appended = sorted(log_files(path) - before)
    assert appended, "the killed write appended no log file"
    assert HoodieTable(path).rollback(pending[0].timestamp) == [pending[0].timestamp]
    assert not log_files(path) & set(appended)
    return pending[0].timestamp, appended


def write_serviced_table(path: str, table_type: str) -> ServicedTable:
    opts = options(table_type, **SERVICES)
    writes, compactions = [], []
    writes.append(write_local(path, rows(["a", "b", "c"], [1] * 3, ["sf", "nyc", "sf"], [1.0, 2.0, 3.0]), opts))
    writes.append(write_local(path, rows(["a", "n2"], [2, 2], ["sf", "nyc"], [2.0, 2.0]), opts))
    if table_type == "MERGE_ON_READ":
        compactions += HoodieTable(path).compact(**COMPACT)
    writes.append(write_local(path, rows(["b"], [3], ["nyc"], [3.0]), opts))
    if table_type == "MERGE_ON_READ":
        failed, files = _kill_a_log_append(path, opts)
    else:
        failed, files = _fail_a_write_and_its_rollback(path, opts)
    for ts in (4, 5, 6):
        writes.append(write_local(path, rows(["c", f"n{ts}"], [ts, ts], ["sf", "la"], [float(ts)] * 2), opts))
    if table_type == "MERGE_ON_READ":
        compactions += HoodieTable(path).compact(**COMPACT)
    writes.append(write_local(path, rows(["a"], [7], ["sf"], [7.0]), opts))
    return ServicedTable(path, table_type, writes, failed, files, compactions)


@pytest.fixture(scope="module")
def serviced(hudi, tmp_path_factory) -> dict[str, ServicedTable]:
    root = tmp_path_factory.mktemp(f"serviced-{hudi.version}")
    return {t: write_serviced_table(str(root / t), t) for t in TABLE_TYPES}


def active_and_archived(path: str) -> tuple[list, set[str]]:
    timeline = HoodieTable(path).timeline()
    return [i for i in timeline.instants if i.timestamp not in timeline.archived], set(timeline.archived)


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_hudi_reads_our_serviced_table(hudi, serviced, table_type):
    """After our compactions, cleans, rollback and archival: what Java reads, as of the instants the cleaner
    retained and incrementally over the active timeline."""
    table = serviced[table_type]
    active, archived = active_and_archived(table.path)
    assert set(table.writes[:2]) <= archived and table.writes[-1] not in archived
    timeline = HoodieTable(table.path).timeline()
    last_clean = [i for i in timeline.instants if i.action == "clean"][-1]
    retained = timeline.read_metadata(last_clean)["earliestCommitToRetain"]
    first_active = next(i.timestamp for i in active if i.is_completed and i.action in ("commit", "deltacommit"))
    java = assert_hudi_reads_as_we_do(hudi, table.path, table_type, [retained], [(first_active, table.writes[-2])])
    assert sorted(zip(java.column("id").to_pylist(), java.column("ts").to_pylist())) == [
        ("a", 7), ("b", 3), ("c", 6), ("n2", 2), ("n4", 4), ("n5", 5), ("n6", 6)]


class JavaLeavesRowsOut(AssertionError):
    """Java's rows are some of ours, value for value, but not all of them."""


def assert_java_leaves_out_only(java: pa.Table, ours: pa.Table) -> None:
    """Every row Java returns is one of ours, exactly; raise ``JavaLeavesRowsOut`` when it returns fewer."""
    java_rows, our_rows = by_key(java), by_key(ours)
    assert [r for r in java_rows if r not in our_rows] == [], "Java returns a row we do not"
    if len(java_rows) < len(our_rows):
        missing = sorted((r["_hoodie_commit_time"], r["_hoodie_record_key"]) for r in our_rows if r not in java_rows)
        raise JavaLeavesRowsOut(f"Java leaves out {missing}")
    assert_same_table(java, ours)


ACTIVE_TIMELINE_ONLY = (
    "Hudi's incremental relations find the commits of the range, and the files they wrote, on the active timeline "
    "only (HoodieTimeline.isBeforeTimelineStarts: a begin instant before it is 'archived'); rows of file groups "
    "that only archived commits wrote are left out without an error, and Hudi 0.15's COW relation also drops every "
    "row committed before the first active commit of the range (IncrementalRelation.buildScan, "
    "IncrementalRelation.scala:284 in 0.15.0; MergeOnReadIncrementalRelation in 0.15.0, IncrementalRelationV1 and "
    "MergeOnReadIncrementalRelationV1 in 1.1.1). Hudi's remedy is its full-table-scan fallback (next test); we read "
    "the archive log")


@pytest.mark.xfail(raises=JavaLeavesRowsOut, strict=True, reason=ACTIVE_TIMELINE_ONLY)
@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_hudi_reads_incrementally_across_our_archive(hudi, serviced, table_type):
    """An incremental read from the first write on, most of whose commits are in our archive log."""
    table = serviced[table_type]
    java_options, ours = incremental(table.writes[0])
    assert_java_leaves_out_only(hudi.read(table.path, java_options), read_table(table.path, ours))


FALLBACK_MOR_0_15 = (
    "Hudi 0.15's MOR full-table-scan fallback (MergeOnReadIncrementalRelation.collectFileSplits, "
    "MergeOnReadIncrementalRelation.scala:102-103 in 0.15.0, through HoodieBaseRelation.listLatestFileSlices) "
    "returns key a as the latest compaction's base file holds it (ts 2, commit time of the write before), not as "
    "the log file written after that compaction updates it (ts 7): its snapshot read of the same table merges that "
    "log, and so do Hudi 1.1's fallback and ours")


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_hudi_reads_incrementally_across_our_archive_with_its_fallback(hudi, serviced, table_type, request):
    """The same read with hoodie.datasource.read.incr.fallback.fulltablescan.enable=true: Java scans the latest
    snapshot for the rows committed in the range, which is what we read through the archive log."""
    if hudi.version == HUDI_0_15 and table_type == "MERGE_ON_READ":
        request.applymarker(pytest.mark.xfail(strict=True, reason=FALLBACK_MOR_0_15))
    table = serviced[table_type]
    java_options, ours = incremental(table.writes[0])
    java = hudi.read(table.path, {**java_options, "hoodie.datasource.read.incr.fallback.fulltablescan.enable": "true"})
    assert {"n2", "b", "n4"} <= set(java.column("id").to_pylist())  # written by archived commits, still there
    assert_same_table(java, read_table(table.path, ours))


def test_java_checks_the_hoodie_properties_we_write(hudi, serviced, tmp_path):
    """Every Java load validates ``hoodie.properties`` and its ``hoodie.table.checksum`` (``HoodieTableConfig``):
    it reads our file after all our services, and refuses the same table once the checksum is off by one."""
    table = serviced["COPY_ON_WRITE"]
    copy = tmp_path / "trips"
    shutil.copytree(table.path, copy)
    properties = copy / ".hoodie" / "hoodie.properties"
    lines = properties.read_text().splitlines()
    checksum = next(line for line in lines if line.startswith("hoodie.table.checksum="))
    assert hudi.read(str(copy)).num_rows == 7
    wrong = f"hoodie.table.checksum={int(checksum.split('=')[1]) + 1}"
    properties.write_text("\n".join(wrong if line == checksum else line for line in lines) + "\n")
    with pytest.raises(HudiOracleError, match="hoodie.properties file seems invalid"):
        hudi.read(str(copy))


def register_copy(hudi: HudiOracle, table: ServicedTable) -> str:
    """A catalog table of Java's session over a copy of ``table`` (a procedure names a table, and Hudi 0.15's
    CREATE TABLE rewrites hoodie.properties); its name."""
    name = f"serviced_{table.table_type.lower()}"
    copy = hudi.workdir / "procedure-tables" / name
    shutil.copytree(table.path, copy)
    hudi.sql(f"CREATE TABLE {name} USING hudi LOCATION '{copy}'")
    return name


def call(hudi: HudiOracle, procedure: str, **args: object) -> list[dict]:
    rendered = ", ".join(f"{k} => {v!r}" if isinstance(v, str) else f"{k} => {v}" for k, v in args.items())
    return hudi.sql(f"CALL {procedure}({rendered})", result=True).to_pylist()


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_hudi_procedures_on_our_timeline(hudi, serviced, table_type):
    table = serviced[table_type]
    timeline = HoodieTable(table.path).timeline()
    active, archived = active_and_archived(table.path)
    name = register_copy(hudi, table)

    # show_commits: the completed writes (compactions too) of the active timeline, newest first
    writes = [i for i in active if i.is_completed and i.action in ("commit", "deltacommit")]
    commits = call(hudi, "show_commits", table=name, limit=100)
    assert [(c["commit_time"], c["action"]) for c in commits] == [(i.timestamp, i.action) for i in reversed(writes)]
    for commit, instant in zip(commits, reversed(writes)):
        stats = list(write_stats_of(timeline.read_metadata(instant)))
        assert commit["total_records_written"] == sum(s["numWrites"] for s in stats)
        assert commit["total_update_records_written"] == sum(s["numUpdateWrites"] for s in stats)

    # show_archived_commits: our archive log (its default window ends a day ago: the whole range is asked)
    archived_writes = sorted(t for t in archived if timeline.find(t).action in ("commit", "deltacommit"))
    shown = call(hudi, "show_archived_commits", table=name, limit=100, start_ts="000", end_ts="99999999999999999")
    assert sorted(c["commit_time"] for c in shown) == archived_writes and len(archived_writes) >= 2
    for commit in shown:
        stats = list(write_stats_of(timeline.read_metadata(timeline.find(commit["commit_time"]))))
        assert commit["total_records_written"] == sum(s["numWrites"] for s in stats)

    # show_rollbacks / show_rollback_detail: our rollback of the failed write and the files it deleted
    rollback = next(i.timestamp for i in active if i.action == "rollback")
    rollbacks = call(hudi, "show_rollbacks", table=name, limit=100)
    assert [(r["instant"], r["rollback_instant"], r["total_files_deleted"]) for r in rollbacks] == [
        (rollback, table.failed, len(table.failed_files))]
    detail = call(hudi, "show_rollback_detail", table=name, instant_time=rollback)
    assert sorted((d["deleted_file"], d["succeeded"]) for d in detail) == [(f, True) for f in sorted(table.failed_files)]

    if table_type == "MERGE_ON_READ":  # show_compaction: the compactions on the active timeline and their plans
        expected = [(t, len(timeline.read_plan(Instant(t, COMPACTION, State.REQUESTED))["operations"]), "COMPLETED")
                    for t in table.compactions if t not in archived]
        shown = call(hudi, "show_compaction", table=name, limit=100)
        assert [(c["timestamp"], c["operation_size"], c["state"]) for c in shown] == sorted(expected, reverse=True)
        assert expected

    if hudi.version != HUDI_0_15:  # show_cleans / show_clean_plans came with Hudi 1.1
        cleans = [i for i in active if i.action == "clean"]
        shown = call(hudi, "show_cleans", table=name, limit=100)
        assert sorted((c["clean_time"], c["total_files_deleted"], c["earliest_commit_to_retain"]) for c in shown) == [
            (i.timestamp, timeline.read_metadata(i)["totalFilesDeleted"],
             timeline.read_metadata(i)["earliestCommitToRetain"]) for i in cleans]
        plans = call(hudi, "show_clean_plans", table=name, limit=100)
        assert sorted((p["plan_time"], p["state"], p["policy"]) for p in plans) == [
            (i.timestamp, "COMPLETED", "KEEP_LATEST_COMMITS") for i in cleans]
        assert cleans
