"""An instant: (time, action, state), and its timeline file name in layouts 1 and 2."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from hoodie_datasource.errors import TimelineError

COMMIT = "commit"
DELTA_COMMIT = "deltacommit"
REPLACE_COMMIT = "replacecommit"
COMPACTION = "compaction"
LOG_COMPACTION = "logcompaction"
CLUSTERING = "clustering"
CLEAN = "clean"
ROLLBACK = "rollback"
SAVEPOINT = "savepoint"
RESTORE = "restore"
INDEXING = "indexing"

# Actions whose completed instant adds data files readers must see.
WRITE_ACTIONS = frozenset({COMMIT, DELTA_COMMIT, REPLACE_COMMIT})
# Pending actions whose completed form is another action.
_COMPLETES_AS = {COMPACTION: COMMIT, LOG_COMPACTION: DELTA_COMMIT, CLUSTERING: REPLACE_COMMIT}

_TIME = re.compile(r"^\d{14}(\d{3})?$")
_NAME = re.compile(r"^(\d{14,17})(?:_(\d{14,17}))?\.([a-z]+)(?:\.(requested|inflight))?$")


class State(Enum):
    REQUESTED = "requested"
    INFLIGHT = "inflight"
    COMPLETED = "completed"


def validate_instant_time(value: str, what: str = "instant time") -> str:
    """Return ``value`` if it is a Hudi instant time (yyyyMMddHHmmss[SSS]) or raise."""
    if not _TIME.match(value or ""):
        raise TimelineError(f"{what} must be in format yyyyMMddHHmmss or yyyyMMddHHmmssSSS, got {value!r}")
    return value


@dataclass(frozen=True, order=True)
class Instant:
    """One timeline entry. ``timestamp`` is the requested time; ``completion`` only in layout 2."""

    timestamp: str
    action: str
    state: State
    completion: str | None = None

    @property
    def is_completed(self) -> bool:
        return self.state is State.COMPLETED

    @property
    def completed_action(self) -> str:
        """The action name of this instant's completed file (compaction completes as commit)."""
        return _COMPLETES_AS.get(self.action, self.action)

    def file_name(self, layout: int = 1) -> str:
        t = self.timestamp
        if self.state is State.REQUESTED:
            return f"{t}.{self.action}.requested"
        if self.state is State.INFLIGHT:
            if self.action == COMMIT and layout == 1:
                return f"{t}.inflight"
            return f"{t}.{self.action}.inflight"
        action = self.completed_action
        if layout >= 2:
            if not self.completion:
                raise TimelineError(f"Completed instant {t} needs a completion time in timeline layout 2")
            return f"{t}_{self.completion}.{action}"
        return f"{t}.{action}"

    def with_state(self, state: State, completion: str | None = None) -> Instant:
        return Instant(self.timestamp, self.action, state, completion)

    @staticmethod
    def parse(file_name: str) -> Instant | None:
        """The instant a timeline file name describes, or None for other files."""
        match = _NAME.match(file_name)
        if not match:
            return None
        timestamp, completion, action, state = match.groups()
        if action == "inflight" and state is None:  # layout 1 COW: T.inflight
            return Instant(timestamp, COMMIT, State.INFLIGHT)
        if state is None:
            return Instant(timestamp, action, State.COMPLETED, completion)
        return Instant(timestamp, action, State(state))
