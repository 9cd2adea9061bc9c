"""Apache Hudi's SQL procedures (``CALL show_commits(table => 't', limit => 10)``), with Hudi's names,
argument names and result columns (``hudi-spark-datasource/.../command/procedures``), over the table
services of ``HoodieTable``.

A procedure takes its arguments by name or position as strings (SQL literals) and returns an Arrow table
of its result columns. The jvm-shim resolves ``table`` to the table's location (``path``); everything
else, the argument checks included, is here, so an unknown procedure or argument gets a clear error
listing the valid ones.
"""

from __future__ import annotations

import fnmatch
import glob
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from hoodie_datasource.config.property import parse_bool, parse_int
from hoodie_datasource.errors import HoodieConfigError, TimelineError
from hoodie_datasource.table.file_group import LogFile
from hoodie_datasource.table.fs_view import FileSystemView
from hoodie_datasource.table.hoodie_table import HoodieTable
from hoodie_datasource.timeline.instant import CLEAN, COMPACTION, WRITE_ACTIONS, Instant, State
from hoodie_datasource.timeline.timeline import Timeline

Rows = list[tuple[Any, ...]]


@dataclass(frozen=True)
class Parameter:
    name: str
    required: bool = False
    default: Any = None
    parse: Callable[[str, str], Any] = lambda _key, value: value


@dataclass(frozen=True)
class Procedure:
    name: str
    parameters: tuple[Parameter, ...]
    output: pa.Schema
    run: Callable[[HoodieTable, dict[str, Any], dict[str, str]], Rows]

    def bind(self, named: Mapping[str, str], positional: Sequence[str]) -> dict[str, Any]:
        """The arguments by parameter name, parsed, with defaults; a clear error for anything else."""
        valid = ", ".join(p.name for p in self.parameters)
        if len(positional) > len(self.parameters):
            raise HoodieConfigError(f"CALL {self.name}: takes at most {len(self.parameters)} arguments ({valid}), "
                                    f"got {len(positional)}")
        given = dict(zip((p.name for p in self.parameters), positional))
        for name, value in named.items():
            if name not in {p.name for p in self.parameters}:
                raise HoodieConfigError(f"CALL {self.name}: unknown argument {name!r}; its arguments are: {valid}")
            if name in given:
                raise HoodieConfigError(f"CALL {self.name}: argument {name!r} given twice")
            given[name] = value
        args = {}
        for p in self.parameters:
            if p.name in given:
                args[p.name] = p.parse(p.name, given[p.name])
            elif p.required:
                raise HoodieConfigError(f"CALL {self.name}: argument {p.name!r} is required; its arguments are: {valid}")
            else:
                args[p.name] = p.default
        return args


def _options(text: str | None) -> dict[str, str]:
    """Hudi's ``options => 'k1=v1,k2=v2'`` (``HoodieCLIUtils.extractOptions``)."""
    pairs = [item.split("=", 1) for item in (text or "").split(",") if item.strip()]
    bad = [item for item in pairs if len(item) != 2]
    if bad:
        raise HoodieConfigError(f"options must be 'key=value' pairs separated by commas, got {text!r}")
    return {k.strip(): v.strip() for k, v in pairs}


def _stats(metadata: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for stats in (metadata.get("partitionToWriteStats") or {}).values() for s in stats or ()]


def _completed_commits(timeline: Timeline, limit: int) -> list:
    """Completed writes and compactions, newest first (Hudi's commits timeline)."""
    return sorted(timeline.completed(), key=lambda i: i.timestamp, reverse=True)[:limit]


