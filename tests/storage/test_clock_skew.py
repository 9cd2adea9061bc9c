"""Writers whose clocks disagree by an hour, on local disk and S3 (moto): instant times stay unique and
increasing in the order writers take the table lock, because a new instant time is the later of the
writer's clock and one millisecond after the latest instant on the timeline listed under the lock
(``timeline.instant_time.new_instant_time``); no row is lost. JVM-free."""

from __future__ import annotations

import multiprocessing
from datetime import timedelta

import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline import instant_time
from tests.server_process import join_or_kill
from tests.storage import skew_workers
from tests.storage.tables import Place, pairs, rows, snapshot

TIMEOUT_S = 120.0
HOUR_S = 3600.0
OCC = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control", "hoodie.write.lock.provider": "storage",
       "hoodie.write.lock.wait_time_ms": "20000", "hoodie.write.lock.wait_time_ms_between_retry": "50",
       "hoodie.write.num.retries.on.conflict": "3"}


def run_writers(place: Place, steps: dict[str, list], clock_back_s: dict[str, float]) -> dict[str, tuple]:
    """Both writers in spawned children, step by step; returns {tag: (events, clock readings)}."""
    context = multiprocessing.get_context("spawn")
    barrier, results, sequence = context.Barrier(len(steps)), context.Queue(), context.Value("i", 0)
    options = place.write_options(**OCC)
    children = [context.Process(target=skew_workers.write_in_turns,
                                args=(place.uri, options, batches, clock_back_s[tag], sequence, tag, barrier, results))
                for tag, batches in steps.items()]
    for child in children:
        child.start()
    try:
        found = {}
        for _ in children:
            tag, events, readings = results.get(timeout=TIMEOUT_S)
            found[tag] = (events, readings)
        return found
    finally:
        join_or_kill(children)


def in_order(found: dict[str, tuple], event: str) -> list[str]:
    """The instant times of ``event`` (requested or completed) across both writers, in the order it happened."""
    return [time for _, time, _ in sorted((e for events, _ in found.values() for e in events if e[0] == event),
                                          key=lambda e: e[2])]


def completed_instants(place: Place) -> list[str]:
    storage = place.storage()
    return [i.timestamp for i in Table.load(storage).timeline.completed()]


def batch(tag: str, step: int):
    """Three rows of writer ``tag`` at ``step``, in a partition of the writer's own (no write conflicts)."""
    data = rows(f"{tag}{step}")
    return data.set_column(2, "p", [[tag] * data.num_rows])


def test_a_writer_an_hour_behind_writing_in_turns_with_another(place: Place) -> None:
    write_local(place.uri, rows("seed"), place.write_options(**OCC))
    steps = 4
    plan = {"fast": [batch("fast", s) if s % 2 == 0 else None for s in range(steps)],
            "slow": [batch("slow", s) if s % 2 == 1 else None for s in range(steps)]}
    found = run_writers(place, plan, {"fast": 0.0, "slow": HOUR_S})

    committed = in_order(found, "completed")
    assert len(committed) == steps and len(set(committed)) == steps, found
    assert committed == sorted(committed), "completed instants are not increasing in commit order"
    assert in_order(found, "requested") == committed
    # each time, the slow writer's clock read earlier than the instant committed just before its write,
    # so its clock alone would have put its write before that one: the timeline decided
    slow_instants = [t for event, t, _ in found["slow"][0] if event == "completed"]
    for reading, instant in zip(found["slow"][1], slow_instants, strict=True):
        previous = committed[committed.index(instant) - 1]
        assert reading < previous < instant, (reading, previous, instant)
    assert completed_instants(place)[1:] == committed
    expected = pairs(rows("seed")) + [p for batches in plan.values() for b in batches if b is not None for p in pairs(b)]
    assert snapshot(place) == sorted(expected)


def test_a_writer_an_hour_behind_writing_at_the_same_time_as_another(place: Place) -> None:
    """Both write at every step; the lock orders the requests. A write requested earlier may complete later
    (as in Hudi, the instant time is the write's start, not its completion), so completion order is not
    checked here; every instant time is unique and they increase in the order they were requested."""
    write_local(place.uri, rows("seed"), place.write_options(**OCC))
    steps = 2
    plan = {tag: [batch(tag, s) for s in range(steps)] for tag in ("fast", "slow")}
    found = run_writers(place, plan, {"fast": 0.0, "slow": HOUR_S})

    requested = in_order(found, "requested")
    assert len(requested) == 2 * steps and len(set(requested)) == 2 * steps, found
    assert requested == sorted(requested), "instant times are not increasing in the order they were requested"
    assert sorted(in_order(found, "completed")) == requested
    assert completed_instants(place)[1:] == requested
    expected = pairs(rows("seed")) + [p for batches in plan.values() for b in batches for p in pairs(b)]
    assert snapshot(place) == sorted(expected)


@pytest.mark.parametrize("mode", ["single_writer", "optimistic_concurrency_control"])
def test_a_clock_behind_the_last_instant_still_writes_after_it(place: Place, monkeypatch, mode: str) -> None:
    options = place.write_options(**{**OCC, "hoodie.write.concurrency.mode": mode})
    first = write_local(place.uri, rows("one"), options)
    real = instant_time.utc_now
    monkeypatch.setattr(instant_time, "utc_now", lambda: real() - timedelta(hours=1))
    assert instant_time.format_instant(instant_time.utc_now()) < first
    second = write_local(place.uri, rows("two"), options)
    third = write_local(place.uri, rows("three"), options)
    assert first < second < third
    assert completed_instants(place) == [first, second, third]
    assert snapshot(place) == sorted(pairs(rows("one")) + pairs(rows("two")) + pairs(rows("three")))
