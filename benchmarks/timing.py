"""Interleaved measurement: every case of a group runs once per round (A, B, C, A, B, C, ...), so
load on a shared machine lands on all of them alike. Preparing (restoring a fresh copy of the
table) and collecting facts afterwards (bytes written, stage timings) are outside the timed region.
"""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchmarks.memory import Peak, PeakMemory

logger = logging.getLogger(__name__)


def _nothing() -> None:
    return None


def _no_facts() -> dict[str, Any]:
    return {}


@dataclass
class Case:
    key: str
    label: str
    run: Callable[[], object]
    prepare: Callable[[], None] = _nothing
    facts: Callable[[], dict[str, Any]] = _no_facts  # about the run just measured
    spark: bool = True  # runs in Spark (else in this Python process)
    memory: PeakMemory | None = None  # the processes it runs in, when not the group's (a peer's own JVM)
    timed_by_peer: bool = False  # run() returns the seconds a peer process measured around the operation


@dataclass
class Measurement:
    key: str
    label: str
    spark: bool
    seconds: list[float] = field(default_factory=list)
    facts: list[dict[str, Any]] = field(default_factory=list)
    memory: list[Peak] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    def median_fact(self, name: str) -> float | None:
        values = [f[name] for f in self.facts if f.get(name) is not None]
        return statistics.median(values) if values else None

    def peak(self, name: str) -> float | None:
        values = [getattr(m, name) for m in self.memory if getattr(m, name) is not None]
        return max(values) if values else None


def interleave(group: str, cases: list[Case], runs: int, warmup: int, memory: PeakMemory) -> dict[str, Measurement]:
    """``warmup`` uncounted rounds, then ``runs`` counted ones; returns the measurements by case key."""
    results = {c.key: Measurement(c.key, c.label, c.spark) for c in cases}
    for round_number in range(warmup + runs):
        counted = round_number >= warmup
        for case in cases:
            case.prepare()
            watched = case.memory or memory
            watched.reset()
            started = time.perf_counter()
            answer = case.run()
            seconds = answer if case.timed_by_peer else time.perf_counter() - started
            peak = watched.read()
            facts = case.facts()
            logger.info("%s %s %s: %.2f s", group, "run" if counted else "warm-up", case.key, seconds)
            if counted:
                measured = results[case.key]
                measured.seconds.append(seconds)
                measured.facts.append(facts)
                measured.memory.append(peak)
    return results