def _show_commits(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    timeline = table.timeline()
    rows = []
    for instant in _completed_commits(timeline, args["limit"]):
        metadata = timeline.read_metadata(instant)
        stats = _stats(metadata)
        rows.append((
            instant.timestamp, instant.completion, instant.action,
            sum(s.get("totalWriteBytes") or 0 for s in stats),
            sum(1 for s in stats if str(s.get("prevCommit")) == "null"),
            sum(1 for s in stats if str(s.get("prevCommit")) != "null"),
            len(metadata.get("partitionToWriteStats") or {}),
            sum(s.get("numWrites") or 0 for s in stats),
            sum(s.get("numUpdateWrites") or 0 for s in stats),
            sum(s.get("totalWriteErrors") or 0 for s in stats),
        ))
    return rows


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


def _refuse(table: HoodieTable, name: str, args: dict[str, Any], **supported: Any) -> None:
    """Arguments of Hudi's procedure supported only with these values (their defaults): any other value
    is an error, never silently ignored."""
    given = [arg for arg, value in supported.items() if args[arg] != value]
    if given:
        raise HoodieConfigError(f"CALL {name}: argument(s) {', '.join(given)} are not supported on {table.path}")


def _run_clean(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    _refuse(table, "run_clean", args, hours_retained=None, trigger_strategy=None, trigger_max_commits=None)
    options = {**conf, **_options(args["options"])}
    for key, arg in (("hoodie.cleaner.policy", "clean_policy"), ("hoodie.cleaner.commits.retained", "retain_commits"),
                     ("hoodie.cleaner.fileversions.retained", "file_versions_retained")):
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
    options = {**conf, **_options(args["options"])}
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
    instant_time = args["instant_time"]
    if table.timeline().find(instant_time) is None:
        raise TimelineError(f"CALL rollback_to_instant: no instant {instant_time} on the timeline of {table.path}")
    return [(bool(table.rollback(instant_time)),)]


_ALL_PARTITIONS = "ALL_PARTITIONS"


def _view_timeline(table: HoodieTable, args: dict[str, Any]) -> tuple[Timeline, set[str]]:
    """The timeline and the instants whose files the view shows (Hudi's ``buildFileSystemView``)."""
    timeline = table.timeline()
    visible = [i for i in timeline.instants if i.is_completed or args["include_in_flight"]]
    shown = {i.timestamp for i in visible if (i.action in WRITE_ACTIONS or i.action == COMPACTION)
             and not (args["exclude_compaction"] and timeline.is_compaction(i))}
    if args["max_instant"]:
        shown = {t for t in shown if t < args["max_instant"] or (args["include_max"] and t == args["max_instant"])}
    return timeline, shown


def _partitions(view: FileSystemView, pattern: str) -> list[str]:
    partitions = sorted(view.partitions or [])
    return partitions if pattern == _ALL_PARTITIONS else [p for p in partitions if fnmatch.fnmatch(p, pattern)]


def _log_names(logs: Sequence[LogFile]) -> str:
    return "[" + ",".join(log.name for log in logs) + "]"


def _show_fsview_all(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    timeline, shown = _view_timeline(table, args)
    view = FileSystemView(table.base_path, timeline)
    rows = []
    for group in view.file_groups(_partitions(view, args["path_regex"])):
        bases = sorted((b for b in group.base_files if b.instant_time in shown), key=lambda b: b.instant_time)
        logs = [log for log in group.log_files if log.instant_time in shown]
        starts = [b.instant_time for b in bases] or [min((log.instant_time for log in logs), default="")]
        for i, start in enumerate(starts):
            end = starts[i + 1] if i + 1 < len(starts) else None
            in_slice = sorted((log for log in logs if log.instant_time >= start and (end is None or log.instant_time < end)),
                              key=lambda log: (log.instant_time, log.version))
            base = bases[i] if bases else None
            rows.append((group.partition_path, group.file_id, start, _data_file(table, group.partition_path, base),
                         base.size if base else 0, len(in_slice), sum(log.size for log in in_slice), _log_names(in_slice)))
    return rows[:args["limit"]]


def _data_file(table: HoodieTable, partition: str, base: Any) -> str:
    return os.path.join(table.base_path, partition, base.name) if base else ""


def _show_fsview_latest(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    if args["path_regex"] != _ALL_PARTITIONS and args["partition_path"] != _ALL_PARTITIONS:
        raise HoodieConfigError("CALL show_fsview_latest: path_regex and partition_path cannot be used together")
    pattern = args["partition_path"] if args["path_regex"] == _ALL_PARTITIONS else args["path_regex"]
    _refuse(table, "show_fsview_latest", args, include_in_flight=False, exclude_compaction=False, merge=True)
    timeline = table.timeline()
    view = FileSystemView(table.base_path, timeline)
    completed = {i.timestamp for i in timeline.instants if i.is_completed}
    as_of = args["max_instant"] or None
    if as_of and not args["include_max"]:  # the view as of the last completed instant before max_instant
        as_of = max((t for t in completed if t < as_of), default="0")
    rows = []
    for s in view.latest_file_slices(as_of=as_of, partitions=_partitions(view, pattern)):
        base_size = s.base_file.size if s.base_file else 0
        # as Hudi names them: "scheduled" logs are those of completed delta commits, the others "unscheduled"
        scheduled = [log for log in s.log_files if log.instant_time in completed]
        unscheduled = [log for log in s.log_files if log.instant_time not in completed]
        sizes = sum(log.size for log in scheduled), sum(log.size for log in unscheduled)
        rows.append((s.partition_path, s.file_id, s.base_instant, _data_file(table, s.partition_path, s.base_file),
                     base_size, len(s.log_files), sum(log.size for log in s.log_files), *sizes,
                     *(size / base_size if base_size else -1.0 for size in sizes),
                     _log_names([log for log in s.log_files if log.instant_time == s.base_instant]),
                     _log_names([log for log in s.log_files if log.instant_time != s.base_instant])))
    return rows[:args["limit"]]


def _content_summary(path: str) -> tuple[int, int, int]:
    """(directories, files, bytes) under ``path``, itself included, as Hadoop's ``ContentSummary`` counts."""
    if not os.path.isdir(path):
        return 0, 1, os.path.getsize(path)
    dirs, files, size = 0, 0, 0
    for root, _, names in os.walk(path):
        dirs += 1
        files += len(names)
        size += sum(os.path.getsize(os.path.join(root, n)) for n in names)
    return dirs, files, size


def _human_size(size: int) -> str:
    for unit, scale in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if size >= scale:
            return f"{size / scale:.2f}{unit}"
    return f"{size}B"


def _show_fs_path_detail(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    """Hudi's ``show_fs_path_detail``: the size of ``path`` (a glob), or of each entry under it with
    ``is_sub``; local storage has no quotas (-1, as Hadoop reports none)."""
    base = table.base_path
    paths = sorted(os.path.join(base, n) for n in os.listdir(base)) if args["is_sub"] else sorted(glob.glob(base))
    rows = []
    for path in paths:
        dirs, files, size = _content_summary(path)
        rows.append((dirs, files, size, _human_size(size), path, size, -1, -1))
    rows.sort(key=lambda r: r[2] if args["sort"] else r[1], reverse=True)
    return rows[:args["limit"]]


_TABLE = Parameter("table", required=True)
_LIMIT = Parameter("limit", default=10, parse=parse_int)
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
_FSVIEW = (_TABLE, Parameter("max_instant", default=""), Parameter("include_max", default=False, parse=parse_bool),
           Parameter("include_in_flight", default=False, parse=parse_bool),
           Parameter("exclude_compaction", default=False, parse=parse_bool), _LIMIT,
           Parameter("path_regex", default=_ALL_PARTITIONS))
_SLICE = [("partition", pa.string()), ("file_id", pa.string()), ("base_instant", pa.string()), ("data_file", pa.string()),
          ("data_file_size", pa.int64()), ("num_delta_files", pa.int64()), ("total_delta_file_size", pa.int64())]
_COMPACTIONS = pa.schema([("timestamp", pa.string()), ("operation_size", pa.int32()), ("state", pa.string())])

PROCEDURES = {p.name: p for p in (
    Procedure("show_commits", (_TABLE, _LIMIT), _COMMITS, _show_commits),
    Procedure("show_commits_metadata", (_TABLE, _LIMIT), _COMMITS_METADATA, _show_commits_metadata),
    Procedure("run_clean", (
        _TABLE, Parameter("skip_locking", default=False, parse=parse_bool),
        Parameter("schedule_in_line", default=True, parse=parse_bool), Parameter("clean_policy"),
        Parameter("retain_commits", parse=parse_int), Parameter("hours_retained", parse=parse_int),
        Parameter("file_versions_retained", parse=parse_int), Parameter("trigger_strategy"),
        Parameter("trigger_max_commits", parse=parse_int), Parameter("options"),
    ), pa.schema([("start_clean_time", pa.string()), ("time_taken_in_millis", pa.int64()),
                  ("total_files_deleted", pa.int32()), ("earliest_commit_to_retain", pa.string()),
                  ("bootstrap_part_metadata", pa.string()), ("version", pa.int32())]), _run_clean),
    Procedure("run_compaction", (
        Parameter("op", required=True), Parameter("table"), Parameter("path"), Parameter("timestamp", parse=parse_int),
        Parameter("options"), Parameter("instants"), Parameter("limit", parse=parse_int),
    ), _COMPACTIONS, _run_compaction),
    Procedure("show_compaction", (Parameter("table"), Parameter("path"), Parameter("limit", default=20, parse=parse_int)),
              _COMPACTIONS, _show_compaction),
    Procedure("show_fsview_all", _FSVIEW, pa.schema(_SLICE + [("delta_files", pa.string())]), _show_fsview_all),
    Procedure("show_fsview_latest", (*_FSVIEW, Parameter("partition_path", default=_ALL_PARTITIONS),
                                     Parameter("merge", default=True, parse=parse_bool)),
              pa.schema(_SLICE + [("delta_size_compaction_scheduled", pa.int64()),
                                  ("delta_size_compaction_unscheduled", pa.int64()),
                                  ("delta_to_base_radio_compaction_scheduled", pa.float64()),
                                  ("delta_to_base_radio_compaction_unscheduled", pa.float64()),
                                  ("delta_files_compaction_scheduled", pa.string()),
                                  ("delta_files_compaction_unscheduled", pa.string())]), _show_fsview_latest),
    Procedure("show_fs_path_detail", (
        Parameter("path", required=True), Parameter("is_sub", default=False, parse=parse_bool),
        Parameter("sort", default=True, parse=parse_bool), Parameter("limit", default=100, parse=parse_int),
    ), pa.schema([("path_num", pa.int64()), ("file_num", pa.int64()), ("storage_size", pa.int64()),
                  ("storage_size(unit)", pa.string()), ("storage_path", pa.string()), ("space_consumed", pa.int64()),
                  ("quota", pa.int64()), ("space_quota", pa.int64())]), _show_fs_path_detail),
    Procedure("rollback_to_instant", (_TABLE, Parameter("instant_time", required=True)),
              pa.schema([("rollback_result", pa.bool_())]), _rollback_to_instant),
)}


def procedure(name: str) -> Procedure:
    found = PROCEDURES.get(name.lower())
    if found is None:
        raise HoodieConfigError(f"Unknown procedure {name!r}; the procedures are: {', '.join(sorted(PROCEDURES))}")
    return found


def call(name: str, path: str | None, named: Mapping[str, str], positional: Sequence[str],
         conf: Mapping[str, str] | None = None) -> pa.Table:
    """Run procedure ``name`` on the table at ``path`` (the ``table`` or ``path`` argument, resolved).
    ``conf``: the session's ``hoodie.*`` options, which the procedure's ``options`` and arguments override
    (Hudi's ``HoodieCLIUtils.createHoodieWriteClient``: session conf < specified conf)."""
    proc = procedure(name)
    args = proc.bind(named, positional)
    if not path:
        raise HoodieConfigError(f"CALL {proc.name}: name the table with table => '<name>' (or path => '<path>')")
    rows = proc.run(HoodieTable(path), args, dict(conf or {}))
    return pa.Table.from_pylist([dict(zip(proc.output.names, row)) for row in rows], schema=proc.output)
