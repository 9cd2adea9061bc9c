"""Hudi's procedures over a table's files: its file system view (``show_fsview_all``,
``show_fsview_latest``: file groups and slices as of an instant) and ``show_fs_path_detail`` (how much
is stored under a path), with Hudi's argument names and result columns
(``hudi-spark-datasource/.../command/procedures``).

The view comes from ``FileSystemView`` and the path sizes from the storage layer, so these procedures
list nothing themselves.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from hoodie_datasource.config.property import parse_bool, parse_int
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.hoodie_table import HoodieTable
from hoodie_datasource.procedures.procedure import LIMIT, TABLE, Parameter, Procedure, Rows, refuse_unsupported
from hoodie_datasource.storage.local import local_path
from hoodie_datasource.storage.storage import FileInfo, Storage, join
from hoodie_datasource.storage.uri import parse_table_uri, scheme_of
from hoodie_datasource.table.file_group import BaseFile, LogFile
from hoodie_datasource.table.fs_view import FileSystemView
from hoodie_datasource.timeline.instant import COMPACTION, WRITE_ACTIONS
from hoodie_datasource.timeline.timeline import Timeline

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


def _data_file(table: HoodieTable, partition: str, base: Any) -> str:
    return table.storage.uri_of(join(partition, base.name)) if base else ""


def _show_fsview_all(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    _, shown = _view_timeline(table, args)
    view = table.table.fs_view
    rows = []
    for group in view.file_groups(_partitions(view, args["path_regex"])):
        bases = sorted((b for b in group.base_files if b.instant_time in shown), key=lambda b: b.instant_time)
        logs = [log for log in group.log_files if log.instant_time in shown]
        # a slice starts at each base file, and before the first at the first log: a file group that began as log
        # files only (HoodieFileGroup.getBaseInstantTime with no slice yet)
        by_start: dict[str, BaseFile | None] = {b.instant_time: b for b in bases}
        first_log = min((log.instant_time for log in logs), default=None)
        if first_log is not None and (not bases or first_log < bases[0].instant_time):
            by_start[first_log] = None
        starts = sorted(by_start) or [""]
        for i, start in enumerate(starts):
            end = starts[i + 1] if i + 1 < len(starts) else None
            in_slice = sorted((log for log in logs if log.instant_time >= start and (end is None or log.instant_time < end)),
                              key=lambda log: (log.instant_time, log.version))
            base = by_start.get(start)
            rows.append((group.partition_path, group.file_id, start, _data_file(table, group.partition_path, base),
                         base.size if base else 0, len(in_slice), sum(log.size for log in in_slice), _log_names(in_slice)))
    return rows[:args["limit"]]


def _show_fsview_latest(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    if args["path_regex"] != _ALL_PARTITIONS and args["partition_path"] != _ALL_PARTITIONS:
        raise HoodieConfigError("CALL show_fsview_latest: path_regex and partition_path cannot be used together")
    pattern = args["partition_path"] if args["path_regex"] == _ALL_PARTITIONS else args["path_regex"]
    refuse_unsupported(table, "show_fsview_latest", args, include_in_flight=False, exclude_compaction=False, merge=True)
    timeline = table.timeline()
    view = table.table.fs_view
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


def _human_size(size: int) -> str:
    for unit, scale in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if size >= scale:
            return f"{size / scale:.2f}{unit}"
    return f"{size}B"


def _show_fs_path_detail(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    """Hudi's ``show_fs_path_detail``: the size of ``path`` (a glob), or of each entry under it with
    ``is_sub``, from one listing; no quotas (-1, as Hadoop reports none for local files)."""
    storage, pattern = _listed_root(table, args["path"])
    literal = _literal_prefix(pattern)
    files = storage.list_tree(literal)
    if not files and literal:  # the path may name a file
        found = storage.stat(literal)
        files = [found] if found else []
    dirs = {d for f in files for d in _ancestors(f.path) if _is_under(d, literal)}
    if args["is_sub"]:
        entries = sorted(p for p in dirs | {f.path for f in files} if p != pattern and posixpath.dirname(p) == pattern)
    elif pattern == literal:
        entries = [pattern] if pattern in dirs or any(f.path == pattern for f in files) else []
    else:
        entries = sorted(p for p in dirs | {f.path for f in files} if _glob_match(p, pattern))
    rows = []
    for entry in entries:
        path_num, file_num, size = _content_summary(entry, entry in dirs, files, dirs)
        rows.append((path_num, file_num, size, _human_size(size), storage.uri_of(entry), size, -1, -1))
    rows.sort(key=lambda r: r[2] if args["sort"] else r[1], reverse=True)
    return rows[:args["limit"]]


_GLOB_CHARS = re.compile(r"[*?[]")


def _listed_root(table: HoodieTable, path: str) -> tuple[Storage, str]:
    """The storage to list (the table's, or for a glob table location its literal prefix's) and ``path``
    relative to it: ``path`` is a URI or absolute path under it, or a path relative to it."""
    magic = _GLOB_CHARS.search(table.path)
    root = table.path[:magic.start()].rsplit("/", 1)[0] if magic else table.path
    storage = HoodieTable(root, table.storage_options).storage
    if scheme_of(path) is None and not path.startswith("/"):
        return storage, path.strip("/")
    parsed = parse_table_uri(path)
    full = local_path(path) if parsed.backend == "local" else parsed.uri
    base = storage.uri.rstrip("/")
    if full.rstrip("/") == base:
        return storage, ""
    if not full.startswith(base + "/"):
        raise HoodieConfigError(f"CALL show_fs_path_detail: path {path!r} is not under the table {storage.uri}")
    return storage, full[len(base) + 1:].strip("/")


def _literal_prefix(pattern: str) -> str:
    """The directories of ``pattern`` before its first glob segment (the whole pattern if it has none)."""
    parts = pattern.split("/") if pattern else []
    literal = []
    for part in parts:
        if _GLOB_CHARS.search(part):
            break
        literal.append(part)
    return join(*literal)


def _glob_match(path: str, pattern: str) -> bool:
    """A glob matched segment by segment, so ``*`` never crosses a '/', and, as ``glob.glob`` does, a
    hidden name (``.hoodie``) only by a segment that starts with '.'."""
    parts, wanted = path.split("/"), pattern.split("/")
    return path != "" and len(parts) == len(wanted) and all(
        fnmatch.fnmatchcase(p, w) and (not p.startswith(".") or w.startswith(".")) for p, w in zip(parts, wanted))


def _ancestors(path: str) -> list[str]:
    parts = path.split("/")[:-1]
    return ["/".join(parts[:i]) for i in range(len(parts) + 1)]


def _is_under(path: str, directory: str) -> bool:
    return not directory or path == directory or path.startswith(directory + "/")


def _content_summary(entry: str, is_dir: bool, files: list[FileInfo], dirs: set[str]) -> tuple[int, int, int]:
    """(directories, files, bytes) under ``entry``, itself included, as Hadoop's ``ContentSummary``
    counts them; directories are known from the files' paths (object stores have no empty ones)."""
    if not is_dir:
        return 0, 1, next(f.size for f in files if f.path == entry)
    inside = [f for f in files if _is_under(f.path, entry)]
    return sum(1 for d in dirs if _is_under(d, entry)), len(inside), sum(f.size for f in inside)


