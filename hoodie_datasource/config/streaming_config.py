"""The Structured Streaming sink's own settings, resolved once from the query's options (names and defaults
are those of Apache Hudi's ``DataSourceWriteOptions.STREAMING_*``, read by ``HoodieStreamingSink``).

- ``identifier``: the writer's name in the checkpoint each commit records; queries writing one table need
  one each (``hoodie.datasource.write.streaming.checkpoint.identifier``, default ``default_single_writer``).
- ``retry_count``: attempts at a failing micro-batch, the first included (``...streaming.retry.count``, 3);
  ``retry_interval_ms`` the wait before the second, doubled before each later one (``...retry.interval.ms``,
  2000). Errors a retry cannot fix (bad options, schema or records) fail at once.
- ``ignore_failed_batch``: log a micro-batch that failed every attempt and go on without its rows, instead
  of failing the query (``...streaming.ignore.failed.batch``, false since Hudi 0.12.1, HUDI-4665).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hoodie_datasource.config import keys as k
from hoodie_datasource.errors import HoodieConfigError


@dataclass(frozen=True)
class StreamingSinkConfig:
    identifier: str = "default_single_writer"
    retry_count: int = 3
    retry_interval_ms: int = 2000
    ignore_failed_batch: bool = False

    def retry_waits_s(self) -> list[float]:
        """The waits before the second, third, ... attempt."""
        return [self.retry_interval_ms * 2 ** i / 1000 for i in range(max(0, self.retry_count - 1))]


def resolve_streaming_config(options: Mapping[str, str]) -> StreamingSinkConfig:
    get = lambda prop: k.CATALOG.resolve(options, prop)  # noqa: E731
    identifier = get(k.STREAMING_CHECKPOINT_IDENTIFIER)
    if not identifier:
        raise HoodieConfigError(f"Option {k.STREAMING_CHECKPOINT_IDENTIFIER.key!r} must not be empty")
    for prop in (k.STREAMING_RETRY_COUNT, k.STREAMING_RETRY_INTERVAL_MS):
        if get(prop) < 0:
            raise HoodieConfigError(f"Option {prop.key!r} must be >= 0, got {get(prop)}")
    return StreamingSinkConfig(identifier, get(k.STREAMING_RETRY_COUNT), get(k.STREAMING_RETRY_INTERVAL_MS),
                               get(k.STREAMING_IGNORE_FAILED_BATCH))
