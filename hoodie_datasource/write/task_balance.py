"""How many tasks a write runs, and spreading pieces of work of known weight over them, the heaviest first.

Longest processing time first: each piece, heaviest first, goes to the task with the least weight so far.
Spark launches tasks in order, so with task 0 holding the heaviest piece the heaviest work starts first,
and the last pieces placed (the lightest) even out the tasks' ends.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable, Mapping
from typing import TypeVar

Piece = TypeVar("Piece", bound=Hashable)


def assign_tasks(weights: Mapping[Piece, int], tasks: int) -> dict[Piece, int]:
    """Each piece's task: heaviest first, to the task with the least weight so far (the lowest index on a
    tie), so task 0 gets the heaviest piece. Pieces of equal weight are placed in their sorted order, so
    the pieces must be comparable with each other."""
    loads = [(0, t) for t in range(tasks)]  # already a heap
    assigned = {}
    for piece in sorted(weights, key=lambda p: (-weights[p], p)):
        load, task = heapq.heappop(loads)
        assigned[piece] = task
        heapq.heappush(loads, (load + weights[piece], task))
    return assigned


def inferred_parallelism(input_bytes: float, max_file_size: int, cores: int) -> int:
    """A write's tasks when its ``hoodie.*.shuffle.parallelism`` is 0: about a file's worth of bytes
    (``hoodie.parquet.max.file.size``) each, as a multiple of the cores. Tasks run in waves of one a core, and
    a last wave of fewer tasks than cores leaves cores idle for a whole task's time (5M rows, 345 MB, on 2
    cores: 3 tasks ran as two waves of 4 s where 4 tasks run as two of 3 s). Hudi
    (``ParallelismHelper.deduceShuffleParallelism``) keeps the input's partition count instead, which says
    nothing of its size: a DataFrame read from 200 files has 200 partitions for 2 rows or 2 billion."""
    cores = max(1, cores)
    return math.ceil(max(1, math.ceil(input_bytes / max_file_size)) / cores) * cores
