"""Which task writes which rows of a bulk insert when no sort mode is asked for: files of the target size
whatever the input's partitioning, spread over tasks by size.

Writing the input as it is partitioned (Hudi's ``NONE``) gives every input partition a file in every
table partition it holds rows of: 200 input partitions of 20 days make 4,000 files of a few hundred rows,
and every later upsert pays a footer and a bloom filter for each. Here the rows are counted per table
partition first (a pass over the input), and each partition's bytes (rows times the bytes a record takes
encoded, measured on a sample) are cut into ``ceil(bytes / (0.9 * hoodie.parquet.max.file.size))`` equal
file units, a row going to the unit its record key hashes to. The units are spread over the tasks heaviest
first (``task_balance``): many small partitions share a task, a huge one is written by several tasks,
each unit by one. Units are equal, so each is at most a file even when the estimate is a little low,
and a task holding several units of a partition rolls them into as few files: a partition ends with at
most ``ceil(bytes / (0.9 * target))`` files (no more than ``ceil(bytes / target) + 1`` up to 9 files' worth),
near the target size when the data fills them.

A task holding many partitions keeps a file open for each; when its files would not fit the writer's
memory (``bulk_insert.TASK_MEMORY_BYTES``) it would close some early, so its rows are then sorted by
partition (``sorted_by_partition``), and it writes one partition at a time.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass

from hoodie_datasource.write.task_balance import assign_tasks, inferred_parallelism

# a unit aims at this share of the target file size: the record size comes from the input's first rows, and
# a unit whose records are up to a tenth larger than they showed still fits in one file
UNIT_FILL = 0.9


@dataclass(frozen=True)
class BulkInsertLayout:
    tasks: int
    unit_tasks: Mapping[Hashable, tuple[int, ...]]  # by partition: the task of each of its file units
    sorted_by_partition: bool  # a task's rows must come grouped by partition


def plan_layout(partition_rows: Mapping[Hashable, int], record_size: float, max_file_size: int, parallelism: int,
                cores: int, task_memory: int, file_overhead: int = 0) -> BulkInsertLayout:
    """The layout of ``partition_rows`` (rows of each table partition, by any comparable key) written at
    ``record_size`` bytes a row into files of at most ``max_file_size``: ``parallelism`` tasks, or (0)
    ``task_balance.inferred_parallelism`` but no more than there are file units. A unit weighs its rows' bytes and
    ``file_overhead`` (a file's footer: its bloom filter), which for many small partitions is the most of it."""
    sizes = {p: rows * record_size for p, rows in partition_rows.items() if rows > 0}
    units = {p: max(1, math.ceil(size / (max_file_size * UNIT_FILL))) for p, size in sizes.items()}
    total_units = sum(units.values())
    if parallelism > 0:
        tasks = parallelism
    else:
        tasks = max(1, min(total_units, inferred_parallelism(sum(sizes.values()), max_file_size, cores)))
    weights = {(p, u): max(1, int(sizes[p] / n) + file_overhead) for p, n in units.items() for u in range(n)}
    assigned = assign_tasks(weights, tasks) if weights else {}
    unit_tasks = {p: tuple(assigned[(p, u)] for u in range(n)) for p, n in units.items()}
    load, held = [0] * tasks, [set() for _ in range(tasks)]
    for (p, u), task in assigned.items():
        load[task] += weights[(p, u)]
        held[task].add(p)
    crowded = any(len(held[t]) > 1 and load[t] > task_memory / 2 for t in range(tasks))
    return BulkInsertLayout(tasks, unit_tasks, crowded)
