"""Offsets of a streaming read: completed write instants, as Hudi's ``HoodieStreamSource`` uses them
(``HoodieSourceOffset``: a commit time). A micro-batch from offset ``s`` to ``e`` reads the records
committed in ``(s, e]`` with an incremental read, which takes them from the commits' metadata and never
scans the table.

A write still in flight whose instant time is earlier than a completed one (a hollow commit,
``read.hollow_commits``) holds the stream back under ``BLOCK``, Hudi's default for streams.
"""

from __future__ import annotations

from hoodie_datasource.config.stream_config import EARLIEST, LATEST, StreamReadConfig
from hoodie_datasource.read.hollow_commits import readable_writes
from hoodie_datasource.timeline.commit_metadata import write_stats_of
from hoodie_datasource.timeline.timeline import Timeline

START_OF_TIMELINE = "0" * 17  # Hudi's INIT_INSTANT_TS, padded: before every instant


def initial_offset(timeline: Timeline, cfg: StreamReadConfig) -> str:
    """Where a new query starts: before every commit, at the latest readable one, or at the given instant."""
    if cfg.start_offset == EARLIEST:
        return START_OF_TIMELINE
    if cfg.start_offset == LATEST:
        readable = readable_writes(timeline, cfg.hollow_commits)
        return readable[-1].timestamp if readable else START_OF_TIMELINE
    return cfg.start_offset


def end_offset(timeline: Timeline, cfg: StreamReadConfig, start: str, max_instants: int | None = None,
               max_rows: int | None = None, cap: str | None = None) -> str:
    """The end of the next micro-batch from ``start``: the latest readable commit (not after ``cap``, the
    target of ``Trigger.AvailableNow``), or fewer: at most ``max_instants`` commits, or whole commits
    holding about ``max_rows`` rows (at least one commit). ``start`` when there is nothing new."""
    new = [i for i in readable_writes(timeline, cfg.hollow_commits, start) if cap is None or i.timestamp <= cap]
    if not new:
        return start
    if max_instants is not None:
        return new[:max_instants][-1].timestamp
    if max_rows is not None:
        taken, rows = new[0], 0
        for instant in new:
            rows += sum(s.get("numInserts", 0) + s.get("numUpdateWrites", 0) + s.get("numDeletes", 0)
                        for s in write_stats_of(timeline.read_metadata(instant)))
            if rows > max_rows and instant is not new[0]:
                break
            taken = instant
        return taken.timestamp
    return new[-1].timestamp
