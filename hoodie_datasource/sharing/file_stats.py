"""A file's ``stats`` (PROTOCOL.md "Per-file Statistics": ``numRecords``, ``minValues``, ``maxValues``,
``nullCount``) from its parquet footer: the row groups' statistics of each top-level column the share shows,
folded over the row groups. A column some row group has no statistics for gets no min/max (a client then cannot
skip the file on it, which is always safe).

Files are immutable (a new version of a file group is a new file), so a footer is read once per process: the
statistics are kept by the file's URI and size, in a bounded map.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import threading
from collections import OrderedDict
from typing import Any

import pyarrow.parquet as pq

from hoodie_datasource.storage.storage import Storage

MAX_CACHED = 100_000


def _json_value(value: Any, up: bool = False) -> Any:
    """A statistic as the protocol's JSON writes it (Delta's ``JsonUtils`` of the column's value). Timestamps are
    written in milliseconds: a maximum (``up``) is rounded up to the next one, so it still bounds the column."""
    if isinstance(value, dt.datetime):
        if up and value.microsecond % 1000:
            value += dt.timedelta(microseconds=1000 - value.microsecond % 1000)
        text = value.isoformat(timespec="milliseconds")
        return text.replace("+00:00", "Z") if value.tzinfo else text
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, bytes):
        return None  # Delta keeps no binary statistics
    if isinstance(value, float) and value != value:
        return None
    return value


def footer_stats(metadata: pq.FileMetaData, columns: frozenset[str]) -> dict[str, Any]:
    """The stats of a file of ``metadata`` for the top-level primitive columns named in ``columns``."""
    mins: dict[str, Any] = {}
    maxs: dict[str, Any] = {}
    nulls: dict[str, int] = {}
    schema = metadata.schema
    for index in range(metadata.num_columns):
        path = schema.column(index).path
        if "." in path or path not in columns:
            continue
        lows, highs, count, complete = [], [], 0, True
        for group in range(metadata.num_row_groups):
            stats = metadata.row_group(group).column(index).statistics
            if stats is None or stats.null_count is None:
                complete = False
                break
            count += stats.null_count
            if stats.has_min_max:
                lows.append(_json_value(stats.min))
                highs.append(_json_value(stats.max, up=True))
        if not complete:
            continue
        nulls[path] = count
        if lows and None not in lows and None not in highs:
            try:
                mins[path], maxs[path] = min(lows), max(highs)
            except TypeError:
                pass
    return {"numRecords": metadata.num_rows, "minValues": mins, "maxValues": maxs, "nullCount": nulls}


class FooterStats:
    """The stats JSON of files, each footer read once per process."""

    def __init__(self) -> None:
        self._cache: OrderedDict[tuple[str, int, frozenset[str]], str] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, storage: Storage, rel: str, size: int, columns: frozenset[str]) -> str:
        key = (storage.uri_of(rel), size, columns)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        with storage.open_input(rel, size) as handle:
            text = json.dumps(footer_stats(pq.ParquetFile(handle).metadata, columns), separators=(",", ":"))
        with self._lock:
            self._cache[key] = text
            while len(self._cache) > MAX_CACHED:
                self._cache.popitem(last=False)
        return text
