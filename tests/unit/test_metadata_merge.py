"""How metadata records of one key merge (HoodieMetadataPayload, Hudi 0.15), which metadata instants and file
slices a reader counts, checked on records made here (no JVM; tests/hudi_oracle/test_we_read_hudis_metadata.py
reads Java's own metadata tables)."""

from __future__ import annotations

import pyarrow as pa

from hoodie_datasource.metadata.merge import merge_column_stats, merge_file_entries, merge_latest
from hoodie_datasource.metadata.records import unwrap_values, wrap_values
from hoodie_datasource.metadata.timeline import MetadataTimeline, is_service_instant
from hoodie_datasource.timeline.instant import Instant, State


def _entries(*rows) -> pa.Table:
    """(key, file, size, deleted, order) rows."""
    return pa.table({"key": pa.array([r[0] for r in rows], pa.string()),
                     "file_name": pa.array([r[1] for r in rows], pa.string()),
                     "size": pa.array([r[2] for r in rows], pa.int64()),
                     "is_deleted": pa.array([r[3] for r in rows], pa.bool_()),
                     "order": pa.array([r[4] for r in rows], pa.int64())})


def _deletes(*rows) -> pa.Table:
    return pa.table({"key": pa.array([r[0] for r in rows], pa.string()), "order": pa.array([r[1] for r in rows],
                                                                                           pa.int64())})


def _listing(merged: pa.Table) -> dict[tuple[str, str], int]:
    return {(k, f): s for k, f, s in zip(*(merged.column(c).to_pylist() for c in ("key", "file_name", "size")))}


def test_files_add_grow_and_go():
    merged = merge_file_entries(_entries(
        ("p", "a", 10, False, 0),   # base
        ("p", "b", 5, False, 0),
        ("p", "a", 0, True, 1),     # a deleted
        ("p", "c", 7, False, 1),
        ("p", "c", 3, False, 2),    # a smaller size never shrinks it
        ("p", "d", 4, False, 2),
        ("q", "x", 1, False, 3),
    ), _deletes())
    assert _listing(merged) == {("p", "b"): 5, ("p", "c"): 7, ("p", "d"): 4, ("q", "x"): 1}


def test_a_tombstone_in_the_logs_cancels_the_base_file_but_not_a_file_added_after_it():
    merged = merge_file_entries(_entries(
        ("p", "a", 10, False, 0),
        ("p", "a", 0, True, 1),     # a tombstone in the logs: a absent from the merged logs' view of earlier ones
        ("p", "b", 0, True, 1),     # b deleted before it is added: a tombstone, then b present
        ("p", "b", 6, False, 2),
    ), _deletes())
    assert _listing(merged) == {("p", "b"): 6}


def test_logs_merge_first_then_with_the_base():
    # added then deleted within the logs: the logs' merged record no longer names a, so the base's a stays
    # (HoodieMetadataPayload merges the log records together before the base record)
    merged = merge_file_entries(_entries(("p", "a", 10, False, 0), ("p", "a", 11, False, 1), ("p", "a", 0, True, 2)),
                                _deletes())
    assert _listing(merged) == {("p", "a"): 10}


def test_a_deleted_record_drops_what_came_before_it():
    entries = _entries(("p", "a", 10, False, 0), ("p", "b", 3, False, 1), ("q", "z", 1, False, 0),
                       ("q", "y", 2, False, 5))
    # p deleted last: gone, base and all; q deleted, then written again: the later record merges with the base
    merged = merge_file_entries(entries, _deletes(("p", 2), ("q", 4)))
    assert _listing(merged) == {("q", "y"): 2, ("q", "z"): 1}


def test_the_newest_record_or_delete_wins():
    records = pa.table({"key": ["k1", "k1", "k2", "k3", "k3"], "value": [1, 2, 3, 4, 5], "order": [0, 3, 0, 1, 5]})
    merged = merge_latest(records, _deletes(("k2", 2), ("k3", 4)))
    assert merged.sort_by("key").to_pylist() == [{"key": "k1", "value": 2}, {"key": "k3", "value": 5}]


