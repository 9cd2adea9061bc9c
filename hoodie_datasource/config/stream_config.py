"""Settings of a Structured Streaming read, resolved once from the read's options.

    hoodie.datasource.streaming.startOffset            earliest (default) | latest | an instant time:
                                                       where a new query starts (a restarted one resumes
                                                       from its checkpoint)
    hoodie.datasource.streaming.max.instants.per.trigger   at most N commits per micro-batch
    hoodie.datasource.streaming.max.rows.per.trigger       about N rows per micro-batch (whole commits, at
                                                           least one: the rows a commit wrote, from its metadata)
    hoodie.datasource.read.handle.hollow.commit        BLOCK (default for streams, as Hudi's
                                                       ``HoodieStreamSource``): never read past a write still
                                                       in flight; FAIL: raise when one is in the range
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hoodie_datasource.config import keys as k
from hoodie_datasource.errors import HoodieConfigError, TimelineError
from hoodie_datasource.timeline.instant import query_instant_time

EARLIEST, LATEST = "earliest", "latest"


@dataclass(frozen=True)
class StreamReadConfig:
    start_offset: str = EARLIEST  # earliest | latest | an instant time
    max_instants: int | None = None
    max_rows: int | None = None
    hollow_commits: str = "BLOCK"


def resolve_stream_read_config(options: Mapping[str, str]) -> StreamReadConfig:
    get = lambda prop: k.CATALOG.resolve(options, prop)  # noqa: E731
    start = str(get(k.STREAMING_START_OFFSET)).strip()
    if start.lower() in (EARLIEST, LATEST):
        start = start.lower()
    else:
        try:
            start = query_instant_time(start, f"Option {k.STREAMING_START_OFFSET.key!r}")
        except TimelineError as exc:
            raise HoodieConfigError(f"{exc}; or use 'earliest' or 'latest'") from None
    for prop in (k.STREAMING_MAX_INSTANTS, k.STREAMING_MAX_ROWS):
        value = get(prop)
        if value is not None and value < 1:
            raise HoodieConfigError(f"Option {prop.key!r} must be a positive integer, got {value}")
    if get(k.STREAMING_MAX_INSTANTS) is not None and get(k.STREAMING_MAX_ROWS) is not None:
        raise HoodieConfigError(f"Give either {k.STREAMING_MAX_INSTANTS.key!r} or {k.STREAMING_MAX_ROWS.key!r}, "
                                "not both")
    hollow = get(k.HOLLOW_COMMIT) or "BLOCK"
    if hollow == "USE_TRANSITION_TIME":
        raise HoodieConfigError(f"{k.HOLLOW_COMMIT.key}=USE_TRANSITION_TIME is not supported (tables of version 6 "
                                "record no completion times); use BLOCK (the default: wait for writes in flight) or FAIL")
    return StreamReadConfig(start, get(k.STREAMING_MAX_INSTANTS), get(k.STREAMING_MAX_ROWS), hollow)
