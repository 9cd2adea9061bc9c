"""Writing instant files: requested -> inflight -> completed, each created exactly once."""

from __future__ import annotations

import logging

from hoodie_datasource import fault_points
from hoodie_datasource.timeline.instant import Instant, State
from hoodie_datasource.timeline.timeline import Timeline

logger = logging.getLogger(__name__)


def create_requested(timeline: Timeline, instant_time: str, action: str, content: bytes = b"") -> Instant:
    instant = Instant(instant_time, action, State.REQUESTED)
    timeline.storage.create_once(timeline.path_of(instant), content)
    return instant


def transition_to_inflight(timeline: Timeline, requested: Instant, content: bytes = b"") -> Instant:
    inflight = requested.with_state(State.INFLIGHT)
    timeline.storage.create_once(timeline.path_of(inflight), content)
    return inflight


def transition_to_completed(timeline: Timeline, inflight: Instant, content: bytes) -> Instant:
    """The commit point: after this the instant's files are visible to every reader.

    A create that fails may still have landed: the store made the file and the answer was lost (a
    timeout, a dropped connection), or a retry of the request found the file its first attempt made
    (a conditional create then reports a conflict). Rolling the instant back then would delete the data
    of a completed commit, so a failed create is checked by reading the file back: holding exactly
    this content, it is this commit's, and the commit stands."""
    completed = inflight.with_state(State.COMPLETED)
    path = timeline.path_of(completed)
    try:
        timeline.storage.create_once(path, content)
        fault_points.reach(fault_points.AFTER_COMPLETED_CREATE, storage=timeline.storage, path=path)
    except Exception as exc:
        if not _holds(timeline, path, content):
            raise
        logger.warning("Creating %s failed (%s), but the file is there with this commit's content: the commit "
                       "stands", timeline.storage.uri_of(path), exc)
    return completed


def _holds(timeline: Timeline, path: str, content: bytes) -> bool:
    try:
        return timeline.storage.read(path) == content
    except Exception:  # absent, or the store still unreachable: not known to have landed
        return False


def delete_pending_files(timeline: Timeline, instant: Instant) -> None:
    """Remove the requested/inflight files of a pending instant (after its data is rolled back)."""
    for state in (State.INFLIGHT, State.REQUESTED):
        timeline.storage.delete(timeline.path_of(instant.with_state(state)))
