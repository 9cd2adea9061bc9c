"""How a key's metadata records merge, as ``HoodieMetadataPayload`` merges them (Hudi 0.15).

A file slice's records come in an order: the base file's first (order 0), then each counted log block's, in log
order, a block's cells in file order. Merging has two steps, as Hudi's reader has: the log records of a key merge
with each other first (``HoodieMergedLogRecordScanner`` pre-combining, newer with the merged older), then the
result combines with the base record (``combineAndGetUpdateValue``). A deleted key (a DELETE block) replaces what
was before it, and a record after it replaces the delete (``preCombine``: ``isDeletedRecord``); a delete last
in the logs removes the key, base record included.

- ``files`` (``combineFileSystemMetadata``): per file named in the maps, a newer entry for a file the older
  record does not name is taken as it is, a deletion among them too (a tombstone, kept so it can cancel the file
  in the base); a newer deletion of a named file removes it; a newer addition of a named file keeps the larger
  size. Only files present and not deleted are listed.
- ``column_stats`` (``mergeColumnStatsRecords``): a deleted record on either side gives the newer record;
  otherwise the smaller minimum, the larger maximum, and the sums of the counts and sizes.
- ``bloom_filters`` and ``record_index``: the newer record wins.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.metadata.records import unwrap_values, wrap_values

ABSENT, PRESENT, TOMBSTONE = 0, 1, 2


def _order_by(table: pa.Table, keys: list[str]) -> pa.Table:
    return table.take(pc.sort_indices(table, [(k, "ascending") for k in keys]))


def _groups(values: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(start, length) of each run of equal rows of the sorted columns ``values``."""
    n = len(values[0])
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    change = np.zeros(n, bool)
    change[0] = True
    for column in values:
        change[1:] |= column[1:] != column[:-1]
    starts = np.flatnonzero(change)
    return starts, np.diff(np.append(starts, n))


