"""Writing instant files: requested -> inflight -> completed, each created exactly once."""

from __future__ import annotations

import os

from hoodie_datasource.storage.local import create_once, remove_if_exists
from hoodie_datasource.timeline.instant import Instant, State
from hoodie_datasource.timeline.timeline import Timeline


def create_requested(timeline: Timeline, instant_time: str, action: str, content: bytes = b"") -> Instant:
    instant = Instant(instant_time, action, State.REQUESTED)
    os.makedirs(timeline.directory, exist_ok=True)
    create_once(timeline.path_of(instant), content)
    return instant


def transition_to_inflight(timeline: Timeline, requested: Instant, content: bytes = b"") -> Instant:
    inflight = requested.with_state(State.INFLIGHT)
    create_once(timeline.path_of(inflight), content)
    return inflight


def transition_to_completed(timeline: Timeline, inflight: Instant, content: bytes) -> Instant:
    """The commit point: after this the instant's files are visible to every reader."""
    completed = inflight.with_state(State.COMPLETED)
    create_once(timeline.path_of(completed), content)
    return completed


def delete_pending_files(timeline: Timeline, instant: Instant) -> None:
    """Remove the requested/inflight files of a pending instant (after its data is rolled back)."""
    for state in (State.INFLIGHT, State.REQUESTED):
        remove_if_exists(timeline.path_of(instant.with_state(state)))
