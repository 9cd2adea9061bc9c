"""New instant times: ``yyyyMMddHHmmssSSS`` in UTC, strictly after every existing instant."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

FORMAT = "%Y%m%d%H%M%S%f"


def format_instant(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime(FORMAT)[:17]


def parse_instant(value: str) -> datetime:
    padded = value.ljust(17, "0")
    return datetime.strptime(padded + "000", FORMAT).replace(tzinfo=timezone.utc)


def new_instant_time(after: str | None = None) -> str:
    """Now, or one millisecond after ``after`` when the clock has not moved past it."""
    candidate = format_instant(datetime.now(timezone.utc))
    if after is not None and candidate <= after.ljust(17, "0"):
        candidate = format_instant(parse_instant(after) + timedelta(milliseconds=1))
    return candidate
