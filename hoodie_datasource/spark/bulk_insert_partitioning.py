"""How a bulk insert's rows reach its tasks: Hudi's ``BulkInsertSortMode``s over rows, and our default.

``hoodie.bulkinsert.sort.mode`` unset (our default, which differs from Hudi's ``NONE``): the size-balanced
layout of ``write.bulk_insert_layout``. The input is counted per table partition (a Spark aggregation
over the partition columns, ``partition_clustering``, so the rows go to Python once, in the writing
task), a sample gives the bytes a record takes encoded, and every row is shuffled to the task writing its
partition's file unit: files near ``hoodie.parquet.max.file.size`` whatever the input's partitioning,
with no sort. Hudi's ``NONE`` writes the input as it is partitioned, which for a DataFrame made from
Arrow or pandas, or read from a few hundred files, means a small file per input partition in every table
partition (apache/hudi#2393): asked for by name it still does that.

The named modes follow Hudi's ``*PartitionerWithRows``:

- ``NONE``: the input as it is (``NonSortPartitionerWithRows``; the parallelism does not apply);
- ``GLOBAL_SORT``: sorted by partition path and record key across the tasks (``GlobalSortPartitionerWithRows``);
- ``PARTITION_SORT``: shuffled by partition path, each task's rows sorted by partition path and record key
  (``PartitionSortPartitionerWithRows`` shuffles by path and sorts by key; Hudi 0.15's
  ``RDDPartitionSortPartitionerWithRows`` sorts by path and key: with both, a task writes one partition
  after the other instead of reopening a partition's file at each key of another);
- ``PARTITION_PATH_REPARTITION``: shuffled by partition path (``PartitionPathRepartitionPartitionerWithRows``);
- ``PARTITION_PATH_REPARTITION_AND_SORT``: shuffled by partition path, each task's rows sorted by it
  (``PartitionPathRepartitionAndSortPartitionerWithRows``).

A table without partition fields is coalesced instead of shuffled by path, as Hudi's partitioners do.
Every mode but ``NONE`` runs ``hoodie.bulkinsert.shuffle.parallelism`` tasks, or when it is 0 (Hudi's
default) as many as the input's size asks for (``task_balance.inferred_parallelism``), where Hudi
(``ParallelismHelper.deduceShuffleParallelism``) keeps the input's partition count.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from hoodie_datasource.client.write_client import WriteSession
from hoodie_datasource.spark.input_size import cores, leaves, plan_size
from hoodie_datasource.spark.partition_balance import MAX_BALANCED_PARTITIONS, task_keys
from hoodie_datasource.spark.partition_clustering import partition_clustering, sql_identifier
from hoodie_datasource.table.meta_columns import PARTITION_PATH_COLUMN, RECORD_KEY_COLUMN
from hoodie_datasource.write import bulk_insert, record_keys
from hoodie_datasource.write.bulk_insert_layout import plan_layout
from hoodie_datasource.write.task_balance import inferred_parallelism

logger = logging.getLogger(__name__)

ArrowFunction = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]

TINY_LEAVES_PER_CORE = 8
TINY_LEAF_BYTES = 8 * 2**20
GROUP_COLUMN = "_hoodie_bulk_insert_group"
UNITS_COLUMN = "_hoodie_bulk_insert_units"


@dataclass(frozen=True)
class BulkInsertInput:
    rows: DataFrame  # what the tasks write, one Spark partition a task
    keyed: bool  # the rows carry their record key and partition path already
    sorted_by_partition: bool  # a task's rows come grouped by partition path
    tasks: int | None  # None: as many as the input has partitions


@dataclass(frozen=True)
class _Profile:
    """The input counted by table partition: ``frame`` (the input, keyed when its partitions cannot be told
    without the path), ``by`` (expressions, as SQL text, equal for the rows of one table partition; none
    without partition fields), rows by ``hash(by)`` (``group``), the bytes a record takes encoded, and whether
    the input is ``small`` (it fitted in the sample: one task writes it, with no shuffle)."""
    frame: DataFrame
    keyed: bool
    by: list[str]
    rows: dict[int, int]
    record_size: float
    small: bool

    @property
    def group(self) -> str:
        """The table partition's group of a row, as SQL text: what ``rows`` counts by."""
        return _group(self.by)

    def inferred_tasks(self, max_file_size: int, cores: int) -> int:
        """Tasks for a shuffle by partition: the input's size, and no more than its partitions."""
        if self.small:
            return 1
        total = sum(self.rows.values()) * self.record_size
        return max(1, min(len(self.rows), inferred_parallelism(total, max_file_size, cores)))


