"""Merge-on-read: updates and deletes of a file group appended as log blocks.

Each write adds one new log file version to the file group's latest slice (layout 1 names it
after the slice's base instant): a data block with the updated records (PARQUET_DATA by default,
AVRO_DATA on request) and a DELETE block with deleted keys. Readers merge it with the base file.
The version is written whole and only if absent (object stores cannot append), as Hudi does where
``HoodieStorage`` lacks append support (``HoodieLogFormatWriter`` rolls over to a new version). A name already
taken rolls over to the next version too: the write takes the slice's versions from its file-system view, which,
built from the metadata table, holds committed log files only, not those of a write still pending.
A task encodes the log files of its file groups one by one (``encode_log_file``), then creates them
together (``write_log_files``: their markers first, then the files, each set in flight at once), so
it waits for the storage's latency (an fsync, a request) about once, not once per file group.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import posixpath
import time
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource import fault_points
from hoodie_datasource.errors import CommitConflictError
from hoodie_datasource.log.data_block import encode_avro_data_block, encode_parquet_data_block
from hoodie_datasource.log.delete_block import encode_delete_block
from hoodie_datasource.log.log_format import encode_log_file_content
from hoodie_datasource.schema.avro_schema import arrow_to_avro_schema, to_avro_json, with_meta_fields
from hoodie_datasource.storage.storage import Storage, join
from hoodie_datasource.table.file_names import LogFileName
from hoodie_datasource.table.markers import create_markers, marker_path
from hoodie_datasource.table.meta_columns import (
    IS_DELETE_COLUMN,
    IS_DELETED_COLUMN,
    PARTITION_PATH_COLUMN,
    RECORD_KEY_COLUMN,
    conform,
    with_meta_columns,
)
from hoodie_datasource.timeline.commit_metadata import WriteStat
from hoodie_datasource.write.index_entries import log_file_column_stats, record_key_changes
from hoodie_datasource.write.records import dedupe
from hoodie_datasource.write.targets import WriteContext, WriteTarget


def next_log_version(storage: Storage, partition: str, file_id: str, base_instant: str) -> int:
    """One more than the highest log version of the slice in ``partition`` (one listing)."""
    versions = [0]
    prefix = f".{file_id}_{base_instant}.log."
    for name in storage.list_names(partition):
        if name.startswith(prefix):
            parsed = LogFileName.parse(name)
            if parsed is not None:
                versions.append(parsed.version)
    return max(versions) + 1


logger = logging.getLogger(__name__)

ROLLOVERS = 100  # versions a log file tries past the one planned before the write gives up


@functools.lru_cache(maxsize=16)
def log_schema_text(table_name: str, data_schema: pa.Schema) -> str:
    """The SCHEMA header of the log blocks of a table's write: its writer schema (meta fields first) as
    JSON text, derived once per process and schema (every file group of a task shares it)."""
    avro = arrow_to_avro_schema(data_schema, f"{table_name}_record", f"hoodie.{table_name}")
    return to_avro_json(with_meta_fields(avro))


@dataclass(frozen=True)
class PendingLog:
    """A log file version encoded whole, not yet created: its path, content and write stat."""

    partition: str
    name: str
    content: bytes
    stat: WriteStat

    @property
    def path(self) -> str:
        return join(self.partition, self.name)

    def next_version(self) -> PendingLog:
        """The same content as the next version of the file group's slice (the content does not name it)."""
        parsed = LogFileName.parse(self.name)
        name = dataclasses.replace(parsed, version=parsed.version + 1).name()
        stat = dataclasses.replace(self.stat, path=join(self.partition, name), logVersion=parsed.version + 1,
                                   logFiles=[*self.stat.logFiles[:-1], name])
        return PendingLog(self.partition, name, self.content, stat)


def append_to_file_group(
    ctx: WriteContext, target: WriteTarget, records: pa.Table, token: str, task_partition: int
) -> WriteStat | None:
    log = encode_log_file(ctx, target, records, token, task_partition)
    return None if log is None else write_log_files(ctx, [log])[0]


def write_log_files(ctx: WriteContext, logs: Sequence[PendingLog]) -> list[WriteStat]:
    """Create the log files, their markers first, each set at once (``write_all``, ``create_all_once``);
    their write stats."""
    create_markers(ctx.storage, ctx.instant, [(log.partition, log.name, "APPEND") for log in logs])
    try:
        ctx.storage.create_all_once([(log.path, log.content) for log in logs])
        created = list(logs)
    except CommitConflictError:  # some names are taken: those roll over
        created = [log if _holds(ctx, log) else _rolled_over(ctx, log) for log in logs]
    for log in created:
        fault_points.reach(fault_points.AFTER_DATA_FILE_WRITTEN, storage=ctx.storage, path=log.path)
    return [log.stat for log in created]


def _holds(ctx: WriteContext, log: PendingLog) -> bool:
    """Whether ``log``'s path holds its content (created by this write, not another's file of the same name)."""
    try:
        return ctx.storage.read(log.path) == log.content
    except FileNotFoundError:
        return False


