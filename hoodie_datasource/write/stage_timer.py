"""Where a write's time goes: seconds per stage, which the commit records in its metadata as
``hoodie.stage.<stage>.ms`` (stages that run in Spark tasks are summed over the tasks, ``<stage>_task``)."""

from __future__ import annotations

import time


class StageTimer:
    """Laps of one clock: ``lap("tag")`` charges the time since the previous lap (or the start) to ``tag``."""

    def __init__(self, seconds: dict[str, float] | None = None):
        self.seconds = {} if seconds is None else seconds
        self._mark = time.monotonic()

    def lap(self, stage: str) -> None:
        now = time.monotonic()
        self.seconds[stage] = self.seconds.get(stage, 0.0) + now - self._mark
        self._mark = now

    def ms(self, stage: str) -> int:
        return int(self.seconds.get(stage, 0.0) * 1000)