def bulk_insert_input(session: WriteSession, df: DataFrame, keyed_schema: StructType,
                      add_keys: ArrowFunction) -> BulkInsertInput:
    """``df`` arranged for the bulk insert's tasks as ``hoodie.bulkinsert.sort.mode`` asks; ``add_keys`` is
    the ``mapInArrow`` function keying rows into ``keyed_schema``. An input whose plan does not know its size
    (rows from Python, an RDD) is read once into a local checkpoint (``localCheckpoint``: executors' storage,
    serialized, memory then disk), a partition per core, which the count, the sample and the write read: such
    inputs often come as hundreds of small partitions under a plan of as many leaves (200 Arrow slices unioned:
    400 partitions), and every job over them paid the plan's analysis and a task per partition again (10 s a
    job on 2 cores for 200,000 rows, more than the rows took to write). Spark knows the size of Arrow or
    pandas data, so an input made of many small DataFrames is read once so too (``_read_once``). Its blocks go
    when the checkpointed DataFrame is collected (Spark's ``ContextCleaner``)."""
    cfg = session.config
    mode, partitioned = cfg.bulk_insert_sort_mode, bool(cfg.keygen.partition_fields)
    if mode == "NONE":
        return BulkInsertInput(df, keyed=False, sorted_by_partition=False, tasks=None)
    if _read_once(df):
        # serialized: the JVM's default for a checkpoint keeps the rows as objects on the heap, several times
        # their bytes (5M rows of ~100 bytes ran a 12 GB heap out of memory on the third load in a session)
        df = df.coalesce(cores(df.sparkSession)).localCheckpoint(eager=True, storageLevel=StorageLevel.MEMORY_AND_DISK)
    profile = _profile(session, df, keyed_schema, add_keys)
    if mode is None:
        return _size_balanced(session, profile)
    tasks = cfg.parallelism or profile.inferred_tasks(cfg.sizing.max_file_size, cores(df.sparkSession))
    if mode in ("GLOBAL_SORT", "PARTITION_SORT"):  # sorted by record key: keyed before the shuffle
        keyed = profile.frame if profile.keyed else df.mapInArrow(add_keys, keyed_schema)
        if mode == "GLOBAL_SORT":
            rows = keyed.repartitionByRange(tasks, PARTITION_PATH_COLUMN, RECORD_KEY_COLUMN)
        else:
            rows = keyed.repartition(tasks, PARTITION_PATH_COLUMN) if partitioned else keyed.coalesce(tasks)
        rows = rows.sortWithinPartitions(PARTITION_PATH_COLUMN, RECORD_KEY_COLUMN)
        return BulkInsertInput(rows, keyed=True, sorted_by_partition=True, tasks=tasks)
    if not partitioned:
        return BulkInsertInput(profile.frame.coalesce(tasks), profile.keyed, sorted_by_partition=False, tasks=tasks)
    by = [F.expr(e) for e in profile.by]
    rows = profile.frame.repartition(tasks, *by)
    sort = mode == "PARTITION_PATH_REPARTITION_AND_SORT"
    return BulkInsertInput(rows.sortWithinPartitions(*by) if sort else rows, profile.keyed,
                           sorted_by_partition=sort, tasks=tasks)


def _read_once(df: DataFrame) -> bool:
    """Whether the count, the sample and the write had better read a local checkpoint of ``df`` than ``df``:
    it is not cached and its plan does not know its size, or its plan reads more than
    ``TINY_LEAVES_PER_CORE`` relations a core averaging under ``TINY_LEAF_BYTES`` (200 Arrow slices each
    made a DataFrame and unioned: the sample's limit alone took 27 s over them for 2M rows, the count 16 s,
    as every job analysed the 200 leaves and ran a task for each)."""
    if df.storageLevel.useMemory or df.storageLevel.useDisk:
        return False
    size = plan_size(df).bytes
    if size is None:
        return True
    count = leaves(df)
    return count is not None and count > TINY_LEAVES_PER_CORE * cores(df.sparkSession) and size < count * TINY_LEAF_BYTES


