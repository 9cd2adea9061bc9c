"""The floor of a Spark write done in Python: the rows shuffled by partition and handed to Python tasks as
Arrow, where they are only counted. Any write that shuffles its input by partition and writes it in Python
(hoodie's bulk insert and its upserts) pays at least this, before it tags, encodes or stores a row."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from benchmarks.timing import Case
from benchmarks.workload import PARTITION

TASK = "_task"


def _count(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    yield pa.RecordBatch.from_pydict({"rows": [sum(batch.num_rows for batch in batches)]})


def python_hop_case(key: str, label: str, rows: DataFrame, tasks: int | None = None) -> Case:
    """``rows`` shuffled by ``dt`` (into ``tasks``, read first by one task per core as hoodie's upserts read a
    batch; else as Spark's ``repartition("dt")``) into a ``mapInArrow`` that counts them."""
    if tasks is None:
        shuffled = rows.repartition(PARTITION)
    else:  # by a column computed above the coalesce: Spark drops a coalesce right below a repartition
        cores = rows.sparkSession.sparkContext.defaultParallelism
        shuffled = rows.coalesce(cores).withColumn(TASK, F.hash(PARTITION)).repartition(tasks, TASK).drop(TASK)
    return Case(key, label, run=lambda: shuffled.mapInArrow(_count, "rows long").collect())
