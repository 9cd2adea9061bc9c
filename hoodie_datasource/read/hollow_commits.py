"""Hollow commits: a write still in flight whose instant time is earlier than a completed write's.

An incremental consumer that reads past the completed write and keeps its time as the next start skips
the earlier write's records for good once that write completes. Hudi's policies
(``hoodie.datasource.read.handle.hollow.commit``, ``TimelineUtils.handleHollowCommitIfNeeded``): ``FAIL``
(the default for batch incremental reads) raises when a write in flight lies in the range; ``BLOCK`` (the
default for streams) reads only up to the last completed write before the earliest write in flight.
Pending compactions do not count: the records they rewrite keep their commit times."""

from __future__ import annotations

from hoodie_datasource.errors import ReadWindowError
from hoodie_datasource.timeline.instant import WRITE_ACTIONS, Instant
from hoodie_datasource.timeline.timeline import Timeline


def _first_in_flight(timeline: Timeline, begin: str) -> str | None:
    return min((i.timestamp for i in timeline.pending() if i.action in WRITE_ACTIONS and i.timestamp > begin),
               default=None)


def readable_writes(timeline: Timeline, policy: str, begin: str = "") -> list[Instant]:
    """The completed writes after ``begin`` an incremental consumer may read under ``policy``."""
    completed = [i for i in timeline.completed() if i.timestamp > begin]
    first = _first_in_flight(timeline, begin)
    if first is None or not completed or completed[-1].timestamp < first:
        return completed
    if policy == "FAIL":
        raise ReadWindowError(
            f"Write {first} is still in flight while later writes completed (a hollow commit): reading past it "
            f"would skip its records once it completes; read up to an instant before {first}, wait for it, or "
            "set hoodie.datasource.read.handle.hollow.commit=BLOCK to read only up to it")
    return [i for i in completed if i.timestamp < first]


def readable_end(timeline: Timeline, policy: str, begin: str, end: str) -> str:
    """``end``, or under ``BLOCK`` the last readable write before a write in flight in ``(begin, end]``."""
    first = _first_in_flight(timeline, begin)
    if first is None or first > end:
        return end
    readable = [i for i in readable_writes(timeline, policy, begin) if i.timestamp <= end]
    return readable[-1].timestamp if readable else begin
