"""Apache Hudi's ``org.apache.hudi.common.util.RateLimiter``, which the HBase index paces its requests with: at
most ``per_second`` permits in each second; a request for more waits for the next second (one for more than a
second's permits takes them over several seconds, as Hudi's ``tryAcquire`` does)."""

from __future__ import annotations

import time


class RateLimiter:
    def __init__(self, per_second: int) -> None:
        self.per_second = max(1, per_second)
        self._window = time.monotonic()
        self._used = 0

    def acquire(self, permits: int) -> None:
        while permits > 0:
            take = min(permits, self.per_second)
            now = time.monotonic()
            if now - self._window >= 1.0:
                self._window, self._used = now, 0
            if self._used + take > self.per_second:
                time.sleep(self._window + 1.0 - now)
                self._window, self._used = time.monotonic(), 0
            self._used += take
            permits -= take
