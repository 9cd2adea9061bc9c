"""Writing instant files: requested -> inflight -> completed, each created exactly once."""

from __future__ import annotations

from hoodie_datasource.timeline.instant import Instant, State
from hoodie_datasource.timeline.timeline import Timeline


def create_requested(timeline: Timeline, instant_time: str, action: str, content: bytes = b"") -> Instant:
    instant = Instant(instant_time, action, State.REQUESTED)
    timeline.storage.create_once(timeline.path_of(instant), content)
    return instant


def transition_to_inflight(timeline: Timeline, requested: Instant, content: bytes = b"") -> Instant:
    inflight = requested.with_state(State.INFLIGHT)
    timeline.storage.create_once(timeline.path_of(inflight), content)
    return inflight


def transition_to_completed(timeline: Timeline, inflight: Instant, content: bytes) -> Instant:
    """The commit point: after this the instant's files are visible to every reader."""
    completed = inflight.with_state(State.COMPLETED)
    timeline.storage.create_once(timeline.path_of(completed), content)
    return completed


def delete_pending_files(timeline: Timeline, instant: Instant) -> None:
    """Remove the requested/inflight files of a pending instant (after its data is rolled back)."""
    for state in (State.INFLIGHT, State.REQUESTED):
        timeline.storage.delete(timeline.path_of(instant.with_state(state)))