_FSVIEW = (TABLE, Parameter("max_instant", default=""), Parameter("include_max", default=False, parse=parse_bool),
           Parameter("include_in_flight", default=False, parse=parse_bool),
           Parameter("exclude_compaction", default=False, parse=parse_bool), LIMIT,
           Parameter("path_regex", default=_ALL_PARTITIONS))
_SLICE = [("partition", pa.string()), ("file_id", pa.string()), ("base_instant", pa.string()), ("data_file", pa.string()),
          ("data_file_size", pa.int64()), ("num_delta_files", pa.int64()), ("total_delta_file_size", pa.int64())]

FS_PROCEDURES = (
    Procedure("show_fsview_all", _FSVIEW, pa.schema(_SLICE + [("delta_files", pa.string())]), _show_fsview_all,
              doc="Every file slice of every file group (up to `max_instant`), with its base file and log files."),
    Procedure("show_fsview_latest", (*_FSVIEW, Parameter("partition_path", default=_ALL_PARTITIONS),
                                     Parameter("merge", default=True, parse=parse_bool)),
              pa.schema(_SLICE + [("delta_size_compaction_scheduled", pa.int64()),
                                  ("delta_size_compaction_unscheduled", pa.int64()),
                                  ("delta_to_base_radio_compaction_scheduled", pa.float64()),
                                  ("delta_to_base_radio_compaction_unscheduled", pa.float64()),
                                  ("delta_files_compaction_scheduled", pa.string()),
                                  ("delta_files_compaction_unscheduled", pa.string())]), _show_fsview_latest,
              doc="The latest file slice of each file group, with the log files a pending compaction takes and "
                  "those it does not."),
    Procedure("show_fs_path_detail", (
        Parameter("path", required=True), Parameter("is_sub", default=False, parse=parse_bool),
        Parameter("sort", default=True, parse=parse_bool), Parameter("limit", default=100, parse=parse_int),
    ), pa.schema([("path_num", pa.int64()), ("file_num", pa.int64()), ("storage_size", pa.int64()),
                  ("storage_size(unit)", pa.string()), ("storage_path", pa.string()), ("space_consumed", pa.int64()),
                  ("quota", pa.int64()), ("space_quota", pa.int64())]), _show_fs_path_detail,
              doc="Directories, files and bytes under a path of the table (a glob), or under each entry with "
                  "`is_sub`; no quotas (-1)."),
)
