"""The metadata table's own timeline, and which of its log blocks a reader counts.

The metadata table (a merge-on-read table under ``.hoodie/metadata``) gets a deltacommit of the same instant time
as each data-table instant, before the data instant completes; its own services add instants of a data instant
time plus a suffix (``001`` compaction, ``002`` clean, ``003`` restore, ``004`` indexing, ``005`` log compaction,
``006`` rollback, ``010`` and on partition initialisation). So a reader counts a log block only when
(``HoodieBackedTableMetadata.getLogRecordScanner``, ``HoodieTableMetadataUtil.getValidInstantTimestamps``,
``AbstractHoodieLogRecordReader.scanInternal``, Hudi 0.15):

- its instant is valid: a completed instant of the data table's active timeline; a completed metadata
  deltacommit with a service suffix (``isValidInstant``); an instant a completed data rollback or restore after
  the earliest of those rolled back; a completed metadata rollback or restore; a metadata deltacommit of
  ``00000000000000`` and a suffix (the bootstrap);
- its instant is a completed write on the metadata timeline (or older than its first one), and none in flight;
- its instant is at or before the metadata table's latest completed instant: a later block ends the scan.

Rollback command blocks are never filtered: each drops the blocks of its target instant read before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from hoodie_datasource.storage.storage import Storage, join
from hoodie_datasource.table.metadata_table import METADATA_TABLE
from hoodie_datasource.timeline.instant import (
    COMPACTION,
    DELTA_COMMIT,
    RESTORE,
    ROLLBACK,
    WRITE_ACTIONS,
    Instant,
    State,
)
from hoodie_datasource.timeline.timeline import Timeline

METADATA_TIMELINE = join(METADATA_TABLE, ".hoodie")
SOLO_COMMIT_TIMESTAMP = "00000000000000"  # HoodieTableMetadata.SOLO_COMMIT_TIMESTAMP
SERVICE_SUFFIXES = frozenset({"001", "002", "003", "004", "005", "006"})  # HoodieTableMetadataUtil.OperationSuffix
PARTITION_INITIALIZATION_SUFFIX = "010"  # and later: one per partition initialised
_MILLIS_INSTANT_LENGTH = 17


def is_service_instant(instant: Instant) -> bool:
    """``HoodieTableMetadataUtil.isValidInstant``: a metadata deltacommit of a data instant time plus a
    service's suffix, or a partition initialisation's."""
    time = instant.timestamp
    if instant.action != DELTA_COMMIT or len(time) != _MILLIS_INSTANT_LENGTH + 3:
        return False
    return time[-3:] in SERVICE_SUFFIXES or time[-3:] >= PARTITION_INITIALIZATION_SUFFIX


@dataclass(frozen=True)
class MetadataTimeline:
    """The metadata table's active timeline: one listing of ``.hoodie/metadata/.hoodie``."""

    instants: tuple[Instant, ...]

    @staticmethod
    def load(storage: Storage) -> MetadataTimeline:
        latest: dict[str, Instant] = {}
        rank = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}
        for info in storage.list_dir(METADATA_TIMELINE).files:
            instant = Instant.parse(info.name)
            if instant is None:
                continue
            current = latest.get(instant.timestamp)
            if current is None or rank[instant.state] > rank[current.state]:
                latest[instant.timestamp] = instant
        return MetadataTimeline(tuple(sorted(latest.values(), key=lambda i: i.timestamp)))

    @cached_property
    def completed_writes(self) -> frozenset[str]:
        """Completed commits and deltacommits (a completed compaction is a commit)."""
        return frozenset(i.timestamp for i in self.instants if i.is_completed and i.completed_action in WRITE_ACTIONS)

    @cached_property
    def pending_writes(self) -> frozenset[str]:
        return frozenset(i.timestamp for i in self.instants if not i.is_completed and
                         i.completed_action in WRITE_ACTIONS)

    @cached_property
    def pending_compactions(self) -> frozenset[str]:
        return frozenset(i.timestamp for i in self.instants if not i.is_completed and i.action == COMPACTION)

    @cached_property
    def latest_completed(self) -> str | None:
        done = [i.timestamp for i in self.instants if i.is_completed]
        return done[-1] if done else None

    @cached_property
    def start(self) -> str | None:
        """The first completed write: blocks of an older instant count as committed (archived)."""
        done = sorted(self.completed_writes)
        return done[0] if done else None

    def is_committed(self, instant_time: str) -> bool:
        """``containsOrBeforeTimelineStarts`` of the completed writes, and not in flight."""
        if instant_time in self.pending_writes:
            return False
        return instant_time in self.completed_writes or (self.start is not None and instant_time < self.start)


def _rolled_back(timeline: Timeline, instant: Instant) -> list[str]:
    """The instants a completed rollback or restore of the data table rolled back
    (``HoodieTableMetadataUtil.getRollbackedCommits``)."""
    metadata = timeline.read_metadata(instant)
    if instant.action == ROLLBACK:
        return list(metadata.get("commitsRollback") or ())
    return [commit for rollbacks in (metadata.get("hoodieRestoreMetadata") or {}).values()
            for rollback in rollbacks or () for commit in rollback.get("commitsRollback") or ()]


def valid_instants(data: Timeline, metadata: MetadataTimeline) -> frozenset[str]:
    """The instants whose metadata log blocks a reader counts (``getValidInstantTimestamps``)."""
    active = [i for i in data.instants if i.timestamp not in data.archived]
    valid = {i.timestamp for i in active if i.is_completed}
    valid |= {i.timestamp for i in metadata.instants if i.is_completed and is_service_instant(i)}
    earliest = min(valid) if valid else SOLO_COMMIT_TIMESTAMP
    for instant in active:
        if instant.is_completed and instant.action in (ROLLBACK, RESTORE) and instant.timestamp > earliest:
            valid.update(_rolled_back(data, instant))
    valid |= {i.timestamp for i in metadata.instants if i.is_completed and i.action in (ROLLBACK, RESTORE)}
    valid |= {i.timestamp for i in metadata.instants if i.is_completed and i.action == DELTA_COMMIT
              and i.timestamp.startswith(SOLO_COMMIT_TIMESTAMP)}
    # A data instant archived where this library does not read it (before the timeline's start) counts as
    # committed for a listing (``Timeline.committed_upto``, Hudi's ``containsOrBeforeTimelineStarts``); its
    # deltacommit counts here too, or a metadata table not yet compacted past it would drop its files. Hudi's
    # archival never gets there (it waits for the metadata table's compaction); a damaged archive can.
    start = data.start
    if start is not None:
        valid |= {i.timestamp for i in metadata.instants if i.is_completed and i.action == DELTA_COMMIT
                  and i.timestamp < start}
    return frozenset(valid)
