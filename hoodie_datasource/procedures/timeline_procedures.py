"""Hudi's procedures over a table's timeline: what was committed (``show_commits``,
``show_commits_metadata``), the table services (``run_clean``, ``run_compaction``, ``show_compaction``)
and ``rollback_to_instant``, with Hudi's argument names and result columns
(``hudi-spark-datasource/.../command/procedures``).

They read the timeline and run the services through the ``HoodieTable`` facade, so a procedure does
exactly what the same service does when called from Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from hoodie_datasource.config.property import parse_bool, parse_int
from hoodie_datasource.errors import HoodieConfigError, TimelineError
from hoodie_datasource.hoodie_table import HoodieTable
from hoodie_datasource.procedures.procedure import (
    LIMIT,
    TABLE,
    Parameter,
    Procedure,
    Rows,
    parse_options,
    refuse_unsupported,
)
from hoodie_datasource.timeline.instant import CLEAN, COMPACTION, Instant, State
from hoodie_datasource.timeline.timeline import Timeline


def _stats(metadata: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for stats in (metadata.get("partitionToWriteStats") or {}).values() for s in stats or ()]


def _completed_commits(timeline: Timeline, limit: int) -> list:
    """Completed writes and compactions of the active timeline, newest first (Hudi's ``getCommitsTimeline``
    of the active timeline; the archived ones are ``show_archived_commits``')."""
    active = [i for i in timeline.completed() if i.timestamp not in timeline.archived]
    return sorted(active, key=lambda i: i.timestamp, reverse=True)[:limit]


def commit_totals(metadata: dict[str, Any]) -> tuple[int, ...]:
    """A commit's totals as Hudi's ``HoodieCommitMetadata.fetchTotal*`` add them up: bytes written, files added
    (no previous commit), files updated, partitions written, records written, updates written, errors."""
    stats = _stats(metadata)
    return (sum(s.get("totalWriteBytes") or 0 for s in stats),
            sum(1 for s in stats if str(s.get("prevCommit")) == "null"),
            sum(1 for s in stats if str(s.get("prevCommit")) != "null"),
            len(metadata.get("partitionToWriteStats") or {}),
            sum(s.get("numWrites") or 0 for s in stats),
            sum(s.get("numUpdateWrites") or 0 for s in stats),
            sum(s.get("totalWriteErrors") or 0 for s in stats))


def _show_commits(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    timeline = table.timeline()
    return [(i.timestamp, i.completion, i.action, *commit_totals(timeline.read_metadata(i)))
            for i in _completed_commits(timeline, args["limit"])]


def _show_commits_metadata(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    timeline = table.timeline()
    rows = []
    for instant in _completed_commits(timeline, len(timeline.instants)):
        for s in _stats(timeline.read_metadata(instant)):
            rows.append((
                instant.timestamp, instant.completion, instant.action, s.get("partitionPath"), s.get("fileId"),
                s.get("prevCommit"), *(s.get(k) or 0 for k in (
                    "numWrites", "numInserts", "numDeletes", "numUpdateWrites", "totalWriteErrors", "totalLogBlocks",
                    "totalCorruptLogBlock", "totalRollbackBlocks", "totalLogRecords", "totalUpdatedRecordsCompacted",
                    "totalWriteBytes")),
            ))
    return rows[:args["limit"]]


def _run_clean(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    refuse_unsupported(table, "run_clean", args, trigger_strategy=None, trigger_max_commits=None)
    options = {**conf, **parse_options(args["options"])}
    for key, arg in (("hoodie.cleaner.policy", "clean_policy"), ("hoodie.cleaner.commits.retained", "retain_commits"),
                     ("hoodie.cleaner.fileversions.retained", "file_versions_retained"),
                     ("hoodie.cleaner.hours.retained", "hours_retained")):
        if args[arg] is not None:
            options[key] = str(args[arg])
    instant_time = table.clean(**options)
    if instant_time is None:
        return []
    timeline = table.timeline()
    clean = next(i for i in timeline.instants if i.timestamp == instant_time and i.action == CLEAN and i.is_completed)
    meta = timeline.read_metadata(clean)
    return [(meta.get("startCleanTime"), meta.get("timeTakenInMillis"), meta.get("totalFilesDeleted"),
             meta.get("earliestCommitToRetain"), "{}", meta.get("version"))]


def _compactions(timeline: Timeline, instants: Sequence[str] | None = None) -> Rows:
    """(timestamp, operation_size, state) of the compactions (only ``instants`` when given), newest first."""
    latest: dict[str, Instant] = {}
    order = list(State)
    for instant in timeline.instants:
        if timeline.is_compaction(instant) and (instants is None or instant.timestamp in instants):
            seen = latest.get(instant.timestamp)
            if seen is None or order.index(instant.state) > order.index(seen.state):
                latest[instant.timestamp] = instant
    rows = []
    for timestamp in sorted(latest, reverse=True):
        plan = timeline.read_plan(Instant(timestamp, COMPACTION, State.REQUESTED))
        rows.append((timestamp, len(plan.get("operations") or ()), latest[timestamp].state.name))
    return rows


def _run_compaction(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    """Hudi's ops (``HoodieProcedureUtils``): ``schedule`` a plan; ``execute`` the pending plans (or
    ``instants`` / ``timestamp``); ``scheduleAndExecute`` (``run``): schedule one and execute it, or
    the pending plans when there is nothing to schedule. Returns the plans' rows, newest first."""
    op = args["op"].lower()
    if op not in ("schedule", "execute", "run", "scheduleandexecute"):
        raise HoodieConfigError(f"CALL run_compaction: op {args['op']!r} is not one of schedule, execute, "
                                "scheduleAndExecute, run")
    options = {**conf, **parse_options(args["options"])}
    pending = sorted(i.timestamp for i in table.timeline().pending() if i.action == COMPACTION)
    specific = str(args["timestamp"]) if args["timestamp"] is not None else args["instants"]
    if specific:
        chosen = sorted(t.strip() for t in specific.split(",") if t.strip())
        missing = [t for t in chosen if t not in pending]
        if missing:
            raise HoodieConfigError(f"CALL run_compaction: no pending compaction {', '.join(missing)}; "
                                    f"pending: {', '.join(pending) or 'none'}")
        op = "execute"
    else:
        chosen = pending[:args["limit"]] if args["limit"] is not None else pending
    if op != "execute":
        scheduled = table.schedule_compaction(**options)
        if scheduled:
            chosen = [scheduled]
    if op != "schedule":
        for instant_time in chosen:
            table.run_compaction(instant_time, **options)
    return _compactions(table.timeline(), chosen)


def _show_compaction(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    return _compactions(table.timeline())[:args["limit"]]


def _rollback_to_instant(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    """Hudi's RollbackToInstantTimeProcedure: the instant must be a completed one, and the rollback refuses any
    but the latest completed write (``rollback_completed``). A pending instant may be a running write: it is
    rolled back by the next writer once its heartbeat expires, never here."""
    instant_time = args["instant_time"]
    instant = table.timeline().find(instant_time)
    if instant is None:
        raise TimelineError(f"CALL rollback_to_instant: no instant {instant_time} on the timeline of {table.path}")
    if not instant.is_completed:
        raise TimelineError(
            f"CALL rollback_to_instant: instant {instant_time} of {table.path} is {instant.state.value}, not "
            "completed; a pending write is rolled back by the next write once its heartbeat expires")
    return [(bool(table.rollback(instant_time)),)]


_COMMITS = pa.schema([
    ("commit_time", pa.string()), ("state_transition_time", pa.string()), ("action", pa.string()),
    ("total_bytes_written", pa.int64()), ("total_files_added", pa.int64()), ("total_files_updated", pa.int64()),
    ("total_partitions_written", pa.int64()), ("total_records_written", pa.int64()),
    ("total_update_records_written", pa.int64()), ("total_errors", pa.int64()),
])
_COMMITS_METADATA = pa.schema(
    [("commit_time", pa.string()), ("state_transition_time", pa.string()), ("action", pa.string()),
     ("partition", pa.string()), ("file_id", pa.string()), ("previous_commit", pa.string())]
    + [(name, pa.int64()) for name in (
        "num_writes", "num_inserts", "num_deletes", "num_update_writes", "total_errors", "total_log_blocks",
        "total_corrupt_log_blocks", "total_rollback_blocks", "total_log_records", "total_updated_records_compacted",
        "total_bytes_written")])
_COMPACTIONS = pa.schema([("timestamp", pa.string()), ("operation_size", pa.int32()), ("state", pa.string())])

TIMELINE_PROCEDURES = (
    Procedure("show_commits", (TABLE, LIMIT), _COMMITS, _show_commits,
              doc="The latest completed commits (writes and compactions) of the active timeline, newest first, with their "
                  "write counts; `show_archived_commits` lists the archived ones."),
    Procedure("show_commits_metadata", (TABLE, LIMIT), _COMMITS_METADATA, _show_commits_metadata,
              doc="One row per file written by the latest completed commits: its partition, file id and counts."),
    Procedure("run_clean", (
        TABLE, Parameter("skip_locking", default=False, parse=parse_bool),
        Parameter("schedule_in_line", default=True, parse=parse_bool), Parameter("clean_policy"),
        Parameter("retain_commits", parse=parse_int), Parameter("hours_retained", parse=parse_int),
        Parameter("file_versions_retained", parse=parse_int), Parameter("trigger_strategy"),
        Parameter("trigger_max_commits", parse=parse_int), Parameter("options"),
    ), pa.schema([("start_clean_time", pa.string()), ("time_taken_in_millis", pa.int64()),
                  ("total_files_deleted", pa.int32()), ("earliest_commit_to_retain", pa.string()),
                  ("bootstrap_part_metadata", pa.string()), ("version", pa.int32())]), _run_clean,
              doc="Clean now with the given policy (`clean_policy`, `retain_commits`, `file_versions_retained`, "
                  "`hours_retained`, or `options`); the trigger arguments are refused."),
    Procedure("run_compaction", (
        Parameter("op", required=True), Parameter("table"), Parameter("path"), Parameter("timestamp", parse=parse_int),
        Parameter("options"), Parameter("instants"), Parameter("limit", parse=parse_int),
    ), _COMPACTIONS, _run_compaction,
              doc="MERGE_ON_READ compaction: `op => 'schedule'` plans one, `'execute'` runs the pending plans (or "
                  "`instants`), `'scheduleAndExecute'` (`'run'`) does both. Returns the plans."),
    Procedure("show_compaction", (Parameter("table"), Parameter("path"), Parameter("limit", default=20, parse=parse_int)),
              _COMPACTIONS, _show_compaction, doc="The compactions on the timeline, newest first, with their state."),
    Procedure("rollback_to_instant", (TABLE, Parameter("instant_time", required=True)),
              pa.schema([("rollback_result", pa.bool_())]), _rollback_to_instant,
              doc="Roll back the latest completed write, named by `instant_time`; older instants are refused."),
)
