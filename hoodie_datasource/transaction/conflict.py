"""The conflict check a write makes just before it completes (Hudi's
``SimpleConcurrentFileWritesConflictResolutionStrategy``): the write conflicts with

- every write that completed after it started (completed in the timeline listed now, not in the one it
  loaded at its start) and touched one of its file groups (partition, fileId: write stats, and the file
  groups a replacecommit replaced), and
- every compaction or clustering scheduled after its start, still pending, whose plan covers one of its
  file groups.

File groups that one of the writes created are new (unique file ids), so writes inserting into fresh
file groups of the same partitions never conflict; an update, or an insert into a small file, does."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hoodie_datasource.errors import HoodieWriteConflictError
from hoodie_datasource.timeline.commit_metadata import write_stats_of
from hoodie_datasource.timeline.instant import CLUSTERING, COMPACTION, REPLACE_COMMIT, WRITE_ACTIONS, Instant, State
from hoodie_datasource.timeline.timeline import Timeline

FileGroup = tuple[str, str]  # (partition path, file id)


def file_groups_of(metadata: Mapping[str, Any]) -> set[FileGroup]:
    """The file groups a completed instant wrote or replaced, from its metadata."""
    touched = {(s.get("partitionPath") or "", s["fileId"]) for s in write_stats_of(metadata) if s.get("fileId")}
    for partition, file_ids in (metadata.get("partitionToReplaceFileIds") or {}).items():
        touched.update((partition, fid) for fid in file_ids or ())
    return touched


def _planned_file_groups(timeline: Timeline, instant: Instant) -> set[FileGroup]:
    """The file groups a pending compaction or clustering plans to rewrite."""
    try:
        plan = timeline.read_plan(instant.with_state(State.REQUESTED))
    except FileNotFoundError:  # withdrawn, or completed, since the listing
        return set()
    if instant.action == COMPACTION:
        return {(op.get("partitionPath") or "", op["fileId"]) for op in plan.get("operations") or ()}
    groups = ((plan.get("clusteringPlan") or {}).get("inputGroups")) or ()
    return {(s.get("partitionPath") or "", s["fileId"]) for g in groups for s in g.get("slices") or () if s.get("fileId")}


def check_conflicts(started: Timeline, now: Timeline, own: str, touched: Iterable[FileGroup]) -> None:
    """Raise ``HoodieWriteConflictError`` naming the other instant and the shared file groups when the
    write ``own``, which loaded ``started`` at its start, conflicts with an instant of ``now``."""
    mine = set(touched)
    if not mine:
        return
    seen = {i.timestamp for i in started.instants}
    done_at_start = {i.timestamp for i in started.instants if i.is_completed}
    for instant in now.instants:
        if instant.timestamp == own:
            continue
        if instant.is_completed and instant.timestamp not in done_at_start and instant.action in WRITE_ACTIONS:
            shared = mine & file_groups_of(now.read_metadata(instant))
        elif (not instant.is_completed and instant.timestamp not in seen
              and instant.action in (COMPACTION, CLUSTERING, REPLACE_COMMIT)):
            shared = mine & _planned_file_groups(now, instant)
        else:
            continue
        if shared:
            groups = ", ".join(f"{p or '<root>'}/{f}" for p, f in sorted(shared)[:5])
            more = f" and {len(shared) - 5} more" if len(shared) > 5 else ""
            raise HoodieWriteConflictError(
                f"Write {own} conflicts with {instant.action} {instant.timestamp}, which "
                f"{'completed' if instant.is_completed else 'was scheduled'} after {own} started and touches "
                f"the same file groups: {groups}{more}"
            )
