"""Bulk insert: one task's records written straight into new file groups, as they arrive.

Apache Hudi's row-writer bulk insert (``BulkInsertDataInternalWriterHelper``): no index lookup and no
workload profile. A task opens a file group for each table partition it meets, named
``<uuid of the task>-<n>`` (``getNextFileId``), rolls over to a new one when the file reaches
``hoodie.parquet.max.file.size`` (``HoodieRowCreateHandle.canWrite``), and, when its input is sorted by
partition (``GLOBAL_SORT``, ``PARTITION_SORT``), closes a partition's file when the next partition
starts, so one file is open at a time.

Memory stays bounded per task: a partition's rows wait in a buffer until they fill a row group
(``ROW_GROUP_BYTES`` of Arrow data), are then given their meta columns, added to the file's bloom
filter and encoded into the file's in-memory parquet (``BaseFileEncoder``). When the buffers and
encoded files of a task together pass ``TASK_MEMORY_BYTES``, the largest buffer is encoded early
(smaller row groups), and when encoded files hold most of it, the largest file is closed (an input
spread over many partitions then makes smaller files, never more memory). A file is stored whole, in
one write, when it closes: its marker first, then the file.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource import fault_points
from hoodie_datasource.config.write_config import WriteConfig
from hoodie_datasource.index.bloom_filter import BloomFilter
from hoodie_datasource.storage.storage import join
from hoodie_datasource.table.file_names import base_file_name
from hoodie_datasource.table.markers import create_marker
from hoodie_datasource.table.meta_columns import (
    IS_DELETE_COLUMN,
    PARTITION_PATH_COLUMN,
    RECORD_KEY_COLUMN,
    conform,
    meta_schema,
    with_meta_columns,
)
from hoodie_datasource.timeline.commit_metadata import WriteStat
from hoodie_datasource.write import record_keys
from hoodie_datasource.write.base_file_writer import (
    REPEATING_META_COLUMNS,
    BaseFileEncoder,
    empty_filter_for,
    footer_entries,
    with_dictionaries,
)
from hoodie_datasource.write.index_entries import base_file_entries, record_key_changes
from hoodie_datasource.write.stage_timer import StageTimer
from hoodie_datasource.write.targets import WriteContext

logger = logging.getLogger(__name__)

MB = 1024 * 1024
ROW_GROUP_BYTES = 64 * MB
INPUT_ROWS = 131_072  # rows a task keys and splits by partition at once
TASK_MEMORY_BYTES = 256 * MB
# Bloom filter bits are computed on this thread while the task's own thread encodes parquet (both
# release the GIL): a task then keeps two cores busy. One thread: a file's keys are added in order, as
# DYNAMIC_V0's row assignment needs.
_BLOOM = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hoodie-bloom")
# the stages a bulk insert task times (``StageTimer``)
STAGES = ("input", "keys", "route", "meta", "bloom", "encode", "upload")


@dataclass
class _OpenFile:
    partition: str
    file_id: str
    file_name: str
    bloom: BloomFilter | None  # None: files carry no bloom filter
    started: float
    encoder: BaseFileEncoder | None = None
    rows: int = 0
    min_key: str | None = None
    max_key: str | None = None
    pending: list[pa.Table] = field(default_factory=list)
    pending_bytes: int = 0
    keyed: Future | None = None  # the last bloom filter update (min and max keys with it)
    keys: list[pa.Array] = field(default_factory=list)  # every key, while the record index is kept

    def add_keys(self, keys: pa.Array) -> None:
        """Add ``keys`` to the bloom filter and the key range (``_add_keys``), on the bloom thread."""
        self.keyed = _BLOOM.submit(self._add_keys, keys)

    def _add_keys(self, keys: pa.Array) -> None:
        if self.bloom is not None:
            self.bloom.add_keys(keys)
        bounds = pc.min_max(keys)
        low, high = bounds["min"].as_py(), bounds["max"].as_py()
        self.min_key = low if self.min_key is None else min(self.min_key, low)
        self.max_key = high if self.max_key is None else max(self.max_key, high)

    @property
    def encoded(self) -> int:
        return self.encoder.size if self.encoder is not None else 0


class BulkInsertWriter:
    """The files of one task of a bulk insert: ``write`` keyed records (``record_keys.keyed``), batch by
    batch, then ``close`` for the write stats of every file written."""

    def __init__(self, ctx: WriteContext, max_file_size: int, record_size: int, token: str, task_partition: int,
                 sorted_input: bool, timer: StageTimer):
        self._ctx = ctx
        self._max_file_size = max_file_size
        self._bytes_per_row = float(record_size)  # learned from each file the task closes
        self._token = token
        self._task_partition = task_partition
        self._sorted_input = sorted_input
        self._timer = timer
        self._prefix = str(uuid.uuid4())  # Hudi: one random prefix per task, then -0, -1, ...
        self._files_opened = 0
        self._open: dict[str, _OpenFile] = {}
        self._schema, self._encoded_schema = _file_schemas(ctx)
        self._stats: list[WriteStat] = []

    def write(self, records: pa.Table) -> None:
        """Take ``records`` (data columns, record key, partition path, delete flag); rows flagged as
        deletes (``_hoodie_is_deleted``) are not inserted."""
        if IS_DELETE_COLUMN in records.column_names:
            deletes = records.column(IS_DELETE_COLUMN)
            if pc.any(deletes).as_py():
                records = records.filter(pc.invert(deletes))
        row_bytes = records.nbytes / max(records.num_rows, 1)
        for partition, rows in _by_partition(records):
            if partition not in self._open and self._sorted_input:
                self._close_all()
            target = self._open.get(partition) or self._new_file(partition)
            target.pending.append(rows)
            target.pending_bytes += int(rows.num_rows * row_bytes)
            self._timer.lap("route")
            if target.pending_bytes >= ROW_GROUP_BYTES:
                self._flush(target)
        self._bound_memory()

    def close(self) -> list[WriteStat]:
        """Store every open file; the write stats of all files this task wrote."""
        self._close_all()
        return self._stats

    def _bound_memory(self) -> None:
        """Over ``TASK_MEMORY_BYTES``: encode the largest buffer while buffers hold a quarter of it (encoding
        compresses them), else close the largest file."""
        while True:
            pending = sum(f.pending_bytes for f in self._open.values())
            if pending + sum(f.encoded for f in self._open.values()) <= TASK_MEMORY_BYTES:
                return
            if pending * 4 >= TASK_MEMORY_BYTES:
                self._flush(max(self._open.values(), key=lambda f: f.pending_bytes))
            else:
                self._close(max(self._open.values(), key=lambda f: f.encoded + f.pending_bytes))

    def _new_file(self, partition: str) -> _OpenFile:
        file_id = f"{self._prefix}-{self._files_opened}"
        self._files_opened += 1
        opened = _OpenFile(partition, file_id, base_file_name(file_id, self._token, self._ctx.instant),
                           empty_filter_for(self._ctx.index), time.monotonic())
        self._open[partition] = opened
        return opened

    def _room(self, target: _OpenFile) -> int:
        """Rows that still fit in ``target`` at the bytes per row measured so far."""
        per_row = target.encoded / target.rows if target.rows else self._bytes_per_row
        return int((self._max_file_size - target.encoded) / max(per_row, 1.0))

    def _flush(self, target: _OpenFile, closing: bool = False) -> None:
        """Encode ``target``'s buffered rows, rolling over to new file groups of the partition as they fill
        (``closing``: they are the last rows of the partition's file)."""
        # one chunk per column: later steps (sampling, keys) would each combine chunks again
        rows = pa.concat_tables(target.pending).combine_chunks()
        target.pending, target.pending_bytes = [], 0
        while rows.num_rows:
            if target.rows and self._room(target) <= 0:
                self._close(target)
                target = self._new_file(target.partition)
            take = min(rows.num_rows, max(1, self._room(target)))
            self._encode(target, rows.slice(0, take), whole_file=closing and take == rows.num_rows)
            rows = rows.slice(take)

    def _encode(self, target: _OpenFile, rows: pa.Table, whole_file: bool = False) -> None:
        """Encode ``rows`` into ``target``'s file (``whole_file``: the rows are its last, so with none before
        them they are all it holds, and its float columns without NaN get statistics: ``BaseFileEncoder``)."""
        ctx, timer = self._ctx, self._timer
        keys = rows.column(RECORD_KEY_COLUMN).combine_chunks()
        table = _with_meta(ctx, rows, keys, target.partition, self._task_partition, target.file_name, target.rows)
        timer.lap("meta")
        target.add_keys(keys)
        if ctx.tracks_record_keys:
            target.keys.append(keys)
        if target.encoder is None:
            target.encoder = BaseFileEncoder(self._encoded_schema, table, ctx.compression, ctx.record_key_fields,
                                             stored_schema=self._schema, complete=whole_file)
        target.encoder.write(table)
        target.rows += rows.num_rows
        timer.lap("encode")

    def _close_all(self) -> None:
        for target in list(self._open.values()):
            self._close(target)

    def _close(self, target: _OpenFile) -> None:
        if target.pending:  # may roll over: the partition's open file is then a newer one
            self._flush(target, closing=True)
            target = self._open[target.partition]
        del self._open[target.partition]
        if not target.rows:
            return
        ctx = self._ctx
        target.keyed.result()  # the bloom filter and key range hold every key of the file
        self._timer.lap("bloom")
        relative = join(target.partition, target.file_name)
        create_marker(ctx.storage, ctx.instant, target.partition, target.file_name, "CREATE")
        footer = footer_entries(target.bloom, target.min_key, target.max_key)
        written = target.encoder.finish(ctx.storage, relative, footer, ctx.column_stats_columns is not None)
        size = written.size
        fault_points.reach(fault_points.AFTER_DATA_FILE_WRITTEN, storage=ctx.storage, path=relative)
        self._bytes_per_row = size / target.rows
        logger.debug("Bulk insert stored %s: %d rows, %d bytes", relative, target.rows, size)
        self._stats.append(WriteStat(
            fileId=target.file_id,
            path=relative,
            partitionPath=target.partition,
            numWrites=target.rows,
            numInserts=target.rows,
            totalWriteBytes=size,
            fileSizeInBytes=size,
            runtimeStats={"totalScanTime": 0, "totalUpsertTime": 0,
                          "totalCreateTime": int((time.monotonic() - target.started) * 1000)},
            record_keys=record_key_changes(ctx, pa.chunked_array(target.keys, pa.string())),
            **base_file_entries(written, self._schema, footer, ctx.column_stats_columns, ctx.tracks_bloom_filters),
        ))
        self._timer.lap("upload")


def _file_schemas(ctx: WriteContext) -> tuple[pa.Schema, pa.Schema]:
    """A new file's schema (the table's: meta columns, then data columns), and the one its rows come to the
    encoder in (``_with_meta``: the meta columns of one value per commit or file as dictionaries)."""
    schema = pa.unify_schemas([meta_schema(), ctx.data_schema])
    return schema, with_dictionaries(schema, set(REPEATING_META_COLUMNS))


def _with_meta(ctx: WriteContext, rows: pa.Table, keys: pa.Array, partition: str, task_partition: int,
               file_name: str, first_position: int) -> pa.Table:
    """``rows`` (keyed) as the file ``file_name`` stores them, from its row ``first_position`` on: the
    table's data columns after Hudi's meta columns, those of one value per commit or file as dictionaries
    (a parquet encoder hashed each of their values: 3 ms a column of a 166,000-row file)."""
    positions = np.arange(first_position, first_position + rows.num_rows, dtype=np.int64)
    return with_meta_columns(conform(rows, ctx.data_schema), keys, partition, ctx.instant, task_partition,
                             file_name, positions, dictionaries=True)


SAMPLE_ROWS = 20_000  # rows encoded to learn the bytes a record takes in a file


def encoded_record_size(ctx: WriteContext, records: pa.Table, max_file_size: int) -> float:
    """Bytes a record of ``records`` (keyed rows, a sample of a write) takes in a base file of the table of
    at most ``max_file_size`` bytes, its meta columns included: the sample encoded in memory, in slices
    of a file's rows when a file holds fewer rows than the sample (a small file compresses worse), the
    sample shuffled first, as a file gets rows by their key's hash, not in the input's order (which may
    be the keys'). The file's footer (its bloom filter) is left out, as the writer leaves it out when it
    rolls files by size."""
    size = _encoded_size(ctx, records) / max(1, records.num_rows)
    per_file = int(max_file_size / size)
    if 0 < per_file < records.num_rows // 2:
        records = records.take(np.random.default_rng(0).permutation(records.num_rows))
        whole = records.num_rows // per_file * per_file
        size = sum(_encoded_size(ctx, records.slice(i, per_file)) for i in range(0, whole, per_file)) / whole
    return max(1.0, size)


def footer_size(ctx: WriteContext) -> int:
    """Bytes of a new file's footer entries before its keys are added (its empty bloom filter)."""
    return sum(len(v) for v in footer_entries(empty_filter_for(ctx.index), "", "").values())


def _encoded_size(ctx: WriteContext, records: pa.Table) -> int:
    if records.num_rows == 0:
        return 0
    keys = records.column(RECORD_KEY_COLUMN).combine_chunks()
    partition = records.column(PARTITION_PATH_COLUMN)[0].as_py()
    table = _with_meta(ctx, records, keys, partition, 0, base_file_name("sample", "0-0-0", ctx.instant), 0)
    schema, encoded_schema = _file_schemas(ctx)
    encoder = BaseFileEncoder(encoded_schema, table, ctx.compression, ctx.record_key_fields, stored_schema=schema,
                              complete=True)
    encoder.write(table)
    return encoder.size


def _by_partition(records: pa.Table) -> list[tuple[str, pa.Table]]:
    """``records`` split by partition path, each partition's rows in their order."""
    if records.num_rows == 0:
        return []
    paths = records.column(PARTITION_PATH_COLUMN).combine_chunks()
    encoded = pc.dictionary_encode(paths)
    names = encoded.dictionary.to_pylist()
    if len(names) == 1:
        return [(names[0], records)]
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(names) + 1))
    grouped = records.take(pa.array(order))
    return [(name, grouped.slice(bounds[i], bounds[i + 1] - bounds[i])) for i, name in enumerate(names)]


