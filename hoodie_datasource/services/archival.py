"""Archival: keeping the active timeline short.

When more than ``hoodie.keep.max.commits`` (default 30) completed writes are on the active
timeline, the oldest are archived until ``hoodie.keep.min.commits`` (default 20) remain; so are cleans, and
rollbacks, each action on its own count (Hudi's ``HoodieTimelineArchiver.getCleanInstantsToArchive``: the
latest ones stay on the active timeline, where Hudi's readers and ``CALL show_rollbacks`` look for them).
Archived instants are written to Hudi's archive log (``timeline.archive_log``), every file of each
instant (requested, inflight, completed) one record, then deleted from the active timeline. Never
archived: a write at or after the earliest pending instant (a running write or compaction), the
cleaner's earliest retained instant or the first savepoint (a restore rolls back to it, as Hudi's
``HoodieTimelineArchiver`` with ``hoodie.archive.beyond.savepoint`` false, its default; set true, commits before
and between savepoints are archived, the savepointed commits themselves never, and the table can no longer
be restored to those savepoints), nor a
replacecommit whose replaced file groups no completed clean has removed yet (readers, hudi-rs too, learn
from it which file groups to skip: archived early, its replaced files would be read again beside the rows
that replaced them); nor actions other than writes (compactions complete as commits), cleans and
rollbacks (Hudi's ``MetadataConversionUtils`` archives no others: savepoints stay). With a metadata table,
nothing at or after its latest compaction, nothing at all before its first (``HoodieTimelineArchiver``): its
readers count a deltacommit there only while its data instant is on the active timeline, so an instant is
archived only once a compaction took its deltacommit into a base file. The metadata table's own timeline is
archived the same way (``services.metadata_table_services``), never past the data table's first active commit or first
pending instant (``TimelineUtils.getEarliestInstantForMetadataArchival``).

Java Hudi reads the archive log (``CALL show_archived_commits``, its archived timeline), and so does this
library: time travel and incremental pulls across archived instants keep working. hudi-rs reads only the
active timeline, so there time travel is limited to the active window (files of archived commits are
still read as part of the latest snapshot).
"""

from __future__ import annotations

import logging

from hoodie_datasource import fault_points
from hoodie_datasource.config.services_config import ArchiveConfig
from hoodie_datasource.config.table_config import METAFOLDER
from hoodie_datasource.metadata.layout import latest_compaction, metadata_storage
from hoodie_datasource.services.service_run import ServiceRun
from hoodie_datasource.storage.storage import join
from hoodie_datasource.table.metadata_table import ready_partitions
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.archive_log import archive_entry, write_archive_file
from hoodie_datasource.timeline.instant import CLEAN, REPLACE_COMMIT, ROLLBACK, WRITE_ACTIONS, Instant, State
from hoodie_datasource.timeline.timeline import Timeline, decode_instant_content, timeline_dir

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


def _metadata_table_bound(table: Table) -> str | None:
    """The latest compaction of the table's ready metadata table ("" before its first: nothing may be archived);
    None without one."""
    if not ready_partitions(table.config):
        return None
    return latest_compaction(Table.load(metadata_storage(table.storage))) or ""


def archive(table: Table, cfg: ArchiveConfig, earliest_retained: str | None = None) -> ServiceRun:
    """Archive what the rules above let go: the instants archived, and the table after (listed again when
    anything was archived: its timeline then reads those instants from the archive)."""
    timeline, config = table.timeline, table.config
    if config.timeline_layout_version >= 2:
        return ServiceRun((), table)  # layout 2 archives into an LSM history we do not write
    active = [i for i in timeline.instants if i.timestamp not in timeline.archived]
    completed = [i for i in timeline.completed() if i.timestamp not in timeline.archived]
    if len(completed) <= cfg.max_commits:
        return ServiceRun((), table)
    cutoff = completed[len(completed) - cfg.min_commits].timestamp
    bounds = [i.timestamp for i in active if not i.is_completed][:1]
    savepointed = {p.timestamp for p in timeline.savepoints}
    if not cfg.beyond_savepoint:
        bounds += [p.timestamp for p in timeline.savepoints[:1]]
    bounds += [b for b in (earliest_retained, _oldest_replace_to_keep(timeline)) if b]
    cutoff = min([cutoff, *bounds])
    # beyond savepoints, the savepointed commits themselves stay (HoodieTimelineArchiver.getCommitInstantsToArchive)
    doomed = [i for i in active if i.timestamp < cutoff and i.is_completed and i.action in WRITE_ACTIONS
              and i.timestamp not in savepointed]
    for action in (CLEAN, ROLLBACK):
        done = [i for i in active if i.action == action and i.is_completed]
        if len(done) > cfg.max_commits:
            doomed += done[:len(done) - cfg.min_commits]
    compacted = _metadata_table_bound(table)
    if compacted is not None:
        doomed = [i for i in doomed if i.timestamp < compacted]
    if not doomed:
        return ServiceRun((), table)
    doomed.sort()
    storage, layout, directory = table.storage, config.timeline_layout_version, timeline_dir(config)
    present = {f.name: f for f in storage.list_dir(directory).files}  # one listing, not a HEAD per file
    folder = join(METAFOLDER, config.archive_folder)
    files: dict[str, list[str]] = {}
    entries = []
    for instant in doomed:
        names = [instant.with_state(s).file_name(layout) for s in (State.REQUESTED, State.INFLIGHT)]
        if timeline.is_compaction(instant):
            names += [f"{instant.timestamp}.compaction.requested", f"{instant.timestamp}.compaction.inflight"]
        names.append(instant.file_name(layout))  # the completed file last: never left as a pending instant
        files[instant.timestamp] = [n for n in names if n in present]
        for name in files[instant.timestamp]:
            path = join(directory, name)
            content = decode_instant_content(storage.read(path), storage.uri_of(path))
            entries.append(archive_entry(Instant.parse(name), content, present[name].modified_ns))
    storage.make_dirs(folder)
    written = write_archive_file(storage, folder, storage.list_names(folder), entries)
    for instant in doomed:
        for name in files[instant.timestamp]:
            storage.delete(join(directory, name))
        fault_points.reach(fault_points.MID_ARCHIVAL, storage=storage, instant=instant.timestamp)
    logger.info("Archived %d instants older than %s into %s", len(doomed), cutoff, storage.uri_of(written))
    return ServiceRun(tuple(i.timestamp for i in doomed), table.refresh())
