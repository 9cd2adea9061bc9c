"""New instant times: ``yyyyMMddHHmmssSSS`` in UTC, strictly after every existing instant."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

FORMAT = "%Y%m%d%H%M%S%f"


def format_instant(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime(FORMAT)[:17]


def parse_instant(value: str) -> datetime:
    padded = value.ljust(17, "0")
    return datetime.strptime(padded + "000", FORMAT).replace(tzinfo=timezone.utc)


def utc_now() -> datetime:
    """The clock instant times are read from."""
    return datetime.now(timezone.utc)


def new_instant_time(after: str | None = None) -> str:
    """Now, or one millisecond after ``after`` when the clock has not moved past it.

    ``after`` is the latest instant on the timeline, listed under the table lock with optimistic
    concurrency control: a writer whose clock is behind another's still gets a later instant time than
    every instant the other created, so instant times stay unique and increasing across writers whatever
    their clocks say (tests/storage/test_clock_skew.py). Hudi 1.x reads the clock under a lock and then
    sleeps ``hoodie.time.generator.max_expected_clock_skew_ms`` (200 ms by default) before releasing it
    (``SkewAdjustingTimeGenerator``, TrueTime style), which holds only while the skew stays under that
    bound; the timeline bound here holds for any skew. This library's storage lock and heartbeats still
    assume clocks that agree to well within their lease and expiry (``transaction.storage_lock``)."""
    candidate = format_instant(utc_now())
    if after is not None and candidate <= after.ljust(17, "0"):
        candidate = format_instant(parse_instant(after) + timedelta(milliseconds=1))
    return candidate
