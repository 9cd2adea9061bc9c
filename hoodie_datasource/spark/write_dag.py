"""The distributed write: the Hoodie write pipeline, key -> place -> route -> write, in DataFrame operations.

Runs in the user's Python process (classic or Spark Connect); records only ever move between Spark tasks, the
driver sees index metadata (min/max keys per file), per-partition counts and write stats. Every write runs the
same steps whatever its index (``index.Index``, made once from the write's options), which supplies the placing
step; what differs is where the records are shuffled, chosen by the operation and the index's capabilities:

**By partition** (``_write_by_partition``): upserts, inserts and deletes of a partitioned table under an index
that is not global, and bulk inserts under one that places by hash, in one Spark job: the input shuffled by its
partition columns (``spark.partition_clustering``; by the computed path when they cannot cluster it), each task
keying, placing, routing and writing its partitions (``RecordWriter.write_records``), as the local engine does.

**By file group** (``_write_by_file_group``): the other writes (global indexes, tables without partitions,
overwrites, bulk inserts that combine records)::

    input --mapInArrow(keys)--> keyed [persisted, when its partitions are asked for]
    place, by the index's capabilities:
      places by hash:  keyed --mapInArrow(tag)--> placed   (no lookup, no shuffle, no inserts to count)
      looks keys up:   keyed --mapInArrow(candidates)--repartition(file)--mapInArrow(confirm)--> locations
                       keyed LEFT JOIN broadcast(locations) --> placed (persisted) --count inserts per partition-->
                       profile -> insert plan
      routes by key:   input (each key's lookup task computed by Spark from the key field; else keyed, the
                       task added as it is keyed) --repartition(task)--mapInArrow(keys, combine, tag, settle
                       partition changes)--> placed (persisted) --count inserts ...
      tags records:    keyed --mapInArrow(tag: batched gets from the index's store, HBase)--> placed ...
    placed --mapInArrow(route)--groupBy(partition, file).applyInArrow(write file group)--> write stats

Consecutive per-batch steps run as one ``mapInArrow`` (``_Batches``): a bucket index upsert of a table without
partitions is one job (keys, tag and route in one pass over the input, then the file groups).

**New file groups** (``_write_new_file_groups``): a bulk insert that needs no index to place its records and
does not combine them, in one job: input (arranged as ``hoodie.bulkinsert.sort.mode`` asks) --mapInArrow(keys,
write new file groups)--> write stats.

Then the driver commits (the completed instant file). Each step's Spark jobs are described ``hoodie <operation>
<table> <instant>: <step>`` in the Spark UI (``spark.job_status``), and a ``HoodieError`` a task raised is raised
again by ``write_dataframe`` as itself (``spark.task_errors``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

from hoodie_datasource.client.write_client import CommitResult, WriteSession, run_write
from hoodie_datasource.config.write_config import WriteConfig
from hoodie_datasource.config.write_operation import WriteOperation
from hoodie_datasource.index.index import CANDIDATE_SCHEMA, LOCATION_COLUMNS, LOCATION_SCHEMA, LOOKUP_FILE_COLUMN
from hoodie_datasource.index.key_ranges import FileKeyRange
from hoodie_datasource.index.lookup import IndexCounts
from hoodie_datasource.spark.arrow_steps import Step, per_batch, per_task, task_token
from hoodie_datasource.spark.bulk_insert_partitioning import bulk_insert_input
from hoodie_datasource.spark.clustering import spark_group_runner
from hoodie_datasource.spark.input_size import PlanSize, cores, plan_size
from hoodie_datasource.spark.job_status import job_description
from hoodie_datasource.spark.lookup_routing import lookup_task_sql
from hoodie_datasource.spark.partition_balance import balanced_task_key, clustering_values, sql_string, task_keys
from hoodie_datasource.spark.partition_clustering import partition_clustering, sql_identifier
from hoodie_datasource.spark.planned_input import planned_once
from hoodie_datasource.spark.task_errors import task_error
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.storage.storage import FileInfo
from hoodie_datasource.table.fs_view import partitions_of
from hoodie_datasource.table.meta_columns import (
    FILE_ID_COLUMN,
    IS_DELETE_COLUMN,
    PARTITION_PATH_COLUMN,
    RECORD_KEY_COLUMN,
)
from hoodie_datasource.timeline.commit_metadata import WriteStat
from hoodie_datasource.write import bulk_insert, record_keys, routing
from hoodie_datasource.write.bulk_insert import encoded_record_size, write_bulk_insert_task
from hoodie_datasource.write.file_group_writer import write_file_group
from hoodie_datasource.write.record_writer import RecordWriter
from hoodie_datasource.write.stage_timer import StageTimer
from hoodie_datasource.write.targets import WriteTarget
from hoodie_datasource.write.task_attempt import end_task_attempt
from hoodie_datasource.write.task_balance import inferred_parallelism

logger = logging.getLogger(__name__)

TASK_STAGES = ("tag", "profile", "write")
TASK_COUNTS = tuple(IndexCounts().as_dict())  # index.keys, index.candidates, ...
SHIPPED_LISTING_FILES = 20_000  # about 2 MB pickled into each task
LOCATION_FIELDS = tuple((name, T.StringType()) for name in LOCATION_COLUMNS)
LOOKUP_TASK_COLUMN = "_hoodie_lookup_task"  # the task an index that routes by key looks a record's key up in
LOOKUP_TASK_FIELD = (LOOKUP_TASK_COLUMN, T.IntegerType())
SINGLE_STAGE_ROWS = 10_000  # a batch written by one task is keyed in that task too, up to this many rows
TASK_COLUMN = "_hoodie_write_task"  # what a per-partition write shuffles by, dropped after the shuffle
JAVA_INT_MAX = 2**31 - 1


def _add_keys(cfg: WriteConfig):
    """A ``mapInArrow`` function keying each batch (``record_keys.keyed``)."""
    return per_batch(lambda records: record_keys.keyed(records, cfg))


@dataclass(frozen=True)
class _Batches:
    """Records as a DataFrame, and the per-batch steps still to run on them (``schema``: the records' after them).
    The steps run as one ``mapInArrow`` when the records are next needed as a DataFrame: the records go through
    Python once for them all, not once a step."""

    df: DataFrame
    schema: T.StructType
    steps: tuple[Step, ...] = ()

    def then(self, step: Step, schema: T.StructType | None = None) -> _Batches:
        return _Batches(self.df, schema or self.schema, (*self.steps, step))

    def frame(self) -> DataFrame:
        if not self.steps:
            return self.df
        steps = self.steps

        def run(records: pa.Table) -> pa.Table:
            for step in steps:
                records = step(records)
            return records
        return self.df.mapInArrow(per_batch(run), self.schema)


def _keying(cfg: WriteConfig, df: DataFrame, keyed_schema: T.StructType) -> _Batches:
    """``df`` to be keyed (``record_keys.keyed``) in the pass of the per-batch steps that follow."""
    return _Batches(df, df.schema).then(lambda records: record_keys.keyed(records, cfg), keyed_schema)


def _stat_schema(stages: Sequence[str] = (), counts: Sequence[str] = ()) -> T.StructType:
    """The rows a writing task returns (``_stat_rows``)."""
    return T.StructType([T.StructField("stat", T.StringType())]
                        + [T.StructField(f"{stage}_ms", T.LongType()) for stage in stages]
                        + [T.StructField(name.replace(".", "_"), T.LongType()) for name in counts])


def _stat_rows(stats: Sequence[WriteStat], timer: StageTimer | None = None, stages: Sequence[str] = (),
               counts: Sequence[str] = ()) -> pa.Table:
    """A row per write stat; with ``stages``, one more (stat null) with the task's stage timings and ``counts``."""
    extra = 1 if stages else 0
    columns = {"stat": pa.array([json.dumps(stat.as_dict()) for stat in stats] + [None] * extra, pa.string())}
    for stage in stages:
        columns[f"{stage}_ms"] = pa.array([0] * len(stats) + [timer.ms(stage)], pa.int64())
    for name in counts:
        columns[name.replace(".", "_")] = pa.array([0] * len(stats) + [timer.counts.get(name, 0)], pa.int64())
    return pa.table(columns)


def _collected(session: WriteSession, rows: Sequence, stages: Sequence[str] = (), counts: Sequence[str] = ()
               ) -> list[WriteStat]:
    """The write stats of the collected ``_stat_rows``; the tasks' ``stages`` go to the session as ``<stage>_task``
    and the ``counts`` asked for as they are, each summed over the tasks."""
    for i, stage in enumerate(stages, start=1):
        session.stage_seconds[f"{stage}_task"] = sum(r[i] for r in rows) / 1000
    for i, name in enumerate(counts, start=1 + len(stages)):
        session.stage_counts[name] = sum(r[i] for r in rows)
    return [WriteStat.from_dict(json.loads(r[0])) for r in rows if r[0] is not None]


def _schema_with(schema: T.StructType, *fields: tuple[str, T.DataType]) -> T.StructType:
    return T.StructType(list(schema.fields) + [T.StructField(n, t, True) for n, t in fields])


def _step(session: WriteSession, df: DataFrame, what: str):
    """The Spark jobs of one step of the write, named in the UI: ``hoodie upsert trips <instant>: tagging``."""
    return job_description(df.sparkSession,
                           f"hoodie {session.operation} {session.table.config.name} {session.instant_time}: {what}")


def _measure_record_size(session: WriteSession, keyed: DataFrame) -> None:
    """When the driver plans the inserts of a new table's first write and nothing tells the bytes a record
    takes (``WriteSession.measures_record_size``): those bytes, measured on the first rows of the keyed records
    (persisted, so the sample reads no input again; ``bulk_insert.encoded_record_size``), which the insert plan
    sizes new files by. A write whose tasks plan their own inserts measures in the tasks (``RecordWriter``)."""
    cfg = session.config
    if not session.measures_record_size():
        return
    with _step(session, keyed, "sampling the records' size"):
        sample = keyed.limit(bulk_insert.SAMPLE_ROWS).toArrow()
    if sample.num_rows:
        size = encoded_record_size(session.context(), sample, cfg.sizing.max_file_size)
        session.measured_record_size = max(1, round(size))


def write_dataframe(df: DataFrame, path: str, options: Mapping[str, str],
                    extra_metadata: Mapping[str, str] | None = None) -> str:
    """Run one write of ``df`` into the table at ``path``; return the committed instant time. The commit
    carries ``extra_metadata`` in its ``extraMetadata``.

    A ``HoodieError`` raised in a task is raised again here, as itself (Spark's exception chained)."""
    arrow_schema = to_arrow_schema(df.schema, timezone="UTC")
    persisted: list[DataFrame] = []
    try:
        return run_write(open_storage(path, options), options, arrow_schema, lambda s: _run(s, df, persisted),
                         extra_metadata).instant
    except BaseException as exc:  # the session has rolled the instant back
        raised_in_task = task_error(exc)
        if raised_in_task is not None:
            raise raised_in_task from exc
        raise
    finally:
        for frame in persisted:
            frame.unpersist()


def _run(session: WriteSession, df: DataFrame, persisted: list[DataFrame]) -> CommitResult:
    """The write's pipeline, its records shuffled where the operation and the index's capabilities allow."""
    session.group_runner = spark_group_runner(df.sparkSession)  # an inline clustering's groups: Spark tasks
    cfg, index = session.config, session.index
    keyed_schema = _schema_with(
        df.schema, (RECORD_KEY_COLUMN, T.StringType()), (PARTITION_PATH_COLUMN, T.StringType()),
        (IS_DELETE_COLUMN, T.BooleanType()),
    )
    if session.streams_bulk_insert:
        return _write_new_file_groups(session, df, keyed_schema)
    # a task holding its partitions' records can place them when the index is not global; a bulk insert placed
    # by hash too (a partition's buckets are its file groups, written by one task)
    placed_by_hash_bulk_insert = index.places_by_hash and cfg.operation is WriteOperation.BULK_INSERT
    if cfg.keygen.partition_fields and not index.is_global \
            and (cfg.operation.runs_per_partition or placed_by_hash_bulk_insert):
        return _write_by_partition(session, df, keyed_schema)
    return _write_by_file_group(session, df, keyed_schema, persisted)


# -- by partition: a task keys, places, routes and writes its partitions' records


def _table_files(session: WriteSession) -> dict[str, tuple[FileInfo, ...]]:
    """The table's files by directory, made by the driver at the start of the write: from the metadata table
    when it is on and ready, else one listing of the whole table (one paginated LIST on an object store)."""
    if session.new_table:
        return {}
    return {d: tuple(files) for d, files in session.table.listed_files().items()}


def _partition_bytes(listed: Mapping[str, Sequence[FileInfo]]) -> dict[str, int]:
    """Bytes of each partition's files (every file slice listed): what a per-partition write balances its
    tasks by (``spark.partition_balance``)."""
    return {p: sum(f.size for f in listed[p]) for p in partitions_of(listed)}


def _write_tasks(session: WriteSession, df: DataFrame, partitions: int | None, size: PlanSize) -> int:
    """How many tasks share the partitions of a per-partition write: the operation's
    ``hoodie.*.shuffle.parallelism``, or when it is 0 as many as the batch's size asks for
    (``task_balance.inferred_parallelism``: a core each, more for a batch of many files' bytes, a core each
    when its plan does not know its bytes), but no more than ``spark.sql.shuffle.partitions``, the
    table's ``partitions`` and the batch's rows (more would be tasks with nothing to do). Taking
    ``spark.sql.shuffle.partitions`` alone made a 2-row first write into a new table a 200-task stage
    (20 s in a session with Spark's defaults).

    The count is given explicitly because adaptive execution would otherwise coalesce the shuffle,
    which is small (the batch, not the files it rewrites), into a single task that then rewrote
    every partition's files one after the other."""
    if session.config.parallelism > 0:
        return session.config.parallelism
    configured = max(1, int(df.sparkSession.conf.get("spark.sql.shuffle.partitions") or 200))
    return max(1, min([configured, _tasks_by_size(session, df, size),
                       *(n for n in (partitions, size.rows) if n is not None)]))


def _tasks_by_size(session: WriteSession, df: DataFrame, size: PlanSize) -> int:
    """``task_balance.inferred_parallelism`` of the batch's bytes (a core each when its plan does not know them)."""
    return inferred_parallelism(size.bytes or 0, session.config.sizing.max_file_size, cores(df.sparkSession))


def _read_by_size(session: WriteSession, df: DataFrame, size: PlanSize) -> DataFrame:
    """``df`` read by no more tasks than its size asks for (``_tasks_by_size``: a task per core when its plan
    does not know its bytes, as for rows from Python): the map side of the shuffle by partition. An input of
    many small partitions (a DataFrame made from Python rows, Arrow or pandas, a union of many: hundreds)
    otherwise runs a task per partition before the shuffle, each deserializing the plan's whole lineage
    (30,000 rows as 200 Arrow slices unioned, 400 partitions: 3.8-4.4 s of CPU, 1.4-1.5 s coalesced). Spark's
    estimate is the bytes its leaves hold, which a filter does not lower, so a large read is not squeezed into
    a few tasks; a ``coalesce`` streams its partitions one after the other, holding none.

    The shuffle after it must be by a column computed above the ``coalesce`` (``TASK_COLUMN``): Spark drops a
    ``coalesce`` right below a ``repartition`` (``CollapseRepartition``). An estimate Spark scaled down from an
    unknown size (``spark.sql.defaultSizeInBytes``, through a projection) may ask for more tasks than a Java
    int holds: nothing to coalesce then."""
    tasks = _tasks_by_size(session, df, size)
    return df.coalesce(tasks) if tasks <= JAVA_INT_MAX else df


def _write_partitions(session: WriteSession, writer: RecordWriter, keyed: bool) -> Step:
    """The write of one task holding every record of its partitions (``keyed`` already, or not): place them
    against those partitions' files, plan their inserts, write their file groups, then check the instant is
    still pending (``write.task_attempt``). The stage timings and the index counts come back in an extra row."""
    cfg, instant = session.config, session.instant

    def run(records: pa.Table) -> pa.Table:
        token, task_partition = task_token()
        timer = StageTimer()
        stats = writer.write_records(records if keyed else record_keys.keyed(records, cfg), token, task_partition, timer)
        return _stat_rows(end_task_attempt(writer.table, instant, stats), timer, TASK_STAGES, TASK_COUNTS)
    return run


def _write_by_partition(session: WriteSession, df: DataFrame, keyed_schema: T.StructType) -> CommitResult:
    """One Spark job: records are shuffled once, by partition (``spark.partition_clustering``), and each task does
    the whole write of its partitions in one call (a partition's records and file groups never span tasks; a task
    holds its share of the batch, and one placing covers all its partitions, whose fixed cost, footers, hash
    rounds and the file-system view, is paid once per task). Tasks are no more than the table's partitions and the
    batch's rows (when its plan knows them, ``_write_tasks``); a batch for a single task is not shuffled at all."""
    cfg = session.config
    timer = StageTimer(session.stage_seconds)
    session.mark_inflight({})
    listed = _table_files(session)
    size = plan_size(df)
    df = planned_once(df)
    batch_rows = size.rows
    tasks = _write_tasks(session, df, None if session.new_table else len(partitions_of(listed)), size)
    # the tasks take the driver's listing instead of listing their partitions again, unless it is too
    # big to send to every task
    shipped = listed if sum(len(files) for files in listed.values()) <= SHIPPED_LISTING_FILES else None
    writer = session.record_writer(shipped)
    schema = _stat_schema(TASK_STAGES, TASK_COUNTS)
    if tasks == 1 and batch_rows is not None and batch_rows <= SINGLE_STAGE_ROWS:
        # a single row (a commit's fixed cost), or a small batch into a table of one partition, is one
        # task's whole: no shuffle, one stage keying and writing it (a larger batch keeps the keys stage
        # and its parallelism: ``coalesce`` would run the batch's whole plan in the one task)
        with _step(session, df, "tagging and writing the batch (1 task)"):
            rows = df.coalesce(1).mapInArrow(per_task(_write_partitions(session, writer, False)), schema).collect()
    elif (by := partition_clustering(df, cfg.keygen)) is not None:
        # shuffled by the partition columns, keyed in the writing task: the batch goes to Python once
        values = clustering_values(df, cfg.keygen, list(sizes)) if (sizes := _partition_bytes(listed)) else {}
        key = balanced_task_key(by[0], values, sizes, tasks) if len(by) == 1 else None
        task = F.expr(key if key is not None else f"hash({', '.join(by)})")
        shuffled = _read_by_size(session, df, size).withColumn(TASK_COLUMN, task) \
            .repartition(tasks, TASK_COLUMN).drop(TASK_COLUMN)
        with _step(session, df, f"tagging and writing by partition ({tasks} tasks)"):
            rows = shuffled.mapInArrow(per_task(_write_partitions(session, writer, False)), schema).collect()
    else:  # partition columns whose values do not cluster by path: shuffled by the computed path
        sizes = _partition_bytes(listed)
        key = balanced_task_key(sql_identifier(PARTITION_PATH_COLUMN), {p: sql_string(p) for p in sizes}, sizes, tasks)
        keyed = _read_by_size(session, df, size).mapInArrow(_add_keys(cfg), keyed_schema)
        with _step(session, df, f"tagging and writing by partition ({tasks} tasks)"):
            rows = keyed.repartition(tasks, F.col(PARTITION_PATH_COLUMN) if key is None else F.expr(key)).mapInArrow(
                per_task(_write_partitions(session, writer, True)), schema).collect()
    timer.lap("job")  # the Spark job: keys, the shuffle by partition, the tasks
    stats = _collected(session, rows, TASK_STAGES, TASK_COUNTS if session.looks_up_keys else ())
    return session.commit(stats)


# -- by file group: each step over the whole batch, the records shuffled to the tasks writing their file groups


def _write_groups(session: WriteSession, targets: Mapping[tuple[str, str], WriteTarget]):
    """One call per file group: its file is checked against the instant after it is written
    (``write.task_attempt``), as the call is the last a task makes for that group."""
    ctx, instant, table = session.context(), session.instant, session.table

    def run(key: tuple, records: pa.Table) -> pa.Table:
        token, task_partition = task_token()
        partition, file_id = (k.as_py() if isinstance(k, pa.Scalar) else k for k in key[:2])
        target = targets.get((partition, file_id)) or WriteTarget(partition, file_id)
        stat = write_file_group(ctx, target, records, token, task_partition)
        return _stat_rows(end_task_attempt(table, instant, [stat] if stat is not None else []))
    return run


def _tags_in_lookup_tasks(session: WriteSession) -> bool:
    """The write's records are tagged where their keys are looked up (``_tagged_in_lookup_tasks``): it looks its
    keys up (an upsert or a delete: never an overwrite, which would ask for the batch's partitions first) by an
    index that ``routes_by_key``."""
    return session.index.routes_by_key and session.looks_up_keys


def _routed_to_lookup_tasks(session: WriteSession, df: DataFrame, keyed_schema: T.StructType
                            ) -> tuple[DataFrame, bool]:
    """The records with the task that looks each one's key up (``LOOKUP_TASK_COLUMN``: file group ``i`` of the record
    index goes to task ``i``, an integer Spark's hash sends there, ``partition_balance.task_keys``, as Hudi's
    ``PartitionIdPassthrough`` sends it), and whether they are keyed yet. When the key is one field's value, Spark
    computes the task from that field (``lookup_routing.lookup_task_sql``) and the records, unkeyed, go through
    Python once, after the shuffle; otherwise the pass keying them adds it (``RecordIndex.lookup_task_of``)."""
    cfg, index = session.config, session.index
    count = index.lookup_tasks(())
    task = lookup_task_sql(df.schema, cfg.keygen, count)
    if task is not None:
        return df.withColumn(LOOKUP_TASK_COLUMN, F.expr(task)), False
    keys = np.array(task_keys(count), np.int32)

    def add(records: pa.Table) -> pa.Table:
        tasks = keys[index.lookup_task_of(records.column(RECORD_KEY_COLUMN))]
        return records.append_column(LOOKUP_TASK_COLUMN, pa.array(tasks, pa.int32()))
    return _keying(cfg, df, keyed_schema).then(add, _schema_with(keyed_schema, LOOKUP_TASK_FIELD)).frame(), True


def _tagged_in_lookup_tasks(session: WriteSession, df: DataFrame, keyed_schema: T.StructType, writer: RecordWriter,
                            files: list[FileKeyRange]) -> DataFrame:
    """The input ``df`` keyed (``keyed_schema``) and tagged in one shuffle: every record goes to the task of
    its key's record-index file group (``_routed_to_lookup_tasks``), which holds every record of its keys, so it
    keys them if the route did not, combines them (``record_keys.combined_across_partitions``), looks up exactly
    its keys (sorted, one read of its file group) and settles the keys found in another partition
    (``routing.partition_changes``). Hudi 0.15 shuffles for each of these steps: the combine
    (``HoodieWriteHelper.deduplicateRecords``' ``reduceByKey``), the keys to their file groups
    (``SparkMetadataTableRecordIndex.tagLocation``'s ``partitionBy``) and the locations back to the records
    (``tagGlobalLocationBackToRecords``' join); the records arrive at the lookup task here instead, with no join
    and nothing persisted before it."""
    cfg, index, scope = session.config, session.index, writer.scope
    routed, is_keyed = _routed_to_lookup_tasks(session, df, keyed_schema)

    def tag(records: pa.Table) -> pa.Table:
        records = records.drop_columns([LOOKUP_TASK_COLUMN])
        combined = record_keys.combined_across_partitions(
            records if is_keyed else record_keys.keyed(records, cfg), cfg)
        return routing.partition_changes(index.tag(combined, files, scope)[0], index)
    return routed.repartition(index.lookup_tasks(files), LOOKUP_TASK_COLUMN).mapInArrow(
        per_task(tag), _schema_with(keyed_schema, *LOCATION_FIELDS))


def _looked_up(session: WriteSession, keyed: DataFrame, writer: RecordWriter, files: list[FileKeyRange]
               ) -> DataFrame:
    """``keyed`` with the locations of their keys, found by the index's two distributed steps: thin (key, file)
    rows made per batch (``Index.candidates``) and shuffled by the file a lookup reads so that each task reads each
    of its files once, then the exact locations among them. The locations, index metadata (key -> file id of the
    batch's updates), are broadcast, so that the records themselves are not shuffled for the join."""
    index, scope = session.index, writer.scope
    if index.tags_records:  # looked up in the index's store where the records are (Hudi's locationTagFunction)
        return keyed.mapInArrow(per_batch(lambda records: index.tag(records, files, scope)[0]),
                                _schema_with(keyed.schema, *LOCATION_FIELDS))
    tasks = index.lookup_tasks(files)
    cands = keyed.select(RECORD_KEY_COLUMN, PARTITION_PATH_COLUMN).mapInArrow(
        per_batch(lambda records: index.candidates(records, files)), from_arrow_schema(CANDIDATE_SCHEMA))
    locations = cands.repartition(tasks, LOOKUP_FILE_COLUMN).mapInArrow(
        per_task(lambda found: index.confirm(found, files, scope)), from_arrow_schema(LOCATION_SCHEMA))
    on = list(index.join_keys)
    locations = locations.select(*on, *LOCATION_COLUMNS).dropDuplicates(on)
    return keyed.join(F.broadcast(locations), on=on, how="left").select(*keyed.columns, *LOCATION_COLUMNS)


def _counted(session: WriteSession, df: DataFrame, located: DataFrame, what: str) -> dict[str, int]:
    """The workload profile: the batch's inserts (records without a location, deletes aside) per partition."""
    with _step(session, df, what):
        return {r[0]: r[1] for r in located.filter(F.col(FILE_ID_COLUMN).isNull() & ~F.col(IS_DELETE_COLUMN))
                .groupBy(PARTITION_PATH_COLUMN).count().collect()}


def _write_by_file_group(session: WriteSession, df: DataFrame, keyed_schema: T.StructType,
                         persisted: list[DataFrame]) -> CommitResult:
    cfg, index, operation = session.config, session.index, session.operation
    timer = StageTimer(session.stage_seconds)
    df = planned_once(df)  # read by several jobs: each would plan a union of many relations again
    keyed = _keying(cfg, df, keyed_schema)
    in_lookup_tasks = _tags_in_lookup_tasks(session)  # then keyed and combined where they are tagged
    if not in_lookup_tasks and index.is_global and cfg.dedupes:  # a key in several partitions: one shuffle by key
        keyed = _Batches(keyed.frame().repartition(RECORD_KEY_COLUMN).mapInArrow(
            per_task(lambda records: record_keys.combined_across_partitions(records, cfg)), keyed_schema),
            keyed_schema)
    # the batch's partitions: those an overwrite replaces, and those whose files a lookup reads and inserts may
    # fill; an index placing by hash needs neither for another operation, and its records go through Python once
    partitions = None
    if not in_lookup_tasks and (not index.places_by_hash or operation.replaces_file_groups
                                or operation.drops_partitions):
        frame = keyed.frame().persist(StorageLevel.MEMORY_AND_DISK)
        persisted.append(frame)
        with _step(session, df, "keys and partitions"):
            partitions = [r[0] for r in frame.select(PARTITION_PATH_COLUMN).distinct().collect()]
        timer.lap("keys")
        if operation.drops_partitions:
            return session.drop_partitions(partitions)
        keyed = _Batches(frame, keyed.schema)

    if not index.places_by_hash:  # new file groups are sized by the bytes a record takes
        _measure_record_size(session, keyed.frame().select(*keyed_schema.names))
    writer = session.record_writer()
    # an index placing by hash refuses files that do not fit its buckets here, before anything is written
    files = writer.key_ranges(None if index.is_global else partitions)
    located_schema = _schema_with(keyed_schema, *LOCATION_FIELDS)
    if index.places_by_hash:  # the key alone places a record: per batch, no lookup, no shuffle, no inserts
        scope = writer.scope
        placed = keyed.then(lambda records: index.tag(records, files, scope)[0], located_schema)
        counts: dict[str, int] = {}
        writing = "tagging and writing file groups by bucket"
    else:
        if in_lookup_tasks or (session.looks_up_keys and files):
            index.check_lookup_files(files)  # on the driver: the tasks' lookups would fail each alike
            if in_lookup_tasks:
                located = _tagged_in_lookup_tasks(session, df, keyed_schema, writer, files)
            else:
                located = _looked_up(session, keyed.frame(), writer, files)
                if index.is_global:  # a key found in another partition moves, or is updated where it is
                    located = located.mapInArrow(
                        per_batch(lambda records: routing.partition_changes(records, index)), located_schema)
            located = located.persist(StorageLevel.MEMORY_AND_DISK)
            persisted.append(located)
            counts = _counted(session, df, located, "tagging")
        else:  # nothing to look up: a projection of the persisted keyed records
            located = keyed.frame().select(*keyed_schema.names,
                                           *[F.lit(None).cast("string").alias(n) for n, _ in LOCATION_FIELDS])
            counts = _counted(session, df, located, "counting inserts")
        timer.lap("tag")
        placed = _Batches(located, located_schema)
        writing = f"writing file groups ({sum(counts.values())} inserts)"

    if writer.table.timeline.pending_clustering():  # updates of file groups a clustering will rewrite fail here
        placed = placed.then(writer.refuse_clustered_updates, located_schema)
    plan = writer.insert_plan(counts, files)
    session.mark_inflight({p: {"inserts": n} for p, n in counts.items()})
    targets = writer.targets(files, plan)
    timer.lap("profile")

    routed = placed.then(lambda records: routing.route(records, plan)).frame()
    stats_df = routed.groupBy(PARTITION_PATH_COLUMN, FILE_ID_COLUMN).applyInArrow(
        _write_groups(session, targets), _stat_schema())
    with _step(session, df, writing):
        stats = _collected(session, stats_df.collect())
    timer.lap("write")
    return session.commit(stats, partitions)


# -- new file groups: a bulk insert each task writes straight into new file groups


def _bulk_insert_tasks(session: WriteSession, keyed: bool, sorted_by_partition: bool):
    """A ``mapInArrow`` function writing its task's rows into new file groups (``write.bulk_insert``), then
    checking the instant is still pending (``write.task_attempt``); one row per file written, and one
    more with the task's stage timings (stat null)."""
    ctx, cfg, instant, table = session.context(), session.config, session.instant, session.table
    record_size = session.average_record_size()

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        token, task_partition = task_token()
        timer = StageTimer()
        tables = (pa.Table.from_batches([batch]) for batch in batches)
        stats = end_task_attempt(table, instant, write_bulk_insert_task(
            ctx, cfg, record_size, tables, token, task_partition, timer, keyed, sorted_by_partition))
        yield from _stat_rows(stats, timer, bulk_insert.STAGES).to_batches()
    return run


def _write_new_file_groups(session: WriteSession, df: DataFrame, keyed_schema: T.StructType) -> CommitResult:
    """A bulk insert: each task writes its rows straight into new file groups, the rows arranged as
    ``hoodie.bulkinsert.sort.mode`` asks (``spark.bulk_insert_partitioning``: counting the input by
    partition first, unless the mode is NONE)."""
    cfg = session.config
    timer = StageTimer(session.stage_seconds)
    session.mark_inflight({})
    with _step(session, df, "bulk insert: counting rows by partition"):
        arranged = bulk_insert_input(session, df, keyed_schema, _add_keys(cfg))
    timer.lap("profile")
    mode = cfg.bulk_insert_sort_mode or "size-balanced"
    tasks = f"{arranged.tasks} tasks" if arranged.tasks else "the input's tasks"
    with _step(session, df, f"bulk insert ({mode}, {tasks})"):
        rows = arranged.rows.mapInArrow(_bulk_insert_tasks(session, arranged.keyed, arranged.sorted_by_partition),
                                        _stat_schema(bulk_insert.STAGES)).collect()
    timer.lap("job")
    return session.commit(_collected(session, rows, bulk_insert.STAGES))
