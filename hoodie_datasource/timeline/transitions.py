"""Writing instant files: requested -> inflight -> completed, each created exactly once; and asking
whether an instant is still pending now (a write task's last step)."""

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
