"""Code run in child processes by the clock-skew tests (tests/storage/test_clock_skew.py).

A child may set its instant-time clock back (``instant_time.utc_now``, patched in that child only: the
other writer, the storage lock and the heartbeats keep the real clock). Every write records, through a
counter shared by the children and taken while the table lock is held, the order in which instants were
requested and completed across both writers."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from multiprocessing.sharedctypes import Synchronized
from multiprocessing.synchronize import Barrier
from typing import Any

import pyarrow as pa

from hoodie_datasource.client import write_client
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline import instant_time
from hoodie_datasource.timeline.instant import Instant

BARRIER_TIMEOUT_S = 120.0  # only guards against a hang when the other child died


def set_clock_back(seconds: float) -> None:
    """This process's instant times are read from a clock ``seconds`` behind the real one."""
    real = instant_time.utc_now
    instant_time.utc_now = lambda: real() - timedelta(seconds=seconds)


def _record_order(sequence: Synchronized, events: list[tuple[str, str, int]]) -> None:
    """Record ``(event, instant time, position)`` for each requested and completed instant of this child,
    the position counting such events of both children (each happens under the table lock)."""
    create_requested, transition_to_completed = write_client.create_requested, write_client.transition_to_completed

    def next_position() -> int:
        with sequence.get_lock():
            sequence.value += 1
            return sequence.value

    def requested(table: Table, time: str, action: str, content: bytes = b"") -> Instant:
        instant = create_requested(table, time, action, content)
        events.append(("requested", time, next_position()))
        return instant

    def completed(table: Table, inflight: Instant, content: bytes) -> Instant:
        instant = transition_to_completed(table, inflight, content)
        events.append(("completed", inflight.timestamp, next_position()))
        return instant

    write_client.create_requested, write_client.transition_to_completed = requested, completed


def write_in_turns(uri: str, options: Mapping[str, str], batches: list[pa.Table | None], clock_back_s: float,
                   sequence: Synchronized, tag: str, barrier: Barrier, results: Any) -> None:
    """Step by step with the other child (a barrier between steps), write the step's batch (None: the
    other child's turn, or both write at once when both have one). Puts ``(tag, events, clock readings)``,
    the readings being this child's instant clock just before each write."""
    set_clock_back(clock_back_s)
    events: list[tuple[str, str, int]] = []
    _record_order(sequence, events)
    readings = []
    for data in batches:
        barrier.wait(BARRIER_TIMEOUT_S)
        if data is not None:
            readings.append(instant_time.format_instant(instant_time.utc_now()))
            write_local(uri, data, options)
    results.put((tag, events, readings))
