"""Archival: keeping the active timeline short.

When more than ``hoodie.keep.max.commits`` (default 30) completed writes are on the active
timeline, the oldest are moved to ``.hoodie/archived/`` until ``hoodie.keep.min.commits``
(default 20) remain, with their requested/inflight files and any clean/rollback instants before
them. Never archived: anything at or after the earliest pending instant (a running write or
compaction), the cleaner's earliest retained instant or the first savepoint (a restore rolls back to
it, as Hudi's ``HoodieTimelineArchiver`` with ``hoodie.archive.beyond.savepoint`` false, its default), nor a
replacecommit whose replaced file groups no completed clean has removed yet (readers, hudi-rs too,
learn from it which file groups to skip: archived early, its replaced files would be read again beside
the rows that replaced them).

This library still reads archived instants (time travel and incremental pulls across them keep
working); hudi-rs reads only the active timeline, so there time travel is limited to the active
window (files of archived commits are still read as part of the latest snapshot).
"""

from __future__ import annotations

import logging

from hoodie_datasource import fault_points
from hoodie_datasource.config.services_config import ArchiveConfig
from hoodie_datasource.storage.storage import join
from hoodie_datasource.table.table_config import METAFOLDER
from hoodie_datasource.timeline.instant import CLEAN, REPLACE_COMMIT, State
from hoodie_datasource.timeline.timeline import Timeline

logger = logging.getLogger(__name__)


def _oldest_replace_to_keep(timeline: Timeline) -> str | None:
    """The oldest completed replacecommit whose replaced file groups may still exist: at or after the
    last completed clean's earliest retained commit (the cleaner deletes the file groups replaced before
    it; a clean keeping file versions, which records none, deletes every replaced group, so then the
    clean itself is the bound), or the first one when no clean has completed (Hudi's
    ``ClusteringUtils.getOldestInstantToRetainForClustering``)."""
    cleans = [i for i in timeline.completed((CLEAN,)) if i.timestamp not in timeline.archived]
    cleaned_before = None
    if cleans:
        cleaned_before = timeline.read_metadata(cleans[-1]).get("earliestCommitToRetain") or cleans[-1].timestamp
    for instant in timeline.completed((REPLACE_COMMIT,)):
        if instant.timestamp not in timeline.archived and (cleaned_before is None or instant.timestamp >= cleaned_before):
            return instant.timestamp
    return None


def archive(timeline: Timeline, cfg: ArchiveConfig, earliest_retained: str | None = None) -> list[str]:
    if timeline.config.timeline_layout_version >= 2:
        return []  # layout 2 archives into an LSM history we do not write
    active = [i for i in timeline.instants if i.timestamp not in timeline.archived]
    completed = [i for i in timeline.completed() if i.timestamp not in timeline.archived]
    if len(completed) <= cfg.max_commits:
        return []
    cutoff = completed[len(completed) - cfg.min_commits].timestamp
    pending = [i.timestamp for i in active if not i.is_completed]
    if pending:
        cutoff = min(cutoff, pending[0])
    if earliest_retained:
        cutoff = min(cutoff, earliest_retained)
    if timeline.savepoints:
        cutoff = min(cutoff, timeline.savepoints[0].timestamp)
    replace = _oldest_replace_to_keep(timeline)
    if replace:
        cutoff = min(cutoff, replace)
    storage = timeline.storage
    source = timeline.directory
    target = join(METAFOLDER, timeline.config.archive_folder)
    storage.make_dirs(target)
    present = set(storage.list_names(source))  # one listing, not a HEAD per instant file
    moved = []
    for instant in active:
        if instant.timestamp >= cutoff or not instant.is_completed:
            continue
        layout = timeline.config.timeline_layout_version
        names = {instant.with_state(s).file_name(layout) for s in (State.REQUESTED, State.INFLIGHT)}
        names.add(instant.file_name(layout))
        if timeline.is_compaction(instant):
            names |= {f"{instant.timestamp}.compaction.requested", f"{instant.timestamp}.compaction.inflight"}
        # the completed file last: an instant is never left on the active timeline as pending
        for name in sorted(names, key=lambda n: 1 if n == instant.file_name(layout) else 0):
            if name in present:
                storage.move(join(source, name), join(target, name))
        moved.append(instant.timestamp)
        fault_points.reach(fault_points.MID_ARCHIVAL, storage=storage, instant=instant.timestamp)
    logger.info("Archived %d instants older than %s", len(moved), cutoff)
    return moved