def _stats(*rows) -> pa.Table:
    """(key, min, max, nulls, values, deleted, order) rows of one int column."""
    return pa.table({
        "key": [r[0] for r in rows], "file_name": ["f"] * len(rows), "column_name": ["c"] * len(rows),
        "min_value": wrap_values(pa.array([r[1] for r in rows], pa.int64())),
        "max_value": wrap_values(pa.array([r[2] for r in rows], pa.int64())),
        "value_count": [r[4] for r in rows], "null_count": [r[3] for r in rows],
        "total_size": [1] * len(rows), "total_uncompressed_size": [2] * len(rows),
        "is_deleted": [r[5] for r in rows], "order": [r[6] for r in rows]})


def test_column_stats_of_a_key_written_several_times_widen_and_add_up():
    merged = merge_column_stats(_stats(
        ("k", 5, 9, 1, 10, False, 0),
        ("k", 2, 7, 0, 4, False, 1),
        ("one", 1, 1, 0, 1, False, 0),
        ("gone", 1, 2, 0, 1, False, 0),
        ("gone", None, None, 0, 0, True, 1),
        ("back", 1, 2, 0, 1, False, 0),
        ("back", None, None, 0, 0, True, 1),
        ("back", 3, 4, 2, 5, False, 2),
    ), _deletes()).sort_by("key")
    rows = {r["key"]: r for r in merged.to_pylist()}
    low = dict(zip(merged.column("key").to_pylist(), unwrap_values(merged.column("min_value"), pa.int64()).to_pylist()))
    high = dict(zip(merged.column("key").to_pylist(), unwrap_values(merged.column("max_value"), pa.int64()).to_pylist()))
    assert (low["k"], high["k"], rows["k"]["value_count"], rows["k"]["null_count"], rows["k"]["total_size"]) == \
        (2, 9, 14, 1, 2)
    assert (low["one"], high["one"]) == (1, 1)
    assert rows["gone"]["is_deleted"] and low["gone"] is None
    # a record after a tombstone starts again
    assert (low["back"], high["back"], rows["back"]["value_count"], rows["back"]["is_deleted"]) == (3, 4, 5, False)


def test_keys_of_columns_of_different_types_each_fold_as_their_own_type():
    ints, strings = _stats(("n", 5, 9, 0, 1, False, 0), ("n", 2, 3, 0, 1, False, 1)), _stats(("s", 0, 0, 0, 1, False, 0))
    words = wrap_values(pa.array(["m", "b"]))
    strings = pa.concat_tables([strings, strings]).set_column(3, "min_value", words).set_column(4, "max_value", words)
    strings = strings.set_column(strings.column_names.index("order"), "order", pa.array([0, 1]))
    merged = merge_column_stats(pa.concat_tables([ints, strings]), _deletes()).sort_by("key")
    assert merged.column("key").to_pylist() == ["n", "s"]
    assert unwrap_values(merged.column("min_value").slice(0, 1), pa.int64()).to_pylist() == [2]
    assert unwrap_values(merged.column("max_value").slice(1, 1), pa.string()).to_pylist() == ["m"]


def test_service_instants():
    def deltacommit(time: str) -> Instant:
        return Instant(time, "deltacommit", State.COMPLETED)

    assert is_service_instant(deltacommit("20240101000000000001"))
    assert is_service_instant(deltacommit("00000000000000010"[:14] + "123" + "012"))
    assert not is_service_instant(deltacommit("20240101000000000"))
    assert not is_service_instant(deltacommit("20240101000000000007"))
    assert not is_service_instant(Instant("20240101000000000001", "commit", State.COMPLETED))


def test_which_metadata_instants_are_committed():
    timeline = MetadataTimeline((
        Instant("00000000000000010", "deltacommit", State.COMPLETED),
        Instant("20240101000000000", "deltacommit", State.COMPLETED),
        Instant("20240101000000000001", "compaction", State.COMPLETED),
        Instant("20240102000000000", "deltacommit", State.INFLIGHT),
        Instant("20240103000000000", "deltacommit", State.COMPLETED),
        Instant("20240103000000000001", "compaction", State.REQUESTED),
    ))
    assert timeline.latest_completed == "20240103000000000"
    assert timeline.is_committed("20240101000000000") and timeline.is_committed("20240101000000000001")
    assert not timeline.is_committed("20240102000000000")
    assert timeline.is_committed("00000000000000001")  # before the timeline starts: archived
    assert timeline.pending_compactions == {"20240103000000000001"}