def _fold_file_entries(deleted: np.ndarray, sizes: np.ndarray, starts: np.ndarray, lengths: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
    """The state (``ABSENT``, ``PRESENT``, ``TOMBSTONE``) and size each run of one file's entries folds to, in
    order: absent + addition = present, absent + deletion = tombstone, (present or tombstone) + deletion = absent,
    (present or tombstone) + addition = present with the larger size. One numpy step per position in the runs."""
    state = np.zeros(len(starts), np.int8)
    size = np.zeros(len(starts), np.int64)
    for k in range(int(lengths.max()) if len(lengths) else 0):
        live = np.flatnonzero(lengths > k)
        row = starts[live] + k
        gone = deleted[row]
        empty = state[live] == ABSENT
        state[live] = np.where(empty, np.where(gone, TOMBSTONE, PRESENT), np.where(gone, ABSENT, PRESENT))
        size[live] = np.where(gone, 0, np.where(empty, sizes[row], np.maximum(size[live], sizes[row])))
    return state, size


def _fold(entries: pa.Table) -> pa.Table:
    """``entries`` (key, file_name, size, is_deleted, order) folded per (key, file_name); absent ones dropped,
    tombstones kept with ``is_deleted``."""
    entries = _order_by(entries, ["key", "file_name", "order"])
    key = entries.column("key").to_numpy(zero_copy_only=False)
    name = entries.column("file_name").to_numpy(zero_copy_only=False)
    starts, lengths = _groups([key, name])
    state, size = _fold_file_entries(entries.column("is_deleted").to_numpy(zero_copy_only=False),
                                     entries.column("size").to_numpy(zero_copy_only=False), starts, lengths)
    kept = state != ABSENT
    rows = pa.array(starts[kept])
    return pa.table({"key": entries.column("key").take(rows), "file_name": entries.column("file_name").take(rows),
                     "size": pa.array(size[kept]), "is_deleted": pa.array(state[kept] == TOMBSTONE)})


def _last_deletes(deletes: pa.Table) -> dict[str, int]:
    """Each deleted key's last delete (its order)."""
    if deletes.num_rows == 0:
        return {}
    grouped = deletes.group_by("key").aggregate([("order", "max")])
    return dict(zip(grouped.column("key").to_pylist(), grouped.column("order_max").to_pylist()))


def _after_deletes(table: pa.Table, deletes: dict[str, int]) -> pa.Table:
    """The rows of ``table`` (with ``key`` and ``order``) newer than their key's last delete."""
    if not deletes:
        return table
    unique = pc.unique(table.column("key"))
    last = pa.array([deletes.get(k, -1) for k in unique.to_pylist()], pa.int64())
    bound = last.take(pc.index_in(table.column("key"), unique))
    return table.filter(pc.greater(table.column("order"), bound))


def _deleted_last(records: pa.Table, deletes: dict[str, int]) -> set[str]:
    """The keys whose last log item is a delete."""
    if not deletes:
        return set()
    newest: dict[str, int] = {}
    if records.num_rows:
        grouped = records.filter(pc.greater(records.column("order"), 0)).group_by("key").aggregate([("order", "max")])
        newest = dict(zip(grouped.column("key").to_pylist(), grouped.column("order_max").to_pylist()))
    return {k for k, order in deletes.items() if order > newest.get(k, -1)}


def merge_file_entries(entries: pa.Table, deletes: pa.Table) -> pa.Table:
    """The merged listing of ``files``-partition records: ``entries`` (``key``, ``file_name``, ``size``,
    ``is_deleted``, ``order``; order 0 is the base file's) and ``deletes`` (``key``, ``order``) of whole records.
    Rows ``key``, ``file_name``, ``size`` of the files present, by key and name."""
    last_deletes = _last_deletes(deletes)
    dropped = _deleted_last(entries, last_deletes)
    base = entries.filter(pc.equal(entries.column("order"), 0))
    logs = _after_deletes(entries.filter(pc.greater(entries.column("order"), 0)), last_deletes)
    folded = _fold(logs)
    merged_logs = folded.append_column("order", pa.array(np.ones(folded.num_rows, np.int64)))
    both = pa.concat_tables([base.select(merged_logs.column_names), merged_logs])
    merged = _fold(both)
    present = pc.invert(merged.column("is_deleted"))
    if dropped:
        present = pc.and_(present, pc.invert(pc.is_in(merged.column("key"), pa.array(sorted(dropped)))))
    return merged.filter(present).select(["key", "file_name", "size"])


def merge_latest(records: pa.Table, deletes: pa.Table) -> pa.Table:
    """The newest row of each key of ``records`` (with ``key`` and ``order``), none when the key's newest item is
    a delete (``bloom_filters``, ``record_index``)."""
    if records.num_rows == 0:
        return records.drop_columns(["order"])
    records = _order_by(records, ["key", "order"])
    key = records.column("key").to_numpy(zero_copy_only=False)
    starts, lengths = _groups([key])
    newest = records.take(pa.array(starts + lengths - 1))
    dropped = _deleted_last(records, _last_deletes(deletes))
    if dropped:
        newest = newest.filter(pc.invert(pc.is_in(newest.column("key"), pa.array(sorted(dropped)))))
    return newest.drop_columns(["order"])


def _merge_stats(older: dict[str, Any], newer: dict[str, Any]) -> dict[str, Any]:
    if newer["is_deleted"] or older["is_deleted"]:
        return newer
    merged = dict(newer)
    lows = [v for v in (older["min_value"], newer["min_value"]) if v is not None]
    highs = [v for v in (older["max_value"], newer["max_value"]) if v is not None]
    merged["min_value"] = min(lows) if lows else None
    merged["max_value"] = max(highs) if highs else None
    for name in ("value_count", "null_count", "total_size", "total_uncompressed_size"):
        merged[name] = (older[name] or 0) + (newer[name] or 0)
    return merged


def merge_column_stats(stats: pa.Table, deletes: pa.Table) -> pa.Table:
    """Each key's merged column statistics (``column_stats`` rows with ``order``). A key of one record takes it
    as it is; the few with several (a log file appended to by several deltacommits) fold a record at a time,
    their minimums and maximums compared as the values they wrap."""
    stats = _after_deletes(stats, _last_deletes(deletes)) if deletes.num_rows else stats
    if stats.num_rows == 0:
        return stats.drop_columns(["order"])
    stats = _order_by(stats, ["key", "order"])
    starts, lengths = _groups([stats.column("key").to_numpy(zero_copy_only=False)])
    single = stats.take(pa.array(starts[lengths == 1])).drop_columns(["order"])
    if (lengths == 1).all():
        return single
    folded, wrapped_min, wrapped_max = [], [], []
    for start, length in zip(starts[lengths > 1].tolist(), lengths[lengths > 1].tolist()):
        group = stats.slice(start, length).drop_columns(["order"])
        # one key is one column of one file: its values share a type, which another key's need not
        values = unwrap_values(pa.concat_arrays([group.column("min_value").combine_chunks(),
                                                 group.column("max_value").combine_chunks()]))
        listed = values.to_pylist()
        rows = group.to_pylist()
        for i, row in enumerate(rows):
            row["min_value"], row["max_value"] = listed[i], listed[length + i]
        merged = rows[0]
        for row in rows[1:]:
            merged = _merge_stats(merged, row)
        folded.append(merged)
        wrapped_min.append(wrap_values(pa.array([merged["min_value"]], values.type)))
        wrapped_max.append(wrap_values(pa.array([merged["max_value"]], values.type)))
    several = pa.table({name: [r[name] for r in folded] for name in single.column_names if
                        name not in ("min_value", "max_value")})
    several = several.append_column("min_value", pa.concat_arrays(wrapped_min)).append_column(
        "max_value", pa.concat_arrays(wrapped_max))
    return pa.concat_tables([single, several.select(single.column_names).cast(single.schema)])
