"""Writing instant files: requested -> inflight -> completed, each created exactly once; and asking
whether an instant is still pending now (a write task's last step)."""

from __future__ import annotations

import logging

from hoodie_datasource import fault_points
from hoodie_datasource.timeline.instant import Instant, State
from hoodie_datasource.timeline.timeline import Timeline

logger = logging.getLogger(__name__)


def create_requested(timeline: Timeline, instant_time: str, action: str, content: bytes = b"") -> Instant:
    timeline.config.check_writable(timeline.storage.uri)
    instant = Instant(instant_time, action, State.REQUESTED)
    timeline.storage.create_once(timeline.path_of(instant), content)
    return instant


def transition_to_inflight(timeline: Timeline, requested: Instant, content: bytes = b"") -> Instant:
    timeline.config.check_writable(timeline.storage.uri)
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


def is_still_pending(timeline: Timeline, instant: Instant) -> bool:
    """Whether ``instant`` is pending on storage now: its completed file is absent and its inflight file is
    there (a rollback deletes it; a commit leaves it in place). Completed is asked first: an answer of
    pending then means the completed file was absent at a moment after every file the caller wrote before
    asking (``write.task_attempt`` relies on that). Layout 1: two HEADs on an object store; layout 2 names
    the completed file with a completion time the caller does not know: one listing of the timeline."""
    storage = timeline.storage
    if timeline.config.timeline_layout_version >= 2:
        states = {i.state for i in map(Instant.parse, storage.list_names(timeline.directory))
                  if i is not None and i.timestamp == instant.timestamp and i.action == instant.action}
        return State.COMPLETED not in states and State.INFLIGHT in states
    if storage.exists(timeline.path_of(instant.with_state(State.COMPLETED))):
        return False
    return storage.exists(timeline.path_of(instant.with_state(State.INFLIGHT)))


def delete_pending_files(timeline: Timeline, instant: Instant) -> None:
    """Remove the requested/inflight files of a pending instant (after its data is rolled back)."""
    for state in (State.INFLIGHT, State.REQUESTED):
        timeline.storage.delete(timeline.path_of(instant.with_state(state)))
