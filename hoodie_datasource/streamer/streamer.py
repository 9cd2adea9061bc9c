"""Rounds of ingestion (Apache Hudi's ``HoodieStreamer`` / ``StreamSync``): read what the source has after
the checkpoint, transform it (optional SQL), write it to the target as one commit recording the new
checkpoint, and, with ``--continuous``, again every ``--min-sync-interval-seconds``.

A DFS source's files are parsed in Spark tasks (``mapInArrow``, through the storage layer, so any store
the library supports works); a Kafka source's offset ranges are read in Spark tasks too (``kafka_source``),
a round that finds no record but moves the checkpoint (a table without one, starting at the topic's end)
handing it to the next round of the run; a hoodie source is read with an incremental read of up to
``num_instants`` commits, never past a write still in flight. Bad records (unparseable, null record key)
fail the round before anything is written, naming the first few, or with an error table go there, after
the round's commit, each with its file (or topic and partition), raw text and reason. Each round logs a
progress line; the run ends with a summary.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from hoodie_datasource.config.stream_config import StreamReadConfig
from hoodie_datasource.config.table_config import table_exists
from hoodie_datasource.errors import InvalidRecordError
from hoodie_datasource.read.stream_offsets import START_OF_TIMELINE, end_offset
from hoodie_datasource.schema.avro_schema import avro_to_arrow_schema
from hoodie_datasource.spark.register import register
from hoodie_datasource.spark.task_errors import task_error
from hoodie_datasource.spark.types import spark_schema
from hoodie_datasource.spark.write_dag import write_dataframe
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.streamer.checkpoint import commit_metadata, resume_point
from hoodie_datasource.streamer.config import StreamerConfig
from hoodie_datasource.streamer.file_source import BAD_RECORD_SCHEMA, parse_file, select_new_files
from hoodie_datasource.streamer.kafka_offsets import OffsetRange
from hoodie_datasource.streamer.kafka_source import commit_to_group, plan, read_ranges, sample_json_schema
from hoodie_datasource.streamer.schema_registry import subject_schema
from hoodie_datasource.table.meta_columns import META_COLUMNS
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.timeline import Timeline

logger = logging.getLogger(__name__)
BAD = "_hoodie_streamer_bad_"  # prefix of the columns carrying bad records beside the good ones
SOURCE_VIEW = "hoodie_streamer_source"
SHOWN_BAD_RECORDS = 3
RANGE_COLUMNS = ("partition", "start", "until")


@dataclass(frozen=True)
class Round:
    rows: int  # records read from the source (good ones)
    bad: int
    instant: str | None  # the commit made, None when the source had nothing new
    seconds: float
    checkpoint: str | None = None  # with no commit: where the next round starts, when the table has no checkpoint


@dataclass(frozen=True)
class Summary:
    rounds: int
    rows: int
    bad: int
    commits: int
    seconds: float


def read_file(uri: str, options: dict[str, str] | None = None) -> bytes:
    """A whole file given by its path or URI (a schema or properties file), through the storage layer."""
    folder, _, name = uri.rstrip("/").rpartition("/")
    return open_storage(folder or ".", options).read(name)


def _storage_options(cfg: StreamerConfig) -> dict[str, str]:
    return {key: v for key, v in cfg.write_options.items() if key.startswith("hoodie.storage.")}


def _timeline(path: str, options: dict[str, str]) -> Timeline | None:
    storage = open_storage(path, options)
    return Table.load(storage).timeline if table_exists(storage) else None


def _dfs_records(spark: SparkSession, cfg: StreamerConfig, checkpoint: str | None) -> tuple[DataFrame, str] | None:
    """The new files' records (good ones, with bad ones in ``_hoodie_streamer_bad_*`` columns) and the new
    checkpoint; None when no file is new."""
    options = _storage_options(cfg)
    storage = open_storage(cfg.source_root, options)
    selection = select_new_files(storage, checkpoint, cfg.source_limit)
    if not selection.files:
        return None
    schemas = _provided_schemas(cfg, options)
    if schemas is not None:
        schema = schemas[1]
    else:  # the first file's columns: give a schema file when files differ
        schema = parse_file(storage, selection.files[0].path, cfg.source, None, (), cfg.csv_header).good.schema
    out = _with_bad_columns(schema)
    root, fmt, header = cfg.source_root, cfg.source, cfg.csv_header
    keys = tuple(f for f in cfg.key_fields if f in schema.names)

    def parse(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        source = open_storage(root, options)
        for batch in batches:
            for path in batch.column("path").to_pylist():
                parsed = parse_file(source, path, fmt, schema, keys, header)
                yield from _good_and_bad(parsed.good, parsed.bad, out)

    paths = spark.createDataFrame([(f.path,) for f in selection.files], "path string")
    tasks = max(1, min(len(selection.files), spark.sparkContext.defaultParallelism))
    return paths.repartition(tasks).mapInArrow(parse, spark_schema(out)), selection.checkpoint


def _provided_schemas(cfg: StreamerConfig, options: dict[str, str]) -> tuple[dict, pa.Schema] | None:
    """The schema provider's source schema (Avro, what records are read into) and the columns of the rows the
    round writes (the target schema's), fetched anew each round; None without a schema provider."""
    if cfg.schema_registry is not None:
        registry = cfg.schema_registry
        source = subject_schema(registry.url, registry.timeout_s)
        target = source if registry.target_url == registry.url else subject_schema(registry.target_url,
                                                                                   registry.timeout_s)
        return source, avro_to_arrow_schema(target)
    if cfg.source_schema_file:
        source = json.loads(read_file(cfg.source_schema_file, options))
        return source, avro_to_arrow_schema(source)
    return None


def _with_bad_columns(schema: pa.Schema) -> pa.Schema:
    return pa.schema([*schema, *(pa.field(BAD + f.name, f.type) for f in BAD_RECORD_SCHEMA)])


def _good_and_bad(good: pa.Table, bad: pa.Table, out: pa.Schema) -> Iterator[pa.RecordBatch]:
    """Good records with null ``_hoodie_streamer_bad_*`` columns, then bad ones with null record columns."""
    for f in BAD_RECORD_SCHEMA:
        good = good.append_column(BAD + f.name, pa.nulls(good.num_rows, f.type))
    schema_fields = len(out) - len(BAD_RECORD_SCHEMA)
    bad = pa.table([pa.nulls(bad.num_rows, f.type) for f in list(out)[:schema_fields]] + bad.columns, schema=out)
    yield from pa.concat_tables([good.cast(out), bad]).to_batches()


def _kafka_records(spark: SparkSession, cfg: StreamerConfig,
                   checkpoint: str | None) -> tuple[DataFrame | None, str] | None:
    """The records of the round's Kafka offset ranges, each range read by a Spark task, and the new
    checkpoint; no frame when there is no new record (the checkpoint can still move: a table without one
    starting at the topic's end), None when the checkpoint would not move either."""
    kafka, options = cfg.kafka, _storage_options(cfg)
    planned = plan(kafka, checkpoint, cfg.source_limit)
    if planned.checkpoint == checkpoint:
        return None
    if not planned.count:
        return None, planned.checkpoint
    schemas = _provided_schemas(cfg, options)
    if schemas is not None:
        avro, schema = schemas
    else:
        avro, schema = None, sample_json_schema(kafka, planned.ranges)
    out = _with_bad_columns(schema)
    keys = tuple(f for f in cfg.key_fields if f in schema.names)

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            ranges = [OffsetRange(*r) for r in zip(*(batch.column(c).to_pylist() for c in RANGE_COLUMNS))]
            for decoded in read_ranges(kafka, ranges, schema, avro, keys):
                yield from _good_and_bad(decoded.good, decoded.bad, out)

    nonempty = [(r.partition, r.start, r.until) for r in planned.ranges if r.count]
    ranges = spark.createDataFrame(nonempty, "partition int, start long, until long")
    tasks = max(1, len(nonempty))
    return ranges.repartition(tasks).mapInArrow(read, spark_schema(out)), planned.checkpoint


def _incremental_records(spark: SparkSession, cfg: StreamerConfig, checkpoint: str | None) -> tuple[DataFrame, str] | None:
    """The records of the followed table's next commits (up to ``num_instants``) and the last one's time."""
    options = _storage_options(cfg)
    source = _timeline(cfg.source_root, options)
    begin = checkpoint or START_OF_TIMELINE
    end = end_offset(source, StreamReadConfig(), begin, max_instants=cfg.incr_num_instants) if source else begin
    if end == begin:
        return None
    frame = (spark.read.format("hoodie").options(**options).option("hoodie.datasource.query.type", "incremental")
             .option("hoodie.datasource.read.begin.instanttime", begin)
             .option("hoodie.datasource.read.end.instanttime", end).load(cfg.source_root))
    return frame.drop(*[c for c in META_COLUMNS if c in frame.columns]), end


def _check_bad(bad: DataFrame, count: int, cfg: StreamerConfig) -> None:
    if count and cfg.error_table_path is None:
        shown = [f"{r[BAD + 'source']}: {r[BAD + 'reason']}: {r[BAD + 'record'][:200]!r}"
                 for r in bad.limit(SHOWN_BAD_RECORDS).collect()]
        raise InvalidRecordError(
            f"{count} bad source record(s), e.g. {'; '.join(shown)}. Nothing was written; fix the source, or set "
            "hoodie.errortable.enable=true and hoodie.errortable.base.path to write bad records to an error table")


def _write_errors(bad: DataFrame, cfg: StreamerConfig, instant: str) -> None:
    """Bad records into the error table (a hoodie table keyed by a fresh uuid), naming the round's commit."""
    errors = bad.select(
        F.expr("uuid()").alias("uuid"), F.lit(int(time.time() * 1000)).alias("ts"),
        F.col(BAD + "source").alias("source"), F.col(BAD + "record").alias("record"),
        F.col(BAD + "reason").alias("reason"), F.lit(instant).alias("target_instant"))
    write_dataframe(errors, cfg.error_table_path, {
        **_storage_options(cfg), "hoodie.table.name": cfg.error_table_name,
        "hoodie.datasource.write.recordkey.field": "uuid", "hoodie.datasource.write.partitionpath.field": "",
        "hoodie.datasource.write.operation": "insert"})


def run_round(spark: SparkSession, cfg: StreamerConfig, carried: str | None = None) -> Round:
    """One round; ``carried`` is where the previous round of this run left a table that has no checkpoint
    (a Kafka source starting at the topic's end): the records arriving since are read, not skipped."""
    started = time.monotonic()
    resume = resume_point(_timeline(cfg.target_path, _storage_options(cfg)), cfg.checkpoint)
    source = {"hoodie": _incremental_records, "kafka-json": _kafka_records, "kafka-avro": _kafka_records}
    start = resume.checkpoint if resume.checkpoint is not None else carried
    read = source.get(cfg.source, _dfs_records)(spark, cfg, start)
    if read is None or read[0] is None:
        return Round(0, 0, None, time.monotonic() - started, read[1] if read else carried)
    frame, checkpoint = read
    frame = frame.persist()
    try:
        has_bad = BAD + "reason" in frame.columns
        good = frame.filter(F.col(BAD + "reason").isNull()).drop(*[BAD + f.name for f in BAD_RECORD_SCHEMA]) \
            if has_bad else frame
        bad = frame.filter(F.col(BAD + "reason").isNotNull()) if has_bad else None
        try:
            if has_bad:  # both counts in one job: a Spark job is seconds on a busy machine
                counts = frame.agg(F.count_if(F.col(BAD + "reason").isNull()), F.count(F.lit(1))).first()
                rows, bad_count = counts[0], counts[1] - counts[0]
            else:
                rows, bad_count = good.count(), 0
        except Exception as exc:  # a HoodieError a task raised reading the source, raised as itself
            raised_in_task = task_error(exc)
            if raised_in_task is not None:
                raise raised_in_task from exc
            raise
        _check_bad(bad, bad_count, cfg)
        if cfg.transformer_sql:
            view = f"{SOURCE_VIEW}_{uuid.uuid4().hex[:8]}"
            good.createOrReplaceTempView(view)
            good = good.sparkSession.sql(cfg.transformer_sql.replace("<SRC>", view))
        instant = write_dataframe(good, cfg.target_path, cfg.write_options, commit_metadata(checkpoint, resume.reset))
        if bad_count:
            _write_errors(bad, cfg, instant)
        if cfg.kafka is not None and cfg.kafka.commit_offsets:
            commit_to_group(cfg.kafka, checkpoint)
    finally:
        frame.unpersist()
    return Round(rows, bad_count, instant, time.monotonic() - started)


def run(spark: SparkSession, cfg: StreamerConfig) -> Summary:
    """One round, or rounds until stopped (``--continuous``), each at least ``min_sync_interval_s`` apart."""
    register(spark)
    started = time.monotonic()
    rounds, rows, bad, commits, idle, carried = 0, 0, 0, 0, 0, None
    while True:
        result = run_round(spark, cfg, carried)
        carried = result.checkpoint
        rounds += 1
        rows, bad = rows + result.rows, bad + result.bad
        commits += result.instant is not None
        idle = 0 if result.instant is not None else idle + 1
        if result.instant is None:
            logger.info("Round %d: no new data (%.1f s)", rounds, result.seconds)
        else:
            logger.info("Round %d: %d rows in, %d bad, commit %s, %.1f s", rounds, result.rows, result.bad,
                        result.instant, result.seconds)
        if not cfg.continuous or (cfg.idle_rounds_to_stop is not None and idle >= cfg.idle_rounds_to_stop):
            break
        time.sleep(max(0.0, cfg.min_sync_interval_s - result.seconds))
    summary = Summary(rounds, rows, bad, commits, time.monotonic() - started)
    logger.info("Done: %d rounds, %d commits, %d rows in, %d bad records, %.1f s", summary.rounds, summary.commits,
                summary.rows, summary.bad, summary.seconds)
    return summary
