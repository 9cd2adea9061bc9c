"""Arrow steps as ``mapInArrow`` functions: a step applied to each batch on its own, or once to all of a task's
records (for a step that needs every record a shuffle brought together); and the write token of the task a step
runs in."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pyarrow as pa
from pyspark import TaskContext

from hoodie_datasource.table.file_names import write_token

Step = Callable[[pa.Table], pa.Table]


def per_batch(step: Step):
    """A ``mapInArrow`` function applying ``step`` to each batch on its own."""
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            yield from step(pa.Table.from_batches([batch])).to_batches()
    return run


def per_task(step: Step):
    """A ``mapInArrow`` function applying ``step`` once to all its task's records (a task without records yields
    nothing): for a step that needs every record of what the shuffle before it brought together."""
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        records = [batch for batch in batches if batch.num_rows]
        if records:
            yield from step(pa.Table.from_batches(records)).to_batches()
    return run


def task_token() -> tuple[str, int]:
    """The write token of the running Spark task (``0-0-0`` outside one), and its partition."""
    task = TaskContext.get()
    if task is None:
        return "0-0-0", 0
    return write_token(task.partitionId(), task.stageId(), task.taskAttemptId()), task.partitionId()