def _rolled_over(ctx: WriteContext, log: PendingLog) -> PendingLog:
    """``log`` created, or, where its name is taken, the first free version after it; the log as created. The
    marker of a taken name is deleted before the next is made: a rollback of this write deletes its marked files,
    and the file of that name is another write's."""
    for _ in range(ROLLOVERS):
        try:
            ctx.storage.create_once(log.path, log.content)
            return log
        except CommitConflictError:
            ctx.storage.delete(marker_path(ctx.instant, log.partition, log.name, "APPEND"))
            taken, log = log.name, log.next_version()
            logger.info("Log file %s exists (a pending write's); rolling over to %s", taken, log.name)
            create_markers(ctx.storage, ctx.instant, [(log.partition, log.name, "APPEND")])
    ctx.storage.delete(marker_path(ctx.instant, log.partition, log.name, "APPEND"))
    raise CommitConflictError(f"Log files of {ctx.storage.uri_of(log.path)} up to version "
                              f"{LogFileName.parse(log.name).version} all exist; nothing more was written")


def encode_log_file(
    ctx: WriteContext, target: WriteTarget, records: pa.Table, token: str, task_partition: int
) -> PendingLog | None:
    """The file group's new log file version with ``records``' upserts and deletes (None when there is
    nothing to log), encoded but not written."""
    started = time.monotonic()
    if ctx.dedupe:
        records = dedupe(records, ctx.precombine_field)
    is_delete = records.column(IS_DELETE_COLUMN)
    upserts = records.filter(pc.invert(is_delete))
    deletes = records.filter(is_delete)
    if upserts.num_rows == 0 and deletes.num_rows == 0:
        return None
    assert target.base_instant is not None
    avro_schema = log_schema_text(ctx.table_name, ctx.data_schema)
    blocks = []
    column_stats = None
    if upserts.num_rows:
        data = with_meta_columns(conform(upserts, ctx.data_schema), upserts.column(RECORD_KEY_COLUMN),
                                 target.partition, ctx.instant, task_partition, target.file_id)
        column_stats = log_file_column_stats(ctx, data)
        if ctx.log_block_format == "avro":
            blocks.append(encode_avro_data_block(data, ctx.instant, avro_schema))
        else:  # in the base files' codec, as Hudi's HoodieAppendHandle writes a HoodieParquetDataBlock
            blocks.append(encode_parquet_data_block(data, ctx.instant, avro_schema, ctx.compression))
    if deletes.num_rows:
        blocks.append(encode_delete_block(deletes.column(RECORD_KEY_COLUMN).combine_chunks(),
                                          deletes.column(PARTITION_PATH_COLUMN).combine_chunks(), ctx.instant,
                                          _delete_orderings(ctx, deletes), avro_schema=avro_schema))
    version = target.log_version or next_log_version(ctx.storage, target.partition, target.file_id,
                                                     target.base_instant)
    log_name = LogFileName(target.file_id, target.base_instant, version, token).name()
    content = encode_log_file_content(blocks)
    stat = WriteStat(
        fileId=target.file_id,
        path=join(target.partition, log_name),
        partitionPath=target.partition,
        prevCommit=target.base_instant,
        numWrites=upserts.num_rows,
        numDeletes=deletes.num_rows,
        numUpdateWrites=upserts.num_rows,
        totalWriteBytes=len(content),
        fileSizeInBytes=len(content),
        totalLogRecords=upserts.num_rows + deletes.num_rows,
        totalLogBlocks=len(blocks),
        runtimeStats={"totalScanTime": 0, "totalUpsertTime": int((time.monotonic() - started) * 1000),
                      "totalCreateTime": 0},
        record_keys=record_key_changes(ctx, None, deletes.column(RECORD_KEY_COLUMN)),
        column_stats=column_stats,
        logVersion=version,
        logOffset=0,
        baseFile=posixpath.basename(target.base_file) if target.base_file else "",  # "": a slice of logs only
        # HoodieAppendHandle: the slice's log files and the new one (Hudi's CDC extractor takes the slice a
        # log file was written on from them: HoodieCommitMetadata.getFileSliceForFileGroupFromDeltaCommit)
        logFiles=[*target.log_files, log_name],
    )
    return PendingLog(target.partition, log_name, content, stat)


def _delete_orderings(ctx: WriteContext, deletes: pa.Table) -> pa.Array | None:
    """The ordering values a DELETE block records: a soft delete's own (``_hoodie_is_deleted``), which Hudi's
    ``HoodieAppendHandle`` takes from the record, and null for the others (written as the default 0, what a
    hard delete's ``EmptyHoodieRecordPayload`` carries): the log scanner weighs a delete by it."""
    if ctx.precombine_field not in deletes.column_names or IS_DELETED_COLUMN not in deletes.column_names:
        return None
    soft = pc.fill_null(deletes.column(IS_DELETED_COLUMN), False)
    values = deletes.column(ctx.precombine_field)
    return pc.if_else(soft, values, pa.nulls(len(values), values.type)).combine_chunks()
