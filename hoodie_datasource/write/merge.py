"""Merging incoming records into a file group's latest base file (the COW merge handle's logic).

The merged file holds the stored rows that stay as they are, in their old order, and then the rows
this commit writes (updated records in their old rows' order, then new keys); a deleted record's
row is dropped. Rows carried over unchanged keep their commit time and sequence number, as Hudi's
merge handle does. Putting this commit's rows last lets the writer give them row groups of their
own, so an incremental query skips the rest of the file by its ``_hoodie_commit_time``
statistics (and a file rewritten commit after commit stays ordered by commit time).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.table.meta_columns import IS_DELETE_COLUMN, RECORD_KEY_COLUMN


@dataclass(frozen=True)
class MergeResult:
    """Row positions of the merged file: old rows kept as they are, and incoming rows."""

    # For each output row: index into ``existing`` (>= 0) or, encoded as -(i + 1), into ``incoming``;
    # the first ``num_kept`` rows come from ``existing``, the rest from ``incoming``.
    sources: np.ndarray
    num_kept: int
    num_updates: int
    num_deletes: int
    num_inserts: int
    # positions in ``existing`` of the rows the updates replace (in the updates' output order), and of
    # the deleted rows: the before-images of a CDC log
    updated_from: np.ndarray
    deleted_rows: np.ndarray


def merge_positions(
    existing_keys: pa.Array | None,
    incoming: pa.Table,
    ordering_field: str | None = None,
    existing_ordering: pa.Array | None = None,
) -> MergeResult:
    """Plan the merged file. With ``ordering_field`` a stored record with a greater ordering value
    wins over the incoming one (DefaultHoodieRecordPayload); without it the incoming record wins."""
    n_in = incoming.num_rows
    is_delete = (
        incoming.column(IS_DELETE_COLUMN).to_numpy(zero_copy_only=False).astype(bool)
        if IS_DELETE_COLUMN in incoming.column_names
        else np.zeros(n_in, dtype=bool)
    )
    if existing_keys is None or len(existing_keys) == 0:
        inserts = np.nonzero(~is_delete)[0]
        none = np.empty(0, np.int64)
        return MergeResult(-(inserts + 1), 0, 0, 0, len(inserts), none, none)

    where = _stored_positions(existing_keys, incoming.column(RECORD_KEY_COLUMN))
    matched = where >= 0
    if ordering_field is not None and existing_ordering is not None and matched.any():
        idx = np.nonzero(matched)[0]
        new_vals = pc.take(incoming.column(ordering_field), pa.array(idx))
        old_vals = pc.take(existing_ordering, pa.array(where[idx]))
        stored_wins = pc.fill_null(pc.greater(old_vals, new_vals), False).to_numpy(zero_copy_only=False)
        drop = idx[stored_wins]
        matched[drop] = False
        where[drop] = -2  # neither update nor insert: the stored record stays
    n_old = len(existing_keys)
    replacement = np.full(n_old, -1, dtype=np.int64)  # incoming row replacing each old row
    upd = np.nonzero(matched & ~is_delete)[0]
    replacement[where[upd]] = upd
    deleted = np.zeros(n_old, dtype=bool)
    dels = np.nonzero(matched & is_delete)[0]
    deleted[where[dels]] = True
    kept = np.nonzero((replacement < 0) & ~deleted)[0]
    updated_from = np.nonzero(replacement >= 0)[0]
    updates = replacement[updated_from]  # incoming rows, in their old rows' order
    inserts = np.nonzero((where == -1) & ~is_delete)[0]
    sources = np.concatenate([kept, -(updates + 1), -(inserts + 1)])
    deleted_rows = np.nonzero(deleted)[0]
    return MergeResult(sources, len(kept), len(upd), len(deleted_rows), len(inserts), updated_from, deleted_rows)


def _stored_positions(existing_keys: pa.Array, in_keys: pa.ChunkedArray) -> np.ndarray:
    """The position of each incoming key in the stored file, -1 when new. The hash table is built over
    the incoming keys, and the stored keys probe it: a batch sends a file far fewer keys than it holds,
    and hashing a 70k-key file into a table costs far more than probing it (1.4 ms instead of 51 for
    2,400 incoming keys, 15 instead of 72 for 23k). Each incoming key then finds the stored row by its first occurrence."""
    first = pc.index_in(in_keys, value_set=in_keys).to_numpy().astype(np.int64)
    stored_at = pc.fill_null(pc.index_in(existing_keys, value_set=in_keys), -1).to_numpy()
    rows = np.flatnonzero(stored_at >= 0)
    found = np.full(len(first), -1, dtype=np.int64)
    found[stored_at[rows]] = rows
    return found[first]


MAX_KEPT_RUNS = 64


def kept_rows(existing: pa.Table, positions: np.ndarray) -> pa.Table:
    """The rows of ``existing`` at ``positions`` (ascending, as ``MergeResult`` keeps them). A merge that
    replaces or deletes few rows keeps long runs of consecutive rows: those are zero-copy slices (a file
    of 100k rows is not copied for one update); scattered positions are filtered out by a mask (a
    sequential pass: 6 ms instead of a ``take``'s 15 for a 70k-row base file losing 2,000 rows)."""
    breaks = np.flatnonzero(np.diff(positions) != 1) + 1
    if len(positions) == 0 or len(breaks) >= MAX_KEPT_RUNS:
        mask = np.zeros(existing.num_rows, dtype=bool)
        mask[positions] = True
        return existing.filter(pa.array(mask))
    starts = np.concatenate([[0], breaks])
    ends = np.concatenate([breaks, [len(positions)]])
    return pa.concat_tables([existing.slice(int(positions[a]), int(b - a)) for a, b in zip(starts, ends)])
