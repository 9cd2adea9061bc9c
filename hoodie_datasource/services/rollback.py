"""Rolling back an instant: removing every data file it wrote, then its instant files.

A failed write leaves a requested/inflight instant and maybe some data files, each of which has a
marker. Rollback deletes the marked files (and, in case markers were lost, any base file named
with that instant), then the marker folder and the pending instant files. Rolling back the latest
*completed* write first deletes its completed instant file, so readers stop seeing its files at
once, then cleans up the same way.
"""

from __future__ import annotations

import logging
import os

from hoodie_datasource.errors import TimelineError
from hoodie_datasource.storage.local import remove_if_exists
from hoodie_datasource.table.file_names import BaseFileName
from hoodie_datasource.table.fs_view import list_partitions
from hoodie_datasource.timeline.commit_metadata import write_stats_of
from hoodie_datasource.timeline.instant import Instant
from hoodie_datasource.timeline.timeline import Timeline
from hoodie_datasource.timeline.transitions import delete_pending_files
from hoodie_datasource.write.markers import delete_marker_dir, marked_files

logger = logging.getLogger(__name__)


def _files_named_with(base_path: str, partitioned: bool, instant_time: str) -> list[str]:
    found = []
    for partition in list_partitions(base_path, partitioned):
        directory = os.path.join(base_path, partition) if partition else base_path
        for name in os.listdir(directory):
            parsed = BaseFileName.parse(name)
            if parsed is not None and parsed.instant_time == instant_time:
                found.append(f"{partition}/{name}" if partition else name)
    return found


def delete_instant_data_files(timeline: Timeline, instant: Instant, extra: list[str] | None = None) -> int:
    """Delete every data file ``instant`` wrote (marked, listed in ``extra``, or named with it)."""
    base_path = timeline.base_path
    files = set(marked_files(base_path, instant.timestamp)) | set(extra or ())
    files |= set(_files_named_with(base_path, timeline.config.is_partitioned, instant.timestamp))
    deleted = sum(remove_if_exists(os.path.join(base_path, f)) for f in files)
    delete_marker_dir(base_path, instant.timestamp)
    return deleted


def rollback_pending(timeline: Timeline, instant: Instant) -> None:
    if instant.is_completed:
        raise TimelineError(f"Instant {instant.timestamp} is completed; use rollback_completed")
    deleted = delete_instant_data_files(timeline, instant)
    delete_pending_files(timeline, instant)
    logger.info("Rolled back pending %s %s (%d data files removed)", instant.action, instant.timestamp, deleted)


def rollback_failed_writes(timeline: Timeline) -> list[str]:
    """Roll back every pending write instant (single-writer model: they belong to dead writers)."""
    rolled = []
    for instant in timeline.pending():
        if instant.action in ("commit", "deltacommit", "replacecommit"):
            rollback_pending(timeline, instant)
            rolled.append(instant.timestamp)
    return rolled


def rollback_completed(timeline: Timeline, instant_time: str) -> None:
    """Undo the latest completed write; older ones cannot be rolled back out of order."""
    latest = timeline.last_completed_write()
    if latest is None or latest.timestamp != instant_time:
        raise TimelineError(
            f"Only the latest completed write can be rolled back; latest is "
            f"{latest.timestamp if latest else 'none'}, asked for {instant_time}"
        )
    written = [s["path"] for s in write_stats_of(timeline.read_metadata(latest)) if s.get("path")]
    remove_if_exists(timeline.path_of(latest))  # readers stop seeing the instant here
    deleted = delete_instant_data_files(timeline, latest, written)
    delete_pending_files(timeline, latest)
    logger.info("Rolled back completed %s %s (%d data files removed)", latest.action, instant_time, deleted)