def _profile(session: WriteSession, df: DataFrame, keyed_schema: StructType, add_keys: ArrowFunction) -> _Profile:
    """Count ``df`` by table partition (one Spark job over the partition columns) and measure the bytes a
    record takes from its first ``bulk_insert.SAMPLE_ROWS`` rows (a small job before it; when they are all
    the input has, they are counted instead)."""
    cfg = session.config
    frame, keyed, by = df, False, []
    if cfg.keygen.partition_fields:
        by = partition_clustering(df, cfg.keygen)
        if by is None:  # values that render to paths only through the key generator: keyed first
            frame, keyed, by = df.mapInArrow(add_keys, keyed_schema), True, [sql_identifier(PARTITION_PATH_COLUMN)]
    group = F.expr(_group(by))
    sample = frame.withColumn(GROUP_COLUMN, group).limit(bulk_insert.SAMPLE_ROWS).toArrow()
    whole = sample.num_rows < bulk_insert.SAMPLE_ROWS
    if whole:  # the sample is the whole input: counted from it
        groups, rows = np.unique(sample.column(GROUP_COLUMN).to_numpy(), return_counts=True)
        counts = {int(g): int(n) for g, n in zip(groups, rows)}
    else:
        counts = {r[0]: r[1] for r in frame.groupBy(group.alias(GROUP_COLUMN)).count().collect()}
    sample = sample.drop_columns([GROUP_COLUMN])
    if not keyed:
        sample = record_keys.keyed(sample, cfg)
    record_size = bulk_insert.encoded_record_size(session.context(), sample, cfg.sizing.max_file_size)
    return _Profile(frame, keyed, by, counts, record_size, whole)


def _group(by: list[str]) -> str:
    """``hash(by)`` as SQL text (0 without partition fields)."""
    return f"hash({', '.join(by)})" if by else "0"


def _size_balanced(session: WriteSession, profile: _Profile) -> BulkInsertInput:
    """Every row shuffled to the task writing its file unit (``bulk_insert_layout``): the unit is its record
    key's hash among its partition's units, the task comes from the units of its partition: a literal map of
    them for up to ``MAX_BALANCED_PARTITIONS`` partitions (Spark looks a value up in a map by a scan of its
    keys), else a small table of them, broadcast to a join. The map's shuffle carries the input's columns
    alone, and no row is joined (2M cached rows in 30 partitions: the shuffle's map tasks took 1.2 s of CPU, by
    the join 1.9 s)."""
    cfg, frame = session.config, profile.frame
    if profile.small and not cfg.parallelism:
        return BulkInsertInput(frame.coalesce(1), profile.keyed, sorted_by_partition=False, tasks=1)
    layout = plan_layout(profile.rows, profile.record_size, cfg.sizing.max_file_size, cfg.parallelism,
                         cores(frame.sparkSession), bulk_insert.TASK_MEMORY_BYTES,
                         bulk_insert.footer_size(session.context()))
    keys = task_keys(layout.tasks)
    logger.info("Bulk insert of %d rows in %d partitions: %d tasks, %d file units, %.0f bytes a record",
                sum(profile.rows.values()), len(profile.rows), layout.tasks,
                sum(len(u) for u in layout.unit_tasks.values()), profile.record_size)
    if profile.keyed:
        record_key = [sql_identifier(RECORD_KEY_COLUMN)]
    else:  # a field that is no column is a nested one, as F.col reads it
        record_key = [sql_identifier(f) if f in frame.columns else ".".join(map(sql_identifier, f.split(".")))
                      for f in cfg.keygen.record_key_fields]
    key_hash = f"hash({', '.join(record_key)})"
    if len(layout.unit_tasks) <= MAX_BALANCED_PARTITIONS:
        entries = ", ".join(f"{group}, array({', '.join(str(keys[t]) for t in tasks)})"
                            for group, tasks in layout.unit_tasks.items())
        units = f"element_at(map({entries}), {profile.group})"
        # a group not counted (an input that read otherwise than when counted) goes by its hash
        rows = frame.repartition(layout.tasks, F.expr(
            f"coalesce(element_at({units}, pmod({key_hash}, size({units})) + 1), {profile.group})"))
        if layout.sorted_by_partition:
            rows = rows.sortWithinPartitions(F.expr(profile.group))
        return BulkInsertInput(rows, profile.keyed, layout.sorted_by_partition, layout.tasks)
    units = frame.sparkSession.createDataFrame(
        [(group, [keys[t] for t in tasks]) for group, tasks in layout.unit_tasks.items()],
        f"{GROUP_COLUMN} int, {UNITS_COLUMN} array<int>")
    unit = F.pmod(F.expr(key_hash), F.size(UNITS_COLUMN)) + 1
    task_key = F.coalesce(F.element_at(F.col(UNITS_COLUMN), unit), F.col(GROUP_COLUMN))  # a group not counted
    rows = frame.withColumn(GROUP_COLUMN, F.expr(profile.group)).join(F.broadcast(units), GROUP_COLUMN, "left")
    rows = rows.repartition(layout.tasks, task_key)
    if layout.sorted_by_partition:
        rows = rows.sortWithinPartitions(GROUP_COLUMN)
    return BulkInsertInput(rows.select(*[F.col(sql_identifier(c)) for c in frame.columns]),
                           profile.keyed, layout.sorted_by_partition, layout.tasks)
