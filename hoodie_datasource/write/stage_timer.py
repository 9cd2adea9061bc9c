"""Where a write's time goes: seconds per stage, which the commit records in its metadata as
``hoodie.stage.<stage>.ms`` (stages that run in Spark tasks are summed over the tasks, ``<stage>_task``),
and counts of the work done in them (``hoodie.stage.<name>``, e.g. ``index.bloom_probes``: summed over
the tasks as well)."""

from __future__ import annotations

import time
from collections.abc import Mapping


class StageTimer:
    """Laps of one clock: ``lap("tag")`` charges the time since the previous lap (or the start) to ``tag``."""

    def __init__(self, seconds: dict[str, float] | None = None, counts: dict[str, int] | None = None):
        self.seconds = {} if seconds is None else seconds
        self.counts = {} if counts is None else counts
        self._mark = time.monotonic()

    def lap(self, stage: str) -> None:
        now = time.monotonic()
        self.seconds[stage] = self.seconds.get(stage, 0.0) + now - self._mark
        self._mark = now

    def count(self, counts: Mapping[str, int]) -> None:
        """Add ``counts`` to those recorded."""
        for name, value in counts.items():
            self.counts[name] = self.counts.get(name, 0) + value

    def ms(self, stage: str) -> int:
        return int(self.seconds.get(stage, 0.0) * 1000)
