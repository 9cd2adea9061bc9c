"""A file's stats from its parquet footer: row count, per-column null counts and bounds that hold every value."""

from __future__ import annotations

import datetime as dt
import io
import json

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie_datasource.sharing.file_stats import footer_stats


def test_stats_bound_every_value_over_row_groups():
    table = pa.table({"n": pa.array([5, None, -2, 9], pa.int64()), "s": ["b", "a", None, "c"],
                      "at": pa.array([dt.datetime(2026, 1, 1, 0, 0, 0, 1500), None, None,
                                      dt.datetime(2025, 1, 1)], pa.timestamp("us", "UTC")),
                      "nested": pa.array([{"x": 1}] * 4), "_hoodie_commit_time": ["1"] * 4})
    sink = io.BytesIO()
    pq.write_table(table, sink, row_group_size=2)
    stats = footer_stats(pq.ParquetFile(io.BytesIO(sink.getvalue())).metadata, frozenset({"n", "s", "at", "nested"}))
    assert json.loads(json.dumps(stats)) == {
        "numRecords": 4,
        "minValues": {"n": -2, "s": "a", "at": "2025-01-01T00:00:00.000Z"},
        "maxValues": {"n": 9, "s": "c", "at": "2026-01-01T00:00:00.002Z"},  # 1.5 ms rounded up: still a bound
        "nullCount": {"n": 1, "s": 1, "at": 2},
    }
