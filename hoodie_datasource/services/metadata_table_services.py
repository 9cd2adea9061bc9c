"""The metadata table's own services, run at the start of a write under the table lock, as Hudi's write client
runs them when it opens the table (``HoodieBackedTableMetadataWriter.performTableServices``, Hudi 0.15): a
clean, a compaction, archival, each at the time of the metadata table's latest deltacommit with a suffix
(clean ``002``, compaction ``001``), so it sorts before every later data instant.

- compaction (``compactIfNecessary``, ``validateTimelineBeforeSchedulingCompaction``): every file slice of every
  partition (Hudi's ``UnBoundedCompactionStrategy``), once ``hoodie.metadata.compact.max.delta.commits``
  deltacommits completed since the last one, only when no data instant at or before the latest deltacommit is
  pending (a base file at time T must hold every data instant up to T); past
  ``hoodie.metadata.max.deltacommits.when_pending`` deltacommits without one, the write fails naming the pending
  instants. The metadata table's compaction is the bound of the data table's archival (``services.archival``).
- clean (``cleanIfNecessary``): once three instants completed after the latest compaction (a reader that planned
  its files before the compaction finishes its read first), with the data table's cleaner policy, retaining
  more (``HoodieMetadataWriteUtils``: at least 20 commits, or 1.2 times the file versions).
- archival: the data table's bounds plus one more instant each (``keep.min/max.commits + 1``), never past the
  data table's first active commit or first pending instant.
"""

from __future__ import annotations

import logging
import math

from hoodie_datasource.config.metadata_config import MetadataConfig
from hoodie_datasource.config.services_config import ArchiveConfig, CleanConfig, ServicesConfig
from hoodie_datasource.errors import MetadataTableError
from hoodie_datasource.metadata.delta_commit import discard_pending
from hoodie_datasource.metadata.instant_times import clean_time, compaction_time
from hoodie_datasource.metadata.layout import latest_compaction
from hoodie_datasource.metadata.reader import opened_metadata_table, planning_from_metadata
from hoodie_datasource.metadata.sync import open_metadata_table, ready_metadata_partitions
from hoodie_datasource.services.archival import archive
from hoodie_datasource.services.cleaner import clean
from hoodie_datasource.services.compaction import delta_commits_since_last_compaction
from hoodie_datasource.services.metadata_compaction import compact_metadata_table
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.instant import DELTA_COMMIT, WRITE_ACTIONS

logger = logging.getLogger(__name__)

METADATA_CLEANER_COMMITS_RETAINED = 20  # HoodieMetadataConfig.DEFAULT_METADATA_CLEANER_COMMITS_RETAINED
INSTANTS_BEFORE_CLEAN = 3  # cleanIfNecessary: completed instants after the latest compaction before a clean


def metadata_clean_config(data: CleanConfig) -> CleanConfig:
    """The metadata table's cleaner: the data table's policy, retaining more (``createMetadataWriteConfig``)."""
    return CleanConfig(data.policy, max(METADATA_CLEANER_COMMITS_RETAINED, int(data.commits_retained * 1.2)),
                       math.ceil(data.file_versions_retained * 1.2), data.hours_retained)


def _archival_bound(table: Table) -> str | None:
    """The data table's first active commit or first pending instant, whichever is earlier."""
    timeline = table.timeline
    active = [i for i in timeline.instants if i.timestamp not in timeline.archived]
    firsts = [next((i.timestamp for i in active if i.is_completed and i.action in WRITE_ACTIONS), None),
              next((i.timestamp for i in active if not i.is_completed), None)]
    return min((t for t in firsts if t is not None), default=None)


def _clean(mdt: Table, latest: str, cfg: CleanConfig) -> Table:
    compacted = latest_compaction(mdt)
    if compacted is None or mdt.timeline.find(clean_time(latest)) is not None:
        return mdt
    after = [i for i in mdt.timeline.instants if i.is_completed and i.timestamp > compacted]
    if len(after) < INSTANTS_BEFORE_CLEAN:
        return mdt
    return clean(mdt, metadata_clean_config(cfg), clean_time(latest)).table


def _compact(table: Table, mdt: Table, latest: str, cfg: MetadataConfig) -> Table:
    since = delta_commits_since_last_compaction(mdt.timeline)
    blocking = [i.timestamp for i in table.timeline.pending() if i.timestamp <= latest]
    if blocking:
        if since > cfg.max_delta_commits_when_pending:
            raise MetadataTableError(
                f"The metadata table of {table.uri} has {since} deltacommits since its last compaction, more than "
                f"hoodie.metadata.max.deltacommits.when_pending ({cfg.max_delta_commits_when_pending}): it cannot "
                f"compact while data instants {blocking} are pending. Roll them back or complete them (a write "
                f"rolls back failed writes once their heartbeat expired), or raise the option")
        logger.info("Not compacting the metadata table of %s: data instants %s are pending", table.uri, blocking)
        return mdt
    if since < cfg.compact_max_delta_commits or mdt.timeline.find(compaction_time(latest)) is not None:
        return mdt
    return compact_metadata_table(table, mdt, compaction_time(latest))


def run_metadata_table_services(table: Table, cfg: MetadataConfig, services: ServicesConfig) -> Table:
    """Clean, compact and archive the table's metadata table as due; the table after, planning from the metadata
    table as the services left it (``metadata.reader.MetadataListing``), which they take from ``table`` when it was
    opened for it already (``prepare_metadata_table``). Call it under the table lock, at the start of a write,
    before its instant."""
    if not cfg.enabled or not ready_metadata_partitions(table.config):
        return table
    opened = opened_metadata_table(table)
    mdt = open_metadata_table(table.storage) if opened is None else discard_pending(opened)
    deltacommits = mdt.timeline.completed((DELTA_COMMIT,))
    if deltacommits:
        latest = deltacommits[-1].timestamp
        mdt = _clean(mdt, latest, services.clean)
        mdt = _compact(table, mdt, latest, cfg)
        bound = _archival_bound(table)
        archived = ArchiveConfig(services.archive.min_commits + 1, services.archive.max_commits + 1)
        mdt = archive(mdt, archived, bound).table
    return planning_from_metadata(table, metadata_table=mdt)
