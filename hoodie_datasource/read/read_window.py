"""The read window: which past instants a time-travel or incremental read can still answer exactly.

Why: the cleaner deletes the file slices only reads of the past need, and Apache Hudi 1.x's archival moves
old instants into an archived timeline this library does not read. A read reaching past either would return
too little without a word; the planner asks this module first, and it raises ``ReadWindowError``
naming the earliest instant that can still be read exactly.

How, exactly and cheaply:

* Cleaned files. Every clean lists the files it deletes (completed: ``partitionMetadata.*.
  successDeleteFiles`` of HoodieCleanMetadata, file names as Hudi's CleanActionExecutor records them;
  pending: the files of its HoodieCleanerPlan, some of which may be gone already). A read as of T
  needs, per file group, the slice that was latest at T; so a deleted file written at t is needed by
  exactly the reads as of T in [t, next), where next is the group's next base-file version (deleted or
  still on storage) or the replacecommit that replaced the group. These intervals, per file group,
  are the window's gaps. The rule does not depend on the cleaner policy (KEEP_LATEST_COMMITS or
  KEEP_LATEST_FILE_VERSIONS) nor on who wrote the clean. Hudi's own check is coarser:
  ``TimelineUtils.validateTimestampAsOf`` refuses a time travel before the latest clean's
  ``earliestCommitToRetain`` (later than needed), and under KEEP_LATEST_FILE_VERSIONS only one before
  the first active instant (letting through reads whose files are gone).
* Archived instants. In timeline layout 1 archived instants stay readable (loading the timeline reads the
  archive log, ``.hoodie/archived/.commits_.archive.*``, whoever wrote it). Once instants were archived
  where this library does not read them (files under ``.hoodie/timeline/history/`` in layout 2, or an
  archive log block that does not decode), what came before the first instant on the timeline is unknown;
  Hudi's incremental relation treats such a begin instant as archived
  (``HoodieTimeline.isBeforeTimelineStarts``), and so does this module.

A read of the latest instant is always exact (the cleaner never removes a live group's latest slice),
so those checks return before reading any clean.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from hoodie_datasource.config.keys import INCR_FALLBACK_FULL_SCAN
from hoodie_datasource.errors import ReadWindowError
from hoodie_datasource.read.incremental_range import IncrementalRange, range_time
from hoodie_datasource.table.file_names import BaseFileName, LogFileName
from hoodie_datasource.table.fs_view import FileSystemView
from hoodie_datasource.timeline.instant import CLEAN, REPLACE_COMMIT, Instant, State
from hoodie_datasource.timeline.timeline import Timeline

logger = logging.getLogger(__name__)

FALLBACK_KEY = INCR_FALLBACK_FULL_SCAN.key

Group = tuple[str, str]  # (partition path, file id)


@dataclass(frozen=True)
class ReadWindow:
    gaps: dict[Group, tuple[tuple[str, str], ...]] = field(default_factory=dict)  # [start, end) per group
    timeline_start: str | None = None  # first write on the timeline, when instants before it are unread

    def misses(self, instant: str, groups: Iterable[Group] | None = None) -> bool:
        """A read as of ``instant`` of these groups (all by default) needs a file the cleaner removed."""
        keys = self.gaps.keys() if groups is None else (g for g in groups if g in self.gaps)
        return any(start <= instant < end for key in keys for start, end in self.gaps[key])

    @property
    def earliest(self) -> str | None:
        """The earliest instant from which every read is exact."""
        bounds = [end for spans in self.gaps.values() for _, end in spans]
        if self.timeline_start:
            bounds.append(self.timeline_start)
        return max(bounds, default=None)


def load_read_window(timeline: Timeline, view: FileSystemView, timeline_start: str | None = None) -> ReadWindow:
    """The window of ``timeline``: one read of every clean's metadata (and of replacecommits when a
    clean removed something), and the listing ``view`` already holds for the partitions cleaned."""
    deleted = _deleted_files(timeline)
    if not deleted:
        return ReadWindow(timeline_start=timeline_start)
    replaced = _replaced_at(timeline)
    committed = {i.timestamp for i in timeline.completed()}
    before_start = timeline_start or ""
    live = {(g.partition_path, g.file_id): g for g in view.file_groups({p for p, _ in deleted})}
    gaps: dict[Group, tuple[tuple[str, str], ...]] = {}
    for key, files in deleted.items():
        versions = {t for t, _, is_base in files if is_base}
        if key in live:  # files of a commit before the timeline starts count as committed, as in Hudi
            versions |= {b.instant_time for b in live[key].base_files
                         if b.instant_time in committed or b.instant_time < before_start}
        if key in replaced:
            versions.add(replaced[key])
        spans = []
        for written, clean_time, _ in files:
            later = [v for v in versions if v > written]
            # no later version known (its replacecommit archived by Hudi?): the clean's own time bounds it
            spans.append((written, min(later) if later else clean_time))
        gaps[key] = _merged(spans)
    return ReadWindow(gaps, timeline_start)


def _merged(spans: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return tuple(out)


def _deleted_files(timeline: Timeline) -> dict[Group, set[tuple[str, str, bool]]]:
    """(instant written, clean time, is base file) of every file a clean deleted or plans to, per group."""
    deleted: dict[Group, set[tuple[str, str, bool]]] = {}
    for clean in (i for i in timeline.instants if i.action == CLEAN):
        for partition, name in _clean_files(timeline, clean):
            base = BaseFileName.parse(name)
            log = None if base else LogFileName.parse(name)
            parsed = base or log
            if parsed is not None:
                deleted.setdefault((partition, parsed.file_id), set()).add(
                    (parsed.instant_time, clean.timestamp, base is not None))
    return deleted


def _clean_files(timeline: Timeline, clean: Instant) -> Iterator[tuple[str, str]]:
    """(partition, file name) of the files a completed clean deleted or a pending clean plans to."""
    if clean.is_completed:
        for partition, meta in (timeline.read_metadata(clean).get("partitionMetadata") or {}).items():
            for path in (meta or {}).get("successDeleteFiles") or ():
                yield partition, posixpath.basename(path)
        return
    plan = timeline.read_plan(clean.with_state(State.REQUESTED))
    for partition, entries in (plan.get("filePathsToBeDeletedPerPartition") or {}).items():
        for entry in entries or ():
            yield partition, posixpath.basename(entry.get("filePath") or "")
    for partition, names in (plan.get("filesToBeDeletedPerPartition") or {}).items():  # plan version 1
        for name in names or ():
            yield partition, posixpath.basename(name)


def _replaced_at(timeline: Timeline) -> dict[Group, str]:
    """The replacecommit that replaced each replaced file group."""
    replaced: dict[Group, str] = {}
    for instant in timeline.completed((REPLACE_COMMIT,)):
        for partition, file_ids in (timeline.read_metadata(instant).get("partitionToReplaceFileIds") or {}).items():
            for file_id in file_ids or ():
                replaced[(partition, file_id)] = instant.timestamp
    return replaced


_RETAIN_HINT = (
    "Keep more history on the writer with hoodie.cleaner.commits.retained (default 10; "
    "hoodie.cleaner.fileversions.retained under KEEP_LATEST_FILE_VERSIONS) and hoodie.keep.min.commits."
)


def check_as_of(timeline: Timeline, view: FileSystemView, as_of: str) -> None:
    """Raise ``ReadWindowError`` unless a read as of ``as_of`` is exact; an instant before the table's
    first commit reads the empty table, with a warning (as Hudi returns no rows then:
    TestTimeTravelQuery.testTimeTravelQueryForPartitionedTable)."""
    writes = timeline.completed()
    if not writes or as_of >= writes[-1].timestamp:
        return
    start = writes[0].timestamp if timeline.unread_archive else None
    if start is None and as_of < writes[0].timestamp:
        logger.warning("as.of.instant %s is before the table's first commit %s: the table had no rows then",
                       as_of, writes[0].timestamp)
        return
    window = load_read_window(timeline, view, start)
    if start is not None and as_of < start:
        reason = f"the instants before {start} were archived where this library does not read them"
    elif window.misses(as_of):
        reason = "the cleaner has removed files this read needs"
    else:
        return
    raise ReadWindowError(
        f"Cannot read the table as of {as_of} exactly: {reason}. The earliest instant that can still be "
        f"read exactly is {window.earliest}: read as of it or later. {_RETAIN_HINT}"
    )


def is_exact_range(timeline: Timeline, view: FileSystemView, span: IncrementalRange, groups: Iterable[Group],
                   fallback: bool = False) -> bool:
    """Whether the incremental read of ``span`` (of these file groups: those its commits wrote) is exact:
    every commit in the range is on the timeline, and the groups' slices as of its end are still on storage.
    When it is not: with ``fallback`` (Hudi's hoodie.datasource.read.incr.fallback.fulltablescan.enable) say
    so in a warning and return False, else raise ``ReadWindowError``."""
    writes = timeline.completed()
    begin, end = span.begin, span.end
    # the first time on the timeline in the range's time (Hudi 1.x: HoodieTimeline.isBeforeTimelineStartsByCompletionTime)
    start = min(range_time(w, span.by_completion) for w in writes) if writes and timeline.unread_archive else None
    archived = start is not None and begin < start
    if not archived and len(span.shown) == len(writes):
        return True
    window = load_read_window(timeline, view, writes[0].timestamp if start is not None else None)
    if archived:
        what = "writes completed" if span.by_completion else "instants"
        reason = (f"the {what} before {start} were archived where this library does not read them, "
                  "so commits in the range may be unknown")
    elif window.misses(span.upto, groups):
        reason = f"the cleaner has removed files of the table as of {span.upto} that this read needs"
    else:
        return True
    problem = (f"Cannot answer the incremental read ({begin}, {end}] exactly: {reason}. The earliest instant "
               f"that can still be read exactly is {window.earliest}")
    rows = (f"the commit times of the writes completed in ({begin}, {end}]" if span.by_completion
            else f"_hoodie_commit_time in ({begin}, {end}]")
    if fallback:
        logger.warning("%s. Falling back to a full table scan (%s=true): returning the current snapshot's rows "
                       "with %s", problem, FALLBACK_KEY, rows)
        return False
    raise ReadWindowError(
        f"{problem}: read from it or later, or set {FALLBACK_KEY}=true to answer from the current snapshot "
        f"filtered on {rows}. {_RETAIN_HINT}"
    )


def check_cdc_range(timeline: Timeline, view: FileSystemView, begin: str, end: str,
                    needs: Mapping[Group, Iterable[str]]) -> None:
    """Raise ``ReadWindowError`` unless the CDC query (begin, end] is exact: it reads each file group as of
    the instants in ``needs`` (every commit that changed it, and the write before the first of them)."""
    writes = timeline.completed()
    start = writes[0].timestamp if writes and timeline.unread_archive else None
    window = load_read_window(timeline, view, start)
    if start is not None and begin < start:
        reason = (f"the instants before {start} were archived where this library does not read them, "
                  "so commits in the range may be unknown")
    elif any(window.misses(t, [key]) for key, instants in needs.items() for t in instants):
        reason = "the cleaner has removed file versions this query needs to tell the records before each change"
    else:
        return
    raise ReadWindowError(
        f"Cannot answer the CDC query ({begin}, {end}] exactly: {reason}. The earliest instant that can still be "
        f"read exactly is {window.earliest}: begin the query there or later. {_RETAIN_HINT}"
    )
