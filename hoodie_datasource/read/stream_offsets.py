"""Offsets of a streaming read: completed write instants, as Hudi's ``HoodieStreamSource`` uses them
(``HoodieSourceOffset``: a commit time). A micro-batch from offset ``s`` to ``e`` reads the records
committed in ``(s, e]`` with an incremental read, which takes them from the commits' metadata and never
scans the table.

A write still in flight whose instant time is earlier than a completed one is a hollow commit: reading
past the completed one would skip the earlier write's records for good once it completes. Under
``BLOCK`` (Hudi's default for streams) the latest offset stops before the earliest write in flight;
``FAIL`` raises instead.
"""

from __future__ import annotations

from hoodie_datasource.config.stream_config import EARLIEST, LATEST, StreamReadConfig
from hoodie_datasource.errors import ReadWindowError
from hoodie_datasource.timeline.commit_metadata import write_stats_of
from hoodie_datasource.timeline.instant import WRITE_ACTIONS, Instant
from hoodie_datasource.timeline.timeline import Timeline

START_OF_TIMELINE = "0" * 17  # Hudi's INIT_INSTANT_TS, padded: before every instant


def readable_writes(timeline: Timeline, cfg: StreamReadConfig) -> list[Instant]:
    """The completed writes a stream may read now: all of them, except under ``BLOCK`` those at or after
    the earliest write in flight (a hollow commit)."""
    completed = timeline.completed()
    in_flight = [i.timestamp for i in timeline.pending() if i.action in WRITE_ACTIONS]
    if not in_flight:
        return completed
    first = min(in_flight)
    if cfg.hollow_commits == "FAIL" and completed and completed[-1].timestamp > first:
        raise ReadWindowError(
            f"Write {first} is still in flight while later writes completed (a hollow commit): reading past it "
            f"would skip its records; wait for it, or set hoodie.datasource.read.handle.hollow.commit=BLOCK")
    return [i for i in completed if i.timestamp < first]


def initial_offset(timeline: Timeline, cfg: StreamReadConfig) -> str:
    """Where a new query starts: before every commit, at the latest readable one, or at the given instant."""
    if cfg.start_offset == EARLIEST:
        return START_OF_TIMELINE
    if cfg.start_offset == LATEST:
        readable = readable_writes(timeline, cfg)
        return readable[-1].timestamp if readable else START_OF_TIMELINE
    return cfg.start_offset


def end_offset(timeline: Timeline, cfg: StreamReadConfig, start: str, max_instants: int | None = None,
               max_rows: int | None = None, cap: str | None = None) -> str:
    """The end of the next micro-batch from ``start``: the latest readable commit (not after ``cap``, the
    target of ``Trigger.AvailableNow``), or fewer: at most ``max_instants`` commits, or whole commits
    holding about ``max_rows`` rows (at least one commit). ``start`` when there is nothing new."""
    new = [i for i in readable_writes(timeline, cfg) if i.timestamp > start and (cap is None or i.timestamp <= cap)]
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
