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
    concat: bool = False,
) -> MergeResult:
    """Plan the merged file. An incoming record merges into every stored copy of its key (Hudi's
    ``HoodieMergeHandle``: "If we have duplicate records that we are updating ... make a copy of the record
    to be merged"), so a key an insert stored twice is updated twice. With ``ordering_field`` a stored record
    with a greater ordering value wins over the incoming one (DefaultHoodieRecordPayload); without it the
    incoming record wins. With ``concat`` (an insert allowing duplicates: ``HoodieConcatHandle``) every stored
    record stays as it is and every incoming one is appended."""
    n_in = incoming.num_rows
    is_delete = (
        incoming.column(IS_DELETE_COLUMN).to_numpy(zero_copy_only=False).astype(bool)
        if IS_DELETE_COLUMN in incoming.column_names
        else np.zeros(n_in, dtype=bool)
    )
    none = np.empty(0, np.int64)
    if existing_keys is None or len(existing_keys) == 0 or n_in == 0 or concat:
        n_old = 0 if existing_keys is None else len(existing_keys)
        inserts = np.nonzero(~is_delete)[0]
        return MergeResult(np.concatenate([np.arange(n_old), -(inserts + 1)]), n_old, 0, 0, len(inserts), none, none)

    in_keys = incoming.column(RECORD_KEY_COLUMN)
    first = pc.index_in(in_keys, value_set=in_keys).to_numpy().astype(np.int64)  # each key's first incoming row
    replacement = _incoming_positions(existing_keys, in_keys, first)  # per stored row: the incoming row merged into it
    named = np.flatnonzero(replacement >= 0)
    key_stored = np.zeros(n_in, dtype=bool)
    key_stored[first[replacement[named]]] = True
    key_stored = key_stored[first]
    if ordering_field is not None and existing_ordering is not None and len(named):
        new_vals = pc.take(incoming.column(ordering_field), pa.array(replacement[named]))
        old_vals = pc.take(existing_ordering, pa.array(named))
        stored_wins = pc.fill_null(pc.greater(old_vals, new_vals), False).to_numpy(zero_copy_only=False)
        replacement[named[stored_wins]] = -1  # the stored record stays as it is
    merged = replacement >= 0
    deleted = merged & is_delete[np.maximum(replacement, 0)]
    updated_from = np.flatnonzero(merged & ~deleted)
    kept = np.flatnonzero(~merged)
    updates = replacement[updated_from]  # incoming rows, in their old rows' order
    inserts = np.nonzero(~key_stored & ~is_delete)[0]
    sources = np.concatenate([kept, -(updates + 1), -(inserts + 1)])
    deleted_rows = np.flatnonzero(deleted)
    return MergeResult(sources, len(kept), len(updated_from), len(deleted_rows), len(inserts), updated_from,
                       deleted_rows)


def _incoming_positions(existing_keys: pa.Array, in_keys: pa.ChunkedArray, first: np.ndarray) -> np.ndarray:
    """The incoming row each stored row merges with (the last of its key's, as Hudi's merge handle keeps
    the last record of a key it is sent twice), -1 when its key is not sent; ``first``: each incoming row's
    first row of its key. The hash table is built over the incoming keys, and the stored keys probe it: a
    batch sends a file far fewer keys than it holds, and hashing a 70k-key file into a table costs far more
    than probing it (1.4 ms instead of 51 for 2,400 incoming keys, 15 instead of 72 for 23k)."""
    last = np.zeros(len(first), dtype=np.int64)
    np.maximum.at(last, first, np.arange(len(first)))
    stored_at = pc.fill_null(pc.index_in(existing_keys, value_set=in_keys), -1).to_numpy().astype(np.int64)
    return np.where(stored_at >= 0, last[np.maximum(stored_at, 0)], -1)


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
