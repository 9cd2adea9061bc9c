"""An instant: (time, action, state), and its timeline file name in layouts 1 and 2."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
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
# the metadata table's service instants are an instant plus a 3-digit suffix, or two: the compaction (001) of a
# partition's initialisation (010 and on) after a rollback forced one (HoodieTableMetadataUtil)
_NAME = re.compile(r"^(\d{14}(?:\d{3}){0,3})(?:_(\d{14,17}))?\.([a-z]+)(?:\.(requested|inflight))?$")


class State(Enum):
    REQUESTED = "requested"
    INFLIGHT = "inflight"
    COMPLETED = "completed"


QUERY_INSTANT_FORMATS = (
    "yyyyMMddHHmmss", "yyyyMMddHHmmssSSS", "yyyy-MM-dd", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm:ss.SSS",
)
_DATE_FORM = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{3}))?)?$")


def validate_instant_time(value: str, what: str = "instant time") -> str:
    """Return ``value`` if it is a Hudi instant time (yyyyMMddHHmmss[SSS] of a real date and time) or raise."""
    try:
        if _TIME.match(value or ""):
            datetime.strptime(value[:14], "%Y%m%d%H%M%S")
            return value
    except ValueError:
        pass
    raise TimelineError(f"{what} must be in format yyyyMMddHHmmss or yyyyMMddHHmmssSSS, got {value!r}")


def query_instant_time(value: str, what: str) -> str:
    """The instant time a query option names, written in one of ``QUERY_INSTANT_FORMATS`` (the forms
    Hudi's ``HoodieSqlCommonUtils.formatQueryInstant`` accepts; ``T`` may stand for the space) or as
    zeros (``000``: the start of the timeline, as Hudi's incremental pulls use). A date is a re-spelling
    of the instant's digits, so it is in the timeline's time zone (UTC for tables this library writes)."""
    text = (value or "").strip()
    if text and set(text) == {"0"}:
        return text.ljust(17, "0")
    match = _DATE_FORM.match(text)
    if match:  # a date: the 17-digit instant of its first millisecond, as Hudi's formatDate gives
        day, time, millis = match.groups()
        digits = day.replace("-", "") + (time or "00:00:00").replace(":", "") + (millis or "000")
    else:
        digits = text
    try:
        return validate_instant_time(digits)
    except TimelineError:
        raise TimelineError(
            f"{what} must be in format {', '.join(QUERY_INSTANT_FORMATS)} (a 'T' may replace the space; "
            f"a valid date and time), or '000' for the start of the timeline; got {value!r}"
        ) from None


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
