"""Statistics of the parquet we write: a floating-point column chunk holding NaN carries no min/max, which
readers would trust (pyarrow's writer leaves NaN out of them); chunks without NaN, and other columns, keep
theirs. Checked on the files a write leaves: base files (insert, merge, bulk insert) and parquet log blocks."""

from __future__ import annotations

import glob
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.log.log_format import BlockType, read_log_bytes
from hoodie_datasource.storage.parquet import statistics_columns

NAN = float("nan")
OPTS = {"table.name": "t", "recordkey.field": "id", "precombine.field": "ts", "partitionpath.field": "p"}


def _rows(ids, d, e) -> pa.Table:
    n = len(ids)
    return pa.table({"id": ids, "ts": [1] * n, "d": pa.array(d, pa.float64()), "e": pa.array(e, pa.float32()),
                     "s": pa.array([{"x": v} for v in d], pa.struct([("x", pa.float64())])), "p": ["a"] * n})


def _min_max(metadata: pq.FileMetaData) -> dict[str, list[tuple]]:
    """Per leaf column path, each row group's (min, max), or None where the chunk has none."""
    found: dict[str, list[tuple]] = {}
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        for c in range(group.num_columns):
            chunk = group.column(c)
            stats = chunk.statistics if chunk.is_stats_set else None
            found.setdefault(chunk.path_in_schema, []).append(
                (stats.min, stats.max) if stats is not None and stats.has_min_max else None)
    return found


def _base_files(path: str) -> list[str]:
    return sorted(glob.glob(os.path.join(path, "a", "*.parquet")), key=os.path.getmtime)


def test_a_float_chunk_with_nan_has_no_min_max_and_one_without_keeps_them(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, _rows(["1", "2", "3"], [2.0, NAN, None], [1.5, 2.5, None]), OPTS)
    stats = _min_max(pq.read_metadata(_base_files(path)[-1]))
    assert stats["d"] == [None] and stats["s.x"] == [None]
    assert stats["e"] == [(1.5, 2.5)]
    assert stats["id"] == [("1", "3")] and stats["ts"] == [(1, 1)]
    assert stats["_hoodie_commit_seqno"] == [None]  # as before: no reader uses them


def test_a_merge_writes_statistics_by_the_rows_of_the_new_file(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, _rows(["1", "2"], [2.0, NAN], [1.0, NAN]), OPTS)
    assert _min_max(pq.read_metadata(_base_files(path)[-1]))["d"] == [None]
    write_local(path, _rows(["2"], [3.0], [2.0]), OPTS)  # the NaN replaced: the new file's chunks have bounds
    merged = _min_max(pq.read_metadata(_base_files(path)[-1]))
    assert merged["d"] == [(2.0, 2.0), (3.0, 3.0)] and merged["e"] == [(1.0, 1.0), (2.0, 2.0)]


def test_a_bulk_insert_file_encoded_at_once_keeps_float_min_max_without_nan(tmp_path):
    path = str(tmp_path / "t")
    bulk = {**OPTS, "hoodie.datasource.write.operation": "bulk_insert"}
    write_local(path, _rows(["1", "2"], [2.0, 3.0], [1.0, 2.0]), bulk)
    stats = _min_max(pq.read_metadata(_base_files(path)[-1]))
    assert stats["d"] == [(2.0, 3.0)] and stats["e"] == [(1.0, 2.0)] and stats["s.x"] == [(2.0, 3.0)]
    write_local(path, _rows(["3", "4"], [2.0, NAN], [1.0, 2.0]), bulk)
    stats = _min_max(pq.read_metadata(_base_files(path)[-1]))
    assert stats["d"] == [None] and stats["s.x"] == [None] and stats["e"] == [(1.0, 2.0)]


def test_a_bulk_insert_file_encoded_in_parts_writes_no_float_min_max(tmp_path, monkeypatch):
    """A file whose first row group is encoded before its later rows (a NaN?) are known."""
    from hoodie_datasource.write import bulk_insert

    monkeypatch.setattr(bulk_insert, "ROW_GROUP_BYTES", 1)  # every input batch is encoded as it comes
    path = str(tmp_path / "t")
    write_local(path, _rows(["1", "2"], [2.0, 3.0], [1.0, 2.0]),
                {**OPTS, "hoodie.datasource.write.operation": "bulk_insert"})
    stats = _min_max(pq.read_metadata(_base_files(path)[-1]))
    assert stats["d"] == [None] and stats["e"] == [None] and stats["s.x"] == [None]
    assert stats["id"] == [("1", "2")]


def test_parquet_log_blocks_write_no_min_max_for_a_float_chunk_with_nan(tmp_path):
    path = str(tmp_path / "t")
    mor = {**OPTS, "table.type": "MERGE_ON_READ"}
    write_local(path, _rows(["1", "2"], [2.0, 1.0], [1.0, 2.0]), mor)
    write_local(path, _rows(["1", "2"], [NAN, 5.0], [3.0, 4.0]), mor)
    logs = glob.glob(os.path.join(path, "a", ".*.log.*"))
    blocks = [b for log in logs for b in read_log_bytes(open(log, "rb").read(), log).blocks
              if b.block_type == BlockType.PARQUET_DATA]
    assert len(blocks) == 1
    stats = _min_max(pq.read_metadata(pa.BufferReader(blocks[0].content)))
    assert stats["d"] == [None] and stats["s.x"] == [None] and stats["e"] == [(3.0, 4.0)]


@pytest.mark.parametrize("rows, expected", [
    (None, ["i", "m.key_value.key"]),  # rows to come: no floating-point leaf
    (pa.table({"i": [1], "d": [1.0], "l": [[1.0]], "m": pa.array([[("k", 1.0)]], pa.map_(pa.string(), pa.float64()))}),
     ["i", "d", "l.list.element", "m.key_value.key", "m.key_value.value"]),
    (pa.table({"i": [1], "d": [NAN], "l": [[1.0, NAN]], "m": pa.array([[("k", NAN)]], pa.map_(pa.string(), pa.float64()))}),
     ["i", "m.key_value.key"]),
])
def test_statistics_columns_names_the_leaves_parquet_writes(rows, expected):
    schema = pa.schema([("i", pa.int64()), ("d", pa.float64()), ("l", pa.list_(pa.float64())),
                        ("m", pa.map_(pa.string(), pa.float64())), ("skipped", pa.string())])
    if rows is not None:
        rows = rows.append_column("skipped", pa.array(["x"]))
    assert statistics_columns(schema, rows, skip=("skipped",)) == expected
