"""Offsets of a streaming read: the times of completed writes, as Hudi's ``HoodieStreamSource`` uses them
(``HoodieSourceOffset``): their instant times, or on a table of version 8 and later their completion times
(``HoodieStreamSourceV2``; ``read.incremental_range``). A micro-batch from offset ``s`` to ``e`` reads the
records committed in ``(s, e]`` with an incremental read, which takes them from the commits' metadata and
never scans the table.

By instant time, a write still in flight whose instant time is earlier than a completed one (a hollow commit,
``read.hollow_commits``) holds the stream back under ``BLOCK``, Hudi's default for streams.
"""

from __future__ import annotations

from hoodie_datasource.config.stream_config import EARLIEST, LATEST, StreamReadConfig
from hoodie_datasource.read.incremental_range import range_time, writes_after
from hoodie_datasource.timeline.commit_metadata import write_stats_of
from hoodie_datasource.timeline.timeline import Timeline

START_OF_TIMELINE = "0" * 17  # Hudi's INIT_INSTANT_TS, padded: before every instant


def initial_offset(timeline: Timeline, cfg: StreamReadConfig) -> str:
    """Where a new query starts: before every commit, at the latest readable one, or at the given instant."""
    if cfg.start_offset == EARLIEST:
        return START_OF_TIMELINE
    if cfg.start_offset == LATEST:
        readable = writes_after(timeline, cfg.hollow_commits)
        return range_time(readable[-1], timeline.ranges_by_completion_time) if readable else START_OF_TIMELINE
    return cfg.start_offset


def end_offset(timeline: Timeline, cfg: StreamReadConfig, start: str, max_instants: int | None = None,
               max_rows: int | None = None, cap: str | None = None) -> str:
    """The end of the next micro-batch from ``start``: the latest readable commit (not after ``cap``, the
    target of ``Trigger.AvailableNow``), or fewer: at most ``max_instants`` commits, or whole commits
    holding about ``max_rows`` rows (at least one commit). ``start`` when there is nothing new."""
    by_completion = timeline.ranges_by_completion_time
    new = [i for i in writes_after(timeline, cfg.hollow_commits, start)
           if cap is None or range_time(i, by_completion) <= cap]
    if not new:
        return start
    if max_instants is not None:
        return range_time(new[:max_instants][-1], by_completion)
    if max_rows is not None:
        taken, rows = new[0], 0
        for instant in new:
            rows += sum(s.get("numInserts", 0) + s.get("numUpdateWrites", 0) + s.get("numDeletes", 0)
                        for s in write_stats_of(timeline.read_metadata(instant)))
            if rows > max_rows and instant is not new[0]:
                break
            taken = instant
        return range_time(taken, by_completion)
    return range_time(new[-1], by_completion)
