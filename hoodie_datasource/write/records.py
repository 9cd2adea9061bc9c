"""Columnar record operations shared by every write: dedupe by record key."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.table.meta_columns import PARTITION_PATH_COLUMN, RECORD_KEY_COLUMN


def dedupe(records: pa.Table, precombine: str | None, by_partition: bool = True) -> pa.Table:
    """One record per key: the highest ``precombine`` value wins, ties go to the later record."""
    if records.num_rows < 2:
        return records
    if pc.count_distinct(records.column(RECORD_KEY_COLUMN)).as_py() == records.num_rows:
        return records  # the usual batch: a hash pass finds no duplicate, no sort needed
    order = np.arange(records.num_rows)
    sort_keys = [(RECORD_KEY_COLUMN, "ascending")]
    if by_partition:
        sort_keys.append((PARTITION_PATH_COLUMN, "ascending"))
    indexed = records.select([c for c, _ in sort_keys]).append_column("__order", pa.array(order))
    if precombine:
        indexed = indexed.append_column("__pre", records.column(precombine))
        sort_keys.append(("__pre", "descending"))
    sort_keys.append(("__order", "descending"))
    sorted_idx = pc.sort_indices(indexed, sort_keys=sort_keys).to_numpy()
    keys = pc.take(records.column(RECORD_KEY_COLUMN), sorted_idx)
    first = np.ones(len(sorted_idx), dtype=bool)
    same = pc.equal(keys[1:], keys[:-1])
    if by_partition:
        parts = pc.take(records.column(PARTITION_PATH_COLUMN), sorted_idx)
        same = pc.and_(same, pc.equal(parts[1:], parts[:-1]))
    first[1:] = ~same.to_numpy(zero_copy_only=False)
    keep = np.sort(sorted_idx[first])
    if len(keep) == records.num_rows:
        return records
    return records.take(pa.array(keep))
