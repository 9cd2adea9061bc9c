"""Merge-handle planning, batch dedupe, and insert bin-packing."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from hoodie_datasource.config.write_config import FileSizing, resolve_write_config
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.index.key_ranges import FileKeyRange
from hoodie_datasource.index.murmur_hash import hash_strings
from hoodie_datasource.table.meta_columns import IS_DELETE_COLUMN, PARTITION_PATH_COLUMN, RECORD_KEY_COLUMN
from hoodie_datasource.write.merge import MAX_KEPT_RUNS, kept_rows, merge_positions
from hoodie_datasource.write.partitioner import average_record_size, plan_inserts
from hoodie_datasource.write.records import dedupe


def incoming(keys, deletes=None, ts=None):
    cols = {RECORD_KEY_COLUMN: keys, PARTITION_PATH_COLUMN: ["p"] * len(keys),
            IS_DELETE_COLUMN: deletes or [False] * len(keys)}
    if ts is not None:
        cols["ts"] = ts
    return pa.table(cols)


def test_kept_rows_are_the_rows_at_their_positions_whether_sliced_or_taken():
    stored = pa.table({"k": pa.array(range(1000)), "v": pa.array([str(i) for i in range(1000)])})
    few_runs = np.delete(np.arange(1000), [0, 500, 501, 999])  # one update and deletes: long runs, sliced
    scattered = np.arange(0, 1000, 3)  # a run per row: taken
    for positions in (few_runs, scattered, np.arange(1000), np.empty(0, np.int64)):
        assert kept_rows(stored, positions).equals(stored.take(pa.array(positions)))
    assert kept_rows(stored, few_runs).column("k").num_chunks == 2  # zero-copy slices of the stored rows
    assert len(scattered) > MAX_KEPT_RUNS


def test_kept_rows_first_then_updates_in_old_order_then_inserts_deletes_drop():
    plan = merge_positions(pa.array(["a", "b", "c", "d", "e"]),
                           incoming(["e", "c", "x", "b"], [False, False, False, True]))
    # a and d stay, b deleted; then this commit's rows: c (incoming 1), e (incoming 0), x appended
    assert plan.sources.tolist() == [0, 3, -2, -1, -3]
    assert plan.num_kept == 2
    assert (plan.num_updates, plan.num_deletes, plan.num_inserts) == (2, 1, 1)


def test_a_key_sent_twice_finds_its_stored_row_both_times():
    # without dedupe a key may come twice: the later copy updates the stored row (one stored record
    # updated), neither becomes an insert
    plan = merge_positions(pa.array(["a", "b", "c"]), incoming(["c", "x", "c"]))
    assert plan.sources.tolist() == [0, 1, -3, -2]
    assert (plan.num_updates, plan.num_inserts) == (1, 1)


def test_a_key_stored_twice_is_merged_into_both_copies():
    # HoodieMergeHandle merges the incoming record into every stored copy of its key
    plan = merge_positions(pa.array(["a", "b", "a"]), incoming(["a", "x"]))
    assert plan.sources.tolist() == [1, -1, -1, -2]
    assert (plan.num_updates, plan.num_inserts) == (2, 1)
    assert plan.updated_from.tolist() == [0, 2]
    deleted = merge_positions(pa.array(["a", "b", "a"]), incoming(["a"], [True]))
    assert deleted.sources.tolist() == [1] and deleted.deleted_rows.tolist() == [0, 2]


def test_concat_keeps_every_stored_record_and_appends_every_incoming_one():
    # HoodieConcatHandle (an insert allowing duplicates): a key already stored is stored once more
    plan = merge_positions(pa.array(["a", "b", "a"]), incoming(["a", "x"]), concat=True)
    assert plan.sources.tolist() == [0, 1, 2, -1, -2]
    assert (plan.num_kept, plan.num_updates, plan.num_inserts) == (3, 0, 2)


def test_event_time_ordering_keeps_the_newer_stored_record():
    plan = merge_positions(pa.array(["a", "b"]), incoming(["a", "b"], ts=[5, 1]), "ts", pa.array([3, 3]))
    assert plan.sources.tolist() == [1, -1]  # b kept (1 < 3), a updated (5 > 3)
    assert plan.num_updates == 1


def test_deletes_of_unknown_keys_write_nothing():
    plan = merge_positions(pa.array(["a"]), incoming(["zz"], [True]))
    assert (plan.num_updates, plan.num_deletes, plan.num_inserts) == (0, 0, 0)


def test_dedupe_keeps_max_precombine_then_latest():
    t = incoming(["a", "b", "a", "a", "b"], ts=[1, 9, 3, 3, 2]).append_column("v", pa.array([1, 2, 3, 4, 5]))
    out = dedupe(t, "ts")
    assert sorted(zip(out.column(RECORD_KEY_COLUMN).to_pylist(), out.column("v").to_pylist())) == [("a", 4), ("b", 2)]
    assert dedupe(t, None).column("v").to_pylist() == [4, 5]


def _file(fid, size, partition="p"):
    return FileKeyRange(partition, fid, f"{partition}/{fid}_1-0-1_1.parquet", "1", size, size // 100, "a", "z")


def test_inserts_fill_small_files_first_then_new_groups():
    sizing = FileSizing(max_file_size=10_000, small_file_limit=6_000, record_size_estimate=100)
    files = [_file("big", 9_000), _file("small", 5_000)]
    plan = plan_inserts({"p": 260}, files, 100, sizing, "1", lambda instant, partition, i: f"new-{i}")
    buckets = plan.by_partition["p"]
    assert [t.file_id for t in buckets.targets] == ["small", "new-0", "new-1", "new-2"]
    assert buckets.targets[0].base_file == "p/small_1-0-1_1.parquet"
    # small file takes 50 records (5000 free / 100), the remaining 210 split over 3 new files of <= 100
    shares = np.diff((0.0, *buckets.cumulative_weights)) * 260
    assert np.allclose(shares, [50, 70, 70, 70])


def test_insert_assignment_is_deterministic_and_balanced():
    sizing = FileSizing(max_file_size=100_000, small_file_limit=0, record_size_estimate=100)
    plan = plan_inserts({"p": 5000}, [], 100, sizing, "20240101000000000")
    again = plan_inserts({"p": 5000}, [], 100, sizing, "20240101000000000")
    assert [t.file_id for t in again.by_partition["p"].targets] == [t.file_id for t in plan.by_partition["p"].targets]
    keys = pa.array([f"key-{i}" for i in range(5000)])
    parts = pa.array(["p"] * 5000)
    first = plan.assign(parts, keys, hash_strings).to_pylist()
    assert first == plan.assign(parts, keys, hash_strings).to_pylist()
    counts = sorted(first.count(t.file_id) for t in plan.by_partition["p"].targets)
    assert len(counts) == 5 and min(counts) > 800


def test_average_record_size_from_stats():
    assert average_record_size([{"numWrites": 10, "totalWriteBytes": 2000}], 1024) == 200
    assert average_record_size([], 1024) == 1024
    # files of 10 and 110 records, each with 4 kB of footer: a record adds 100 bytes, not the 136 of the ratio
    assert average_record_size([{"numWrites": 10, "totalWriteBytes": 5000},
                                {"numWrites": 110, "totalWriteBytes": 15000}], 1024) == 100


def test_merge_on_read_fills_at_most_its_small_file_candidates():
    """hoodie.merge.small.file.group.candidates.limit: the smallest small files only, then new groups."""
    sizing = FileSizing(max_file_size=10_000, small_file_limit=6_000, record_size_estimate=100)
    files = [_file("s3", 5_500), _file("s1", 4_000), _file("s2", 5_000)]
    ids = lambda instant, partition, i: f"new-{i}"  # noqa: E731
    one = plan_inserts({"p": 200}, files, 100, sizing, "1", ids, candidates=1).by_partition["p"]
    assert [t.file_id for t in one.targets] == ["s1", "new-0", "new-1"]
    two = plan_inserts({"p": 200}, files, 100, sizing, "1", ids, candidates=2).by_partition["p"]
    assert [t.file_id for t in two.targets] == ["s1", "s2", "new-0"]
    every = plan_inserts({"p": 200}, files, 100, sizing, "1", ids).by_partition["p"]
    assert [t.file_id for t in every.targets] == ["s1", "s2", "s3", "new-0"]
    none = plan_inserts({"p": 200}, files, 100, sizing, "1", ids, candidates=0).by_partition["p"]
    assert [t.file_id for t in none.targets] == ["new-0", "new-1"]


@pytest.mark.parametrize("estimate", ["0", "-5"])
def test_a_record_size_estimate_must_be_positive(estimate):
    """Unset, it is measured on the first write's input; given, it must be a positive byte count."""
    options = {"hoodie.table.name": "t", "recordkey.field": "id", "hoodie.copyonwrite.record.size.estimate": estimate}
    with pytest.raises(HoodieConfigError, match="File sizes must be positive"):
        resolve_write_config(options, None)
    assert resolve_write_config({**options, "hoodie.copyonwrite.record.size.estimate": "100"},
                                None).sizing.record_size_estimate == 100
