"""Hudi's procedures over one commit and over the archived timeline: what a commit wrote per partition
(``show_commit_partitions``) and per file (``show_commit_files``), and the commits archival moved off the active
timeline (``show_archived_commits``), with Hudi's argument names and result columns
(``hudi-spark-datasource/.../command/procedures``: ``ShowCommitPartitionsProcedure``, ``ShowCommitFilesProcedure``,
``ShowArchivedCommitsProcedure``).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from hoodie_datasource.errors import TimelineError
from hoodie_datasource.hoodie_table import HoodieTable
from hoodie_datasource.procedures.procedure import LIMIT, TABLE, Parameter, Procedure, Rows
from hoodie_datasource.procedures.timeline_procedures import commit_totals
from hoodie_datasource.timeline.instant import Instant

_NULL_COMMIT = "null"  # HoodieWriteStat.NULL_COMMIT: a file the commit created
_ARCHIVED_RANGE = ("000", "99999999999999999")


def _commit(table: HoodieTable, instant_time: str) -> tuple[Instant, dict[str, Any]]:
    """The completed write of the active timeline at ``instant_time`` and its metadata."""
    timeline = table.timeline()
    instant = timeline.find(instant_time)
    if instant is None or instant.timestamp in timeline.archived or instant not in timeline.completed():
        shown = ", ".join(i.timestamp for i in timeline.completed() if i.timestamp not in timeline.archived)
        raise TimelineError(f"Commit {instant_time} not found in the completed commits of {table.path} "
                            f"(active timeline: {shown or 'none'})")
    return instant, timeline.read_metadata(instant)


def _write_stats(metadata: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    return [(partition, list(stats or ())) for partition, stats in (metadata.get("partitionToWriteStats") or {}).items()]


def _show_commit_partitions(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    instant, metadata = _commit(table, args["instant_time"])
    rows = []
    for partition, stats in _write_stats(metadata):
        updated = [s for s in stats if str(s.get("prevCommit")) != _NULL_COMMIT]
        rows.append((instant.action, partition, len(stats) - len(updated), len(updated),
                     sum(s.get("numInserts") or 0 for s in stats), sum(s.get("numUpdateWrites") or 0 for s in updated),
                     sum(s.get("totalWriteBytes") or 0 for s in stats),
                     sum(s.get("totalWriteErrors") or 0 for s in stats)))
    return rows[:args["limit"]]


def _show_commit_files(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    instant, metadata = _commit(table, args["instant_time"])
    rows = [(instant.action, partition, s.get("fileId"), s.get("prevCommit"), s.get("numUpdateWrites") or 0,
             s.get("numWrites") or 0, s.get("totalWriteBytes") or 0, s.get("totalWriteErrors") or 0,
             s.get("fileSizeInBytes") or 0)
            for partition, stats in _write_stats(metadata) for s in stats]
    return rows[:args["limit"]]


def _show_archived_commits(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    """The archived completed writes with ``start_ts < time <= end_ts`` (``HoodieTimeline.findInstantsInRange``),
    newest first. Hudi's default window is the last 10 days up to a day ago; here an empty bound is open, since
    the archive log is read whole anyway."""
    timeline = table.timeline()
    start, end = args["start_ts"] or _ARCHIVED_RANGE[0], args["end_ts"] or _ARCHIVED_RANGE[1]
    archived = [i for i in timeline.completed() if i.timestamp in timeline.archived and start < i.timestamp <= end]
    rows = []
    for instant in sorted(archived, key=lambda i: i.timestamp, reverse=True)[:args["limit"]]:
        rows.append((instant.timestamp, instant.completion, *commit_totals(timeline.read_metadata(instant))))
    return rows


_INSTANT = Parameter("instant_time", required=True)
_TOTALS = [("total_bytes_written", pa.int64()), ("total_files_added", pa.int64()), ("total_files_updated", pa.int64()),
           ("total_partitions_written", pa.int64()), ("total_records_written", pa.int64()),
           ("total_update_records_written", pa.int64()), ("total_errors", pa.int64())]

COMMIT_PROCEDURES = (
    Procedure("show_commit_partitions", (TABLE, LIMIT, _INSTANT), pa.schema([
        ("action", pa.string()), ("partition_path", pa.string()), ("total_files_added", pa.int64()),
        ("total_files_updated", pa.int64()), ("total_records_inserted", pa.int64()),
        ("total_records_updated", pa.int64()), ("total_bytes_written", pa.int64()), ("total_errors", pa.int64())]),
              _show_commit_partitions, doc="What one completed commit wrote in each partition: files added and "
                                           "updated, records inserted and updated, bytes."),
    Procedure("show_commit_files", (TABLE, LIMIT, _INSTANT), pa.schema([
        ("action", pa.string()), ("partition_path", pa.string()), ("file_id", pa.string()),
        ("previous_commit", pa.string()), ("total_records_updated", pa.int64()), ("total_records_written", pa.int64()),
        ("total_bytes_written", pa.int64()), ("total_errors", pa.int64()), ("file_size", pa.int64())]),
              _show_commit_files, doc="One row per file one completed commit wrote, with its counts and size."),
    Procedure("show_archived_commits", (TABLE, LIMIT, Parameter("start_ts", default=""),
                                        Parameter("end_ts", default="")),
              pa.schema([("commit_time", pa.string()), ("state_transition_time", pa.string()), *_TOTALS]),
              _show_archived_commits,
              doc="The completed writes archival moved to the archive log, newest first, between `start_ts` "
                  "(excluded) and `end_ts` (both open when empty)."),
)
