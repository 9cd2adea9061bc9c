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

from benchmarks.cpu_time import CpuClock
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
    cpu: CpuClock | None = None  # likewise
    timed_by_peer: bool = False  # run() returns the seconds a peer process measured around the operation


@dataclass
class Measurement:
    key: str
    label: str
    spark: bool
    seconds: list[float] = field(default_factory=list)
    facts: list[dict[str, Any]] = field(default_factory=list)
    memory: list[Peak] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)  # when the group's cases have a CPU clock

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def median_cpu(self) -> float | None:
        return statistics.median(self.cpu_seconds) if self.cpu_seconds else None

    def median_fact(self, name: str) -> float | None:
        values = [f[name] for f in self.facts if f.get(name) is not None]
        return statistics.median(values) if values else None

    def peak(self, name: str) -> float | None:
        values = [getattr(m, name) for m in self.memory if getattr(m, name) is not None]
        return max(values) if values else None


def interleave(group: str, cases: list[Case], runs: int, warmup: int, memory: PeakMemory,
               cpu: CpuClock | None = None) -> dict[str, Measurement]:
    """``warmup`` uncounted rounds, then ``runs`` counted ones; returns the measurements by case key. CPU
    seconds are read (outside the timed region) where a case or the group has a clock."""
    results = {c.key: Measurement(c.key, c.label, c.spark) for c in cases}
    for round_number in range(warmup + runs):
        counted = round_number >= warmup
        for case in cases:
            case.prepare()
            watched, clock = case.memory or memory, case.cpu or cpu
            watched.reset()
            cpu_before = clock.seconds() if clock else 0.0
            started = time.perf_counter()
            answer = case.run()
            seconds = answer if case.timed_by_peer else time.perf_counter() - started
            cpu_used = clock.seconds() - cpu_before if clock else None
            peak = watched.read()
            facts = case.facts()
            logger.info("%s %s %s: %.2f s", group, "run" if counted else "warm-up", case.key, seconds)
            if counted:
                measured = results[case.key]
                measured.seconds.append(seconds)
                measured.facts.append(facts)
                measured.memory.append(peak)
                if cpu_used is not None:
                    measured.cpu_seconds.append(cpu_used)
    return results