def _gathered(batches: Iterable[pa.Table], rows: int) -> Iterator[pa.Table]:
    """``batches`` joined (without copying) into tables of at least ``rows`` rows, the last one smaller: keying
    and splitting by partition cost per call, and Spark hands a task batches of 10,000 rows
    (``spark.sql.execution.arrow.maxRecordsPerBatch``)."""
    gathered: list[pa.Table] = []
    count = 0
    for batch in batches:
        gathered.append(batch)
        count += batch.num_rows
        if count >= rows:
            yield pa.concat_tables(gathered)
            gathered, count = [], 0
    if gathered:
        yield pa.concat_tables(gathered)


def write_bulk_insert_task(ctx: WriteContext, config: WriteConfig, record_size: int, batches: Iterable[pa.Table],
                           token: str, task_partition: int, timer: StageTimer, keyed: bool = False,
                           sorted_by_partition: bool = False) -> list[WriteStat]:
    """Write one task's ``batches`` (the input rows, or already ``keyed`` ones) into new file groups;
    their write stats. ``sorted_by_partition``: the batches hold each partition's rows together, so a
    partition's file closes when the next partition starts."""
    writer = BulkInsertWriter(ctx, config.sizing.max_file_size, record_size, token, task_partition,
                              sorted_by_partition, timer)
    for batch in _gathered(batches, INPUT_ROWS):
        timer.lap("input")  # waiting for the batch (in Spark: the JVM's rows turned into Arrow, sent over)
        records = batch if keyed else record_keys.keyed(batch, config)
        timer.lap("keys")
        writer.write(records)
    return writer.close()
