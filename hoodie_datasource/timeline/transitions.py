"""Writing instant files: requested -> inflight -> completed, each created exactly once; and asking
whether an instant is still pending now (a write task's last step).

Each takes the table the instant belongs to: anything with its ``storage`` and ``config`` (the table
handle, ``table.table.Table``). Instant files of pending instants are always on the active timeline."""

from __future__ import annotations

import logging
from typing import Protocol

from hoodie_datasource import fault_points
from hoodie_datasource.config.table_config import TableConfig
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.timeline.instant import Instant, State
from hoodie_datasource.timeline.timeline import instant_path, timeline_dir

logger = logging.getLogger(__name__)


class TableFiles(Protocol):
    """Where a table's files are and how its timeline is laid out."""

    @property
    def storage(self) -> Storage: ...

    @property
    def config(self) -> TableConfig: ...


def create_requested(table: TableFiles, instant_time: str, action: str, content: bytes = b"") -> Instant:
    table.config.check_writable(table.storage.uri)
    instant = Instant(instant_time, action, State.REQUESTED)
    table.storage.create_once(instant_path(table.config, instant), content)
    return instant


def transition_to_inflight(table: TableFiles, requested: Instant, content: bytes = b"") -> Instant:
    table.config.check_writable(table.storage.uri)
    inflight = requested.with_state(State.INFLIGHT)
    table.storage.create_once(instant_path(table.config, inflight), content)
    return inflight


def transition_to_completed(table: TableFiles, inflight: Instant, content: bytes) -> Instant:
    """The commit point: after this the instant's files are visible to every reader.

    A create that fails may still have landed: the store made the file and the answer was lost (a
    timeout, a dropped connection), or a retry of the request found the file its first attempt made
    (a conditional create then reports a conflict). Rolling the instant back then would delete the data
    of a completed commit, so a failed create is checked by reading the file back: holding exactly
    this content, it is this commit's, and the commit stands."""
    completed = inflight.with_state(State.COMPLETED)
    storage, path = table.storage, instant_path(table.config, completed)
    try:
        storage.create_once(path, content)
        if not table.config.is_metadata_table:  # the metadata table's instants have their own points
            fault_points.reach(fault_points.AFTER_COMPLETED_CREATE, storage=storage, path=path)
    except Exception as exc:
        if not _holds(storage, path, content):
            raise
        logger.warning("Creating %s failed (%s), but the file is there with this commit's content: the commit "
                       "stands", storage.uri_of(path), exc)
    return completed


def _holds(storage: Storage, path: str, content: bytes) -> bool:
    try:
        return storage.read(path) == content
    except Exception:  # absent, or the store still unreachable: not known to have landed
        return False


def is_still_pending(table: TableFiles, instant: Instant) -> bool:
    """Whether ``instant`` is pending on storage now: its completed file is absent and its inflight file is
    there (a rollback deletes it; a commit leaves it in place). Completed is asked first: an answer of
    pending then means the completed file was absent at a moment after every file the caller wrote before
    asking (``write.task_attempt`` relies on that). Layout 1: two HEADs on an object store; layout 2 names
    the completed file with a completion time the caller does not know: one listing of the timeline."""
    storage, config = table.storage, table.config
    if config.timeline_layout_version >= 2:
        states = {i.state for i in map(Instant.parse, storage.list_names(timeline_dir(config)))
                  if i is not None and i.timestamp == instant.timestamp and i.action == instant.action}
        return State.COMPLETED not in states and State.INFLIGHT in states
    if storage.exists(instant_path(config, instant.with_state(State.COMPLETED))):
        return False
    return storage.exists(instant_path(config, instant.with_state(State.INFLIGHT)))


def delete_pending_files(table: TableFiles, instant: Instant) -> None:
    """Remove the requested/inflight files of a pending instant (after its data is rolled back)."""
    for state in (State.INFLIGHT, State.REQUESTED):
        table.storage.delete(instant_path(table.config, instant.with_state(state)))
