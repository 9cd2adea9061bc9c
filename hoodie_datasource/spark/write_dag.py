"""The distributed write: the Hoodie upsert DAG expressed with DataFrame operations.

Runs in the user's Python process (classic or Spark Connect); records only ever move between
Spark tasks, the driver sees index metadata (min/max keys per file), per-partition counts and
write stats::

    input --mapInArrow(keys)--> keyed (persisted)
    keyed --mapInArrow(range candidates)--> candidates --repartition(file)--mapInArrow(bloom + exact)--> locations
    keyed LEFT JOIN locations --> tagged (persisted) --count inserts per partition--> profile -> insert plan
    tagged --mapInArrow(route)--groupBy(partition, file).applyInArrow(write file group)--> write stats
    driver: commit (the completed instant file)

Upserts, inserts and deletes of a partitioned table (non-global index) are one job: the input shuffled by
its partition columns (``spark.partition_clustering``; by the computed path when they cannot cluster it),
each task keying, tagging and writing its partitions. A bucket index write of a table without partitions
is one job too: the driver lists the file groups, then input --mapInArrow(keys, bucket tag, route)--
groupBy(partition, file).applyInArrow(write file group)--> write stats.

A bulk insert (no bucket index, no combining) is one job instead: input (sorted as
``hoodie.bulkinsert.sort.mode`` asks) --mapInArrow(keys, write new file groups)--> write stats.

Each step's Spark jobs are described ``hoodie <operation> <table> <instant>: <step>`` in the Spark UI
(``spark.job_status``), and a ``HoodieError`` a task raised is raised again by ``write_dataframe`` as
itself (``spark.task_errors``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence

import pyarrow as pa
from pyspark import StorageLevel, TaskContext
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

from hoodie_datasource.client.write_client import CommitResult, WriteSession, run_write
from hoodie_datasource.config.write_config import WriteConfig
from hoodie_datasource.config.write_operation import WriteOperation
from hoodie_datasource.index.key_ranges import FileKeyRange
from hoodie_datasource.index.lookup import IndexCounts
from hoodie_datasource.spark.bulk_insert_partitioning import bulk_insert_input
from hoodie_datasource.spark.input_size import PlanSize, cores, plan_size
from hoodie_datasource.spark.job_status import job_description
from hoodie_datasource.spark.partition_balance import balanced_task_key, clustering_values
from hoodie_datasource.spark.partition_clustering import partition_clustering
from hoodie_datasource.spark.task_errors import task_error
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.storage.storage import FileInfo, Storage
from hoodie_datasource.table.file_names import write_token
from hoodie_datasource.table.fs_view import list_table_files, partitions_of
from hoodie_datasource.table.meta_columns import (
    FILE_ID_COLUMN,
    IS_DELETE_COLUMN,
    LOCATION_PARTITION_COLUMN,
    PARTITION_PATH_COLUMN,
    RECORD_KEY_COLUMN,
)
from hoodie_datasource.timeline.commit_metadata import WriteStat
from hoodie_datasource.write import bulk_insert, tagging
from hoodie_datasource.write.bucket_tagging import bucket_file_groups, bucket_tag
from hoodie_datasource.write.bulk_insert import encoded_record_size, write_bulk_insert_task
from hoodie_datasource.write.file_group_writer import write_file_group
from hoodie_datasource.write.partitioner import NO_INSERTS
from hoodie_datasource.write.record_writer import RecordWriter
from hoodie_datasource.write.stage_timer import StageTimer
from hoodie_datasource.write.targets import WriteTarget
from hoodie_datasource.write.task_attempt import end_task_attempt
from hoodie_datasource.write.task_balance import inferred_parallelism

logger = logging.getLogger(__name__)

STAT_SCHEMA = T.StructType([T.StructField("stat", T.StringType())])
TASK_STAGES = ("tag", "profile", "write")
TASK_COUNTS = tuple(IndexCounts().as_dict())  # index.keys, index.candidates, ...
SHIPPED_LISTING_FILES = 20_000  # about 2 MB pickled into each task
LOCATION_FIELDS = ((FILE_ID_COLUMN, T.StringType()), (LOCATION_PARTITION_COLUMN, T.StringType()))
SINGLE_STAGE_ROWS = 10_000  # a batch written by one task is keyed in that task too, up to this many rows
PARTITION_STAT_SCHEMA = T.StructType([T.StructField("stat", T.StringType())]
                                     + [T.StructField(f"{stage}_ms", T.LongType()) for stage in TASK_STAGES]
                                     + [T.StructField(name.replace(".", "_"), T.LongType()) for name in TASK_COUNTS])


def _per_batch(step: Callable[[pa.Table], pa.Table]):
    """A ``mapInArrow`` function applying ``step`` to each batch on its own."""
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            yield from step(pa.Table.from_batches([batch])).to_batches()
    return run


def _add_keys(cfg: WriteConfig):
    return _per_batch(lambda records: tagging.keyed(records, cfg))


def _combine_across_partitions(cfg: WriteConfig):
    """A ``mapInArrow`` function over records shuffled by key: one record per key (global index)."""
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        records = list(batches)
        if records:
            yield from tagging.combined_across_partitions(pa.Table.from_batches(records), cfg).to_batches()
    return run


def _confirm(storage: Storage, use_bloom: bool, log_deletes: tagging.LogDeletes | None,
             files: Sequence[FileKeyRange]):
    by_base_file = {f.base_file: f for f in files} if log_deletes is not None else None

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        # all candidates of a file are in this task: check each file once
        table = pa.Table.from_batches(list(batches), schema=tagging.CANDIDATE_SCHEMA)
        yield from tagging.confirm(storage, table, use_bloom, log_deletes, by_base_file).to_batches()
    return run




def _write_groups(session: WriteSession, targets: Mapping[tuple[str, str], WriteTarget]):
    """One call per file group: its file is checked against the instant after it is written
    (``write.task_attempt``), as the call is the last a task makes for that group."""
    ctx, instant, table = session.context(), session.instant, session.table

    def run(key: tuple, records: pa.Table) -> pa.Table:
        token, task_partition = task_token()
        partition, file_id = (k.as_py() if isinstance(k, pa.Scalar) else k for k in key[:2])
        target = targets.get((partition, file_id)) or WriteTarget(partition, file_id)
        stat = write_file_group(ctx, target, records, token, task_partition)
        stats = end_task_attempt(table, instant, [stat] if stat is not None else [])
        return pa.table({"stat": pa.array([json.dumps(s.as_dict()) for s in stats], pa.string())})
    return run


def task_token() -> tuple[str, int]:
    task = TaskContext.get()
    if task is None:
        return "0-0-0", 0
    return write_token(task.partitionId(), task.stageId(), task.taskAttemptId()), task.partitionId()


def _write_partitions(session: WriteSession, writer: RecordWriter) -> Callable[[pa.Table], pa.Table]:
    """The write of one task holding every record of its partitions: tag against those partitions' files,
    plan their inserts, write their file groups, then check the instant is still pending
    (``write.task_attempt``). The stage timings and the index counts come back in an extra row per
    call (stat null)."""
    instant = session.instant

    def run(table: pa.Table) -> pa.Table:
        token, task_partition = task_token()
        timer = StageTimer()
        stats = end_task_attempt(writer.table, instant, writer.write_records(table, token, task_partition, timer))
        columns = {"stat": pa.array([json.dumps(stat.as_dict()) for stat in stats] + [None], pa.string())}
        for stage in TASK_STAGES:
            columns[f"{stage}_ms"] = pa.array([0] * len(stats) + [timer.ms(stage)], pa.int64())
        for name in TASK_COUNTS:
            columns[name.replace(".", "_")] = pa.array([0] * len(stats) + [timer.counts.get(name, 0)], pa.int64())
        return pa.table(columns)
    return run


def _write_task_records(write: Callable[[pa.Table], pa.Table], key: Callable[[pa.Table], pa.Table] | None = None):
    """A ``mapInArrow`` function writing all its task's records in one call of ``write`` (keying them first
    with ``key`` when they are not yet keyed): one tagging of all the task's partitions, whose fixed
    cost (footers, hash rounds, the file-system view) is paid once per task, not once per partition."""
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        records = [batch for batch in batches if batch.num_rows]
        if records:
            table = pa.Table.from_batches(records)
            yield from write(key(table) if key else table).to_batches()
    return run


def _schema_with(schema: T.StructType, *fields: tuple[str, T.DataType]) -> T.StructType:
    return T.StructType(list(schema.fields) + [T.StructField(n, t, True) for n, t in fields])


def _table_files(session: WriteSession) -> dict[str, tuple[FileInfo, ...]]:
    """The table's files by directory: one listing of the whole table (one paginated LIST on an
    object store), made by the driver at the start of the write."""
    if session.new_table:
        return {}
    return {d: tuple(files) for d, files in list_table_files(session.table.storage).items()}


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
    spark = df.sparkSession
    configured = max(1, int(spark.conf.get("spark.sql.shuffle.partitions") or 200))
    by_size = inferred_parallelism(size.bytes or 0, session.config.sizing.max_file_size, cores(spark))
    return max(1, min([configured, by_size, *(n for n in (partitions, size.rows) if n is not None)]))


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


def _step(session: WriteSession, df: DataFrame, what: str):
    """The Spark jobs of one step of the write, named in the UI: ``hoodie upsert trips <instant>: tagging``."""
    return job_description(df.sparkSession,
                           f"hoodie {session.operation} {session.table.config.name} {session.instant_time}: {what}")


def _run_per_partition(session: WriteSession, df: DataFrame, keyed_schema: T.StructType) -> CommitResult:
    """Upserts, inserts and deletes of a partitioned table (non-global index) in one Spark job:
    records are shuffled once, by partition (``spark.partition_clustering``), and each task does the whole write of its
    partitions in one call (a partition's records and file groups never span tasks; a task holds its
    share of the batch, and one tagging covers all its partitions). Tasks are no more than the
    table's partitions and the batch's rows (when its plan knows them, ``_write_tasks``); a batch for
    a single task is not shuffled at all."""
    cfg = session.config
    timer = StageTimer(session.stage_seconds)
    session.mark_inflight({})
    listed = _table_files(session)
    size = plan_size(df)
    batch_rows = size.rows
    tasks = _write_tasks(session, df, None if session.new_table else len(partitions_of(listed)), size)
    # the tasks take the driver's listing instead of listing their partitions again, unless it is too
    # big to send to every task
    shipped = listed if sum(len(files) for files in listed.values()) <= SHIPPED_LISTING_FILES else None
    write = _write_partitions(session, session.record_writer(shipped))
    if tasks == 1 and batch_rows is not None and batch_rows <= SINGLE_STAGE_ROWS:
        # a single row (a commit's fixed cost), or a small batch into a table of one partition, is one
        # task's whole: no shuffle, one stage keying and writing it (a larger batch keeps the keys stage
        # and its parallelism: ``coalesce`` would run the batch's whole plan in the one task)
        with _step(session, df, "tagging and writing the batch (1 task)"):
            rows = df.coalesce(1).mapInArrow(_write_task_records(write, lambda t: tagging.keyed(t, cfg)),
                                             PARTITION_STAT_SCHEMA).collect()
    elif (by := partition_clustering(df, cfg.keygen)) is not None:
        # shuffled by the partition columns, keyed in the writing task: the batch goes to Python once
        values = clustering_values(df, cfg.keygen, list(sizes)) if (sizes := _partition_bytes(listed)) else {}
        key = balanced_task_key(by[0], values, sizes, tasks) if len(by) == 1 else None
        with _step(session, df, f"tagging and writing by partition ({tasks} tasks)"):
            rows = df.repartition(tasks, *([key] if key is not None else by)).mapInArrow(
                _write_task_records(write, lambda t: tagging.keyed(t, cfg)), PARTITION_STAT_SCHEMA).collect()
    else:  # partition columns whose values do not cluster by path: shuffled by the computed path
        sizes, path = _partition_bytes(listed), F.col(PARTITION_PATH_COLUMN)
        key = balanced_task_key(path, {p: F.lit(p) for p in sizes}, sizes, tasks)
        keyed = df.mapInArrow(_add_keys(cfg), keyed_schema).repartition(tasks, path if key is None else key)
        with _step(session, df, f"tagging and writing by partition ({tasks} tasks)"):
            rows = keyed.mapInArrow(_write_task_records(write), PARTITION_STAT_SCHEMA).collect()
    timer.lap("job")  # the Spark job: keys, the shuffle by partition, the tasks
    stats = [WriteStat.from_dict(json.loads(r[0])) for r in rows if r[0] is not None]
    for i, stage in enumerate(TASK_STAGES, start=1):
        session.stage_seconds[f"{stage}_task"] = sum(r[i] for r in rows) / 1000
    if session.needs_tagging and not cfg.index.is_bucket:
        for i, name in enumerate(TASK_COUNTS, start=1 + len(TASK_STAGES)):
            session.stage_counts[name] = sum(r[i] for r in rows)
    return session.commit(stats)


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
        columns = {"stat": pa.array([json.dumps(stat.as_dict()) for stat in stats] + [None], pa.string())}
        for stage in bulk_insert.STAGES:
            columns[f"{stage}_ms"] = pa.array([0] * len(stats) + [timer.ms(stage)], pa.int64())
        yield pa.RecordBatch.from_pydict(columns)
    return run


def _run_bulk_insert(session: WriteSession, df: DataFrame, keyed_schema: T.StructType) -> CommitResult:
    """A bulk insert: each task writes its rows straight into new file groups, the rows arranged as
    ``hoodie.bulkinsert.sort.mode`` asks (``spark.bulk_insert_partitioning``: counting the input by
    partition first, unless the mode is NONE)."""
    cfg = session.config
    timer = StageTimer(session.stage_seconds)
    session.mark_inflight({})
    with _step(session, df, "bulk insert: counting rows by partition"):
        arranged = bulk_insert_input(session, df, keyed_schema, _add_keys(cfg))
    timer.lap("profile")
    schema = T.StructType([T.StructField("stat", T.StringType())]
                          + [T.StructField(f"{stage}_ms", T.LongType()) for stage in bulk_insert.STAGES])
    mode = cfg.bulk_insert_sort_mode or "size-balanced"
    tasks = f"{arranged.tasks} tasks" if arranged.tasks else "the input's tasks"
    with _step(session, df, f"bulk insert ({mode}, {tasks})"):
        results = arranged.rows.mapInArrow(_bulk_insert_tasks(session, arranged.keyed, arranged.sorted_by_partition),
                                           schema).collect()
    timer.lap("job")
    stats = [WriteStat.from_dict(json.loads(r[0])) for r in results if r[0] is not None]
    for i, stage in enumerate(bulk_insert.STAGES, start=1):
        session.stage_seconds[f"{stage}_task"] = sum(r[i] for r in results) / 1000
    return session.commit(stats)


def _run_bucketed(session: WriteSession, df: DataFrame, keyed_schema: T.StructType) -> CommitResult:
    """A bucket index write that is not per partition (a table without partition fields) in one Spark job:
    the bucket hash places every record, so there are no inserts to count nor to plan (Hudi's
    ``SparkBucketIndexPartitioner`` maps a bucket to its file group, new or not). The driver lists the
    table's file groups before the job, checking them against the bucket count; each input task keys,
    tags and routes its records in one pass (``bucket_tagging.bucket_tag``, then ``tagging.route``, which
    drops deletes of buckets without a file group); one call per file group writes it, combining its
    records."""
    cfg, instant = session.config, session.instant
    timer = StageTimer(session.stage_seconds)
    writer = session.record_writer()
    files = writer.key_ranges(None)
    bucket_file_groups(files, cfg.index.num_buckets)  # raises before anything is written
    session.mark_inflight({})
    targets = writer.targets(files, NO_INSERTS)
    timer.lap("profile")

    def place(records: pa.Table) -> pa.Table:
        tagged = bucket_tag(tagging.keyed(records, cfg), files, cfg.index, instant)
        return tagging.route(tagged, NO_INSERTS)

    routed = df.mapInArrow(_per_batch(place), _schema_with(keyed_schema, *LOCATION_FIELDS))
    stats_df = routed.groupBy(PARTITION_PATH_COLUMN, FILE_ID_COLUMN).applyInArrow(
        _write_groups(session, targets), STAT_SCHEMA)
    with _step(session, df, "tagging and writing file groups by bucket"):
        stats = [WriteStat.from_dict(json.loads(r[0])) for r in stats_df.collect()]
    timer.lap("write")
    return session.commit(stats)


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
    cfg = session.config
    keyed_schema = _schema_with(
        df.schema, (RECORD_KEY_COLUMN, T.StringType()), (PARTITION_PATH_COLUMN, T.StringType()),
        (IS_DELETE_COLUMN, T.BooleanType()),
    )
    if cfg.streams_bulk_insert:
        return _run_bulk_insert(session, df, keyed_schema)
    # a bucket table's bulk insert too: a partition's buckets are its file groups, written by one task
    bucketed = cfg.index.is_bucket and cfg.operation is WriteOperation.BULK_INSERT
    if cfg.keygen.partition_fields and not cfg.index.is_global and (cfg.operation.runs_per_partition or bucketed):
        return _run_per_partition(session, df, keyed_schema)
    if cfg.index.is_bucket and not (cfg.operation.replaces_file_groups or cfg.operation.drops_partitions):
        return _run_bucketed(session, df, keyed_schema)
    timer = StageTimer(session.stage_seconds)
    keyed = df.mapInArrow(_add_keys(cfg), keyed_schema)
    if cfg.index.is_global and cfg.dedupes:  # the same key may arrive in several partitions: one shuffle by key
        keyed = keyed.repartition(RECORD_KEY_COLUMN).mapInArrow(_combine_across_partitions(cfg), keyed_schema)
    keyed = keyed.persist(StorageLevel.MEMORY_AND_DISK)
    persisted.append(keyed)
    with _step(session, df, "keys and partitions"):
        partitions = [r[0] for r in keyed.select(PARTITION_PATH_COLUMN).distinct().collect()]
    timer.lap("keys")
    if cfg.operation.drops_partitions:
        return session.drop_partitions(partitions)

    _measure_record_size(session, keyed)
    writer = session.record_writer()
    files = writer.key_ranges(None if cfg.index.is_global else partitions)
    if cfg.index.is_bucket:  # the bucket hash places every record: no lookup, no shuffle
        instant, overwrite = session.instant, cfg.operation.replaces_file_groups
        tagged = keyed.mapInArrow(_per_batch(lambda records: bucket_tag(records, files, cfg.index, instant, overwrite)),
                                  _schema_with(keyed.schema, *LOCATION_FIELDS))
    elif session.needs_tagging and files:
        cand_schema = from_arrow_schema(tagging.CANDIDATE_SCHEMA)
        cands = keyed.select(RECORD_KEY_COLUMN, PARTITION_PATH_COLUMN).mapInArrow(
            _per_batch(lambda records: tagging.candidates(records, files, cfg.index.prune_by_ranges,
                                                          cfg.index.is_global)), cand_schema
        )
        locations = cands.repartition(max(1, min(len(files), 200)), "_hoodie_base_file").mapInArrow(
            _confirm(session.table.storage, cfg.index.uses_bloom, writer.log_deletes, files),
            from_arrow_schema(tagging.LOCATION_SCHEMA)
        )
        on = [RECORD_KEY_COLUMN] if cfg.index.is_global else [RECORD_KEY_COLUMN, PARTITION_PATH_COLUMN]
        # locations are index metadata (key -> file id of the batch's updates): small, so they are
        # broadcast and the records themselves are not shuffled for the join
        locations = locations.select(*on, FILE_ID_COLUMN, LOCATION_PARTITION_COLUMN).dropDuplicates(on)
        tagged = keyed.join(F.broadcast(locations), on=on, how="left").select(*keyed_schema.names, FILE_ID_COLUMN,
                                                                 LOCATION_PARTITION_COLUMN)
        if cfg.index.is_global:
            tagged = tagged.mapInArrow(_per_batch(tagging.split_partition_moves), tagged.schema)
        tagged = tagged.persist(StorageLevel.MEMORY_AND_DISK)
        persisted.append(tagged)
    else:  # nothing to look up: a projection of the persisted keyed records
        tagged = keyed.select(*keyed_schema.names, *[F.lit(None).cast("string").alias(n) for n, _ in LOCATION_FIELDS])
    if cfg.index.is_bucket:  # every record but a delete of a bucket without a file group has its file id
        counts: dict[str, int] = {}
    else:
        with _step(session, df, "tagging" if session.needs_tagging and files else "counting inserts"):
            counts = {
                r[0]: r[1]
                for r in tagged.filter(F.col(FILE_ID_COLUMN).isNull() & ~F.col(IS_DELETE_COLUMN))
                .groupBy(PARTITION_PATH_COLUMN).count().collect()
            }
    timer.lap("tag")

    plan = writer.insert_plan(counts, files)
    session.mark_inflight({p: {"inserts": n} for p, n in counts.items()})
    targets = writer.targets(files, plan)
    timer.lap("profile")

    routed = tagged.mapInArrow(_per_batch(lambda records: tagging.route(records, plan)), tagged.schema)
    stats_df = routed.groupBy(PARTITION_PATH_COLUMN, FILE_ID_COLUMN).applyInArrow(
        _write_groups(session, targets), STAT_SCHEMA
    )
    with _step(session, df, f"writing file groups ({sum(counts.values())} inserts)"):
        stats = [WriteStat.from_dict(json.loads(r[0])) for r in stats_df.collect()]
    timer.lap("write")
    return session.commit(stats, partitions)
