"""Input splits: file slices grouped into read tasks.

Sized as Spark sizes the splits of its file sources: every slice costs its bytes plus a fixed
opening cost, and a split holds about ``max(open_cost, total cost / parallelism)`` and at most
``split_size``, so a table smaller than ``parallelism`` full splits still spreads over every core.
A slice is never cut, so a split closes once it reaches its share rather than before it: no
small leftover split that would run after all the others.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from hoodie_datasource.table.file_group import FileSlice

OPEN_COST = 4 * 1024 * 1024
"""What opening a file slice costs, in bytes read (Spark's ``spark.sql.files.openCostInBytes``)."""


def split_slices(slices: Sequence[FileSlice], split_size: int, parallelism: int) -> list[tuple[FileSlice, ...]]:
    """Group slices, in partition path and file id order, into splits of about the target size."""
    ordered = sorted(slices, key=lambda s: (s.partition_path, s.file_id))
    total = sum(s.total_size + OPEN_COST for s in ordered)
    share = max(OPEN_COST, math.ceil(total / max(parallelism, 1)))
    splits: list[tuple[FileSlice, ...]] = []
    current: list[FileSlice] = []
    size = 0
    for s in ordered:
        cost = s.total_size + OPEN_COST
        if current and size + cost > split_size:
            splits.append(tuple(current))
            current, size = [], 0
        current.append(s)
        size += cost
        if size >= share:
            splits.append(tuple(current))
            current, size = [], 0
    if current:
        splits.append(tuple(current))
    return splits
