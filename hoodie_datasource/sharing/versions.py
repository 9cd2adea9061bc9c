"""Delta versions of a hoodie table: version n is the table's n-th completed write instant (commit, deltacommit,
replacecommit), oldest first, version 0 being the first, as a Delta table's first commit is version 0.

The timeline this numbers is the active one and, in timeline layout 1, the archived one (``Timeline.load`` reads
the archive log), so archival moves no version; cleaning removes files, never instants, so it moves none either
(a read as of a version whose files the cleaner removed fails in ``read.read_window``). A table whose older
instants were archived where this library does not read them (layout 2's LSM history) cannot be numbered: its
first readable instant is not its first write. A rollback of the latest completed write takes its version away;
the next write takes that number again, as a restore of a Delta table makes its versions mean other commits.

Times: an instant time is ``yyyyMMddHHmmssSSS`` in the table's ``hoodie.table.timeline.timezone`` (``UTC``, or
``LOCAL``, Hudi's default: the writer's zone, taken here as the server's); a version's timestamp is its instant
time in epoch milliseconds. A timestamp maps to the latest version at or before it (Delta's
``DeltaHistoryManager.getActiveCommitAtTime``); ``startingTimestamp`` of a change feed to the first at or after it.
"""

from __future__ import annotations

import bisect
import datetime as dt
from dataclasses import dataclass

from hoodie_datasource.errors import SharingRequestError, UnsupportedTableError
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.instant_time import FORMAT

TIMEZONE_KEY = "hoodie.table.timeline.timezone"


def parse_timestamp(value: str) -> int:
    """Epoch milliseconds of a protocol timestamp (ISO 8601, ``2022-01-01T00:00:00Z``; no zone means UTC)."""
    try:
        moment = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise SharingRequestError(f"Timestamp {value!r} is not in the ISO 8601 format the protocol uses, "
                                  "such as 2022-01-01T00:00:00Z") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return int(moment.timestamp() * 1000)


@dataclass(frozen=True)
class TableVersions:
    instants: tuple[str, ...]  # completed write instants, oldest first: version i is instants[i]
    times_ms: tuple[int, ...]  # each instant's time in epoch milliseconds

    @staticmethod
    def of(table: Table) -> TableVersions:
        timeline = table.timeline
        if timeline.unread_archive:
            raise UnsupportedTableError(
                f"Table {table.uri} archived instants where this library does not read them (timeline layout "
                f"{table.config.timeline_layout_version}), so its versions cannot be numbered from its first write")
        instants = tuple(i.timestamp for i in timeline.completed())
        local = dict(table.config.raw).get(TIMEZONE_KEY, "LOCAL").upper() != "UTC"
        return TableVersions(instants, tuple(_epoch_ms(t, local) for t in instants))

    @property
    def latest(self) -> int:
        """The latest version; -1 for a table without a completed write."""
        return len(self.instants) - 1

    def instant(self, version: int) -> str:
        if not 0 <= version <= self.latest:
            raise SharingRequestError(
                f"Version {version} does not exist: the table's versions are 0 to {self.latest}"
                if self.instants else f"Version {version} does not exist: the table has no version yet")
        return self.instants[version]

    def timestamp_ms(self, version: int) -> int:
        return self.times_ms[version]

    def at_or_before(self, timestamp: str) -> int:
        """The latest version committed at or before ``timestamp``."""
        at = parse_timestamp(timestamp)
        version = bisect.bisect_right(self.times_ms, at) - 1
        if version < 0:
            first = _iso(self.times_ms[0]) if self.times_ms else "none"
            raise SharingRequestError(f"Timestamp {timestamp} is before the table's first version "
                                      f"(version 0 at {first})")
        return version

    def at_or_after(self, timestamp: str) -> int:
        """The first version committed at or after ``timestamp``."""
        at = parse_timestamp(timestamp)
        version = bisect.bisect_left(self.times_ms, at)
        if version > self.latest:
            last = _iso(self.times_ms[-1]) if self.times_ms else "none"
            raise SharingRequestError(f"Timestamp {timestamp} is after the table's latest version "
                                      f"({self.latest} at {last})")
        return version


def _epoch_ms(instant: str, local: bool) -> int:
    moment = dt.datetime.strptime(instant.ljust(17, "0")[:17] + "000", FORMAT)
    return int((moment.astimezone() if local else moment.replace(tzinfo=dt.timezone.utc)).timestamp() * 1000)


def _iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
