"""Merge-on-read: a file slice's base file merged with its log blocks, by record key.

Only blocks of completed instants (at or before the query's instant) count, and blocks a rollback
command block targets are dropped. Per key, the record with the highest ordering value wins and
ties go to the later write (the base file is oldest, then blocks in log order); a delete removes
the key unless a record was written after it.

The log blocks are decoded first; then the base file streams by in batches, and a base row whose
key no log block names passes through untouched (one vectorized membership test per batch), as
Apache Hudi's ``HoodieMergedLogRecordScanner`` + base-file iterator pass a base record absent from
the log's record map. Only the base rows of the keys the logs name join the log records in the
sort-based merge. No Python work per record. ``log_changes`` decides the same merge from the base
file's key and ordering columns alone, for readers that read the base file themselves (the jvm-shim
hands it to Spark's parquet scan).

Memory: the slice's decoded log records (their columns the read needs), one batch of the base file
(``base_reader.BATCH_ROWS`` rows) and the base rows whose keys the logs name, at a time; for
``log_changes`` the same with the base file's key and ordering columns only, plus the positions of the
base rows the logs name (none of that when it is handed the decision already made: the log records only).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.log.data_block import decode_data_block
from hoodie_datasource.log.delete_block import decode_delete_block
from hoodie_datasource.log.log_format import BlockType, LogBlock, read_log_blocks
from hoodie_datasource.read.base_reader import read_base_file
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.meta_columns import RECORD_KEY_COLUMN, conform

logger = logging.getLogger(__name__)

SEQ = "__hoodie_seq"


@dataclass(frozen=True)
class LogRecords:
    """A slice's visible log blocks, decoded: the data records with the sequence number of their block
    (1 for the first block that counts, in log order; the base file is 0) and the deleted keys with theirs."""

    data: pa.Table
    seq: np.ndarray
    delete_keys: pa.Array
    delete_seqs: np.ndarray

    @property
    def keys(self) -> pa.Array:
        """Every record key a log block names (data or delete)."""
        data_keys = self.data.column(RECORD_KEY_COLUMN).combine_chunks()
        return pa.concat_arrays([data_keys, self.delete_keys.cast(data_keys.type)])


def _visible_blocks(storage: Storage, file_slice: FileSlice, visible_instants: Collection[str]) -> list[LogBlock]:
    """The slice's blocks of visible instants that no (visible) rollback command block targets, in log order."""
    blocks: list[LogBlock] = []
    rolled_back: set[str] = set()
    for log in file_slice.log_files:
        for block in read_log_blocks(storage, file_slice.relative_path(log.name)):
            if block.instant_time not in visible_instants:
                continue
            if block.block_type == BlockType.COMMAND:
                rolled_back.add(block.target_instant_time)
            else:
                blocks.append(block)
    return [b for b in blocks if b.instant_time not in rolled_back]


def read_log_records(storage: Storage, file_slice: FileSlice, schema: pa.Schema,
                     visible_instants: Collection[str]) -> LogRecords:
    """The slice's visible log records in ``schema``."""
    parts: list[pa.Table] = []
    seqs: list[np.ndarray] = []
    delete_keys: list[pa.Array] = [pa.array([], pa.string())]
    delete_seqs: list[np.ndarray] = [np.zeros(0, np.int64)]
    for seq, block in enumerate(_visible_blocks(storage, file_slice, visible_instants), start=1):
        if block.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA):
            part = conform(decode_data_block(block, set(schema.names)), schema)
            parts.append(part)
            seqs.append(np.full(part.num_rows, seq, np.int64))
        elif block.block_type == BlockType.DELETE:
            deleted = decode_delete_block(block).column(RECORD_KEY_COLUMN).combine_chunks().cast(pa.string())
            delete_keys.append(deleted)
            delete_seqs.append(np.full(len(deleted), seq, np.int64))
        else:
            logger.warning("Skipping unsupported %s block in %s", block.block_type.name, file_slice.file_id)
    data = pa.concat_tables(parts) if parts else schema.empty_table()
    return LogRecords(data, np.concatenate(seqs) if seqs else np.zeros(0, np.int64),
                      pa.concat_arrays(delete_keys), np.concatenate(delete_seqs))


def _base_batches(storage: Storage, file_slice: FileSlice, schema: pa.Schema) -> Iterator[pa.Table]:
    if file_slice.base_relative_path is not None:
        for batch in read_base_file(storage, file_slice.base_relative_path, schema):
            yield pa.Table.from_batches([batch])


def merge_schema(schema: pa.Schema, columns: Collection[str] | None, ordering_field: str | None) -> pa.Schema:
    """The columns a merge reads: ``columns`` (all of ``schema`` when None) plus the record key and ordering field."""
    if columns is None:
        return schema
    wanted = set(columns) | {RECORD_KEY_COLUMN, ordering_field}
    return pa.schema([f for f in schema if f.name in wanted])


def iter_merged_slice(
    storage: Storage,
    file_slice: FileSlice,
    schema: pa.Schema,
    visible_instants: Collection[str],
    ordering_field: str | None,
) -> Iterator[pa.Table]:
    """The merged rows of ``file_slice`` in ``schema`` (which must hold the record key and, to order by
    it, the ordering field): the untouched base rows batch by batch, then the merged rows of the keys the
    logs name."""
    logs = read_log_records(storage, file_slice, schema, visible_instants)
    if logs.data.num_rows == 0 and len(logs.delete_keys) == 0:
        yield from _base_batches(storage, file_slice, schema)
        return
    log_keys = logs.keys
    touched: list[pa.Table] = []
    for batch in _base_batches(storage, file_slice, schema):
        named = pc.is_in(batch.column(RECORD_KEY_COLUMN), value_set=log_keys)
        touched.append(batch.filter(named))
        untouched = batch.filter(pc.invert(named))
        if untouched.num_rows:
            yield untouched
    base = pa.concat_tables(touched) if touched else schema.empty_table()
    data = pa.concat_tables([base, logs.data])
    seq = np.concatenate([np.zeros(base.num_rows, np.int64), logs.seq])
    winners = _winners(data, seq, logs.delete_keys, logs.delete_seqs, ordering_field)
    if len(winners):
        yield data.take(pa.array(winners))


@dataclass(frozen=True)
class LogDecision:
    """Which records a slice's merge keeps, as positions: ``replaced``, in the base file (0-based, in file
    order: Spark's ``_metadata.row_index``), the base rows that lose (to a log record or a delete);
    ``winners``, among the slice's visible log data records (``read_log_records``, in log order), the ones
    that win. It depends on the record key and ordering columns only, never on the other columns a read asks
    for (``log_changes_cache`` keeps it for the other read of the same query)."""

    replaced: np.ndarray
    winners: np.ndarray


@dataclass(frozen=True)
class LogChanges:
    """What a slice's log blocks change in its base file: the rows they make (the log records that win,
    in the schema asked for) and the ``decision`` naming them and the base rows that lose. The slice
    reads as its base file less the ``replaced`` rows, plus ``rows``."""

    rows: pa.Table
    decision: LogDecision

    @property
    def replaced(self) -> np.ndarray:
        return self.decision.replaced


def log_changes(
    storage: Storage,
    file_slice: FileSlice,
    schema: pa.Schema,
    visible_instants: Collection[str],
    ordering_field: str | None,
    decision: LogDecision | None = None,
) -> LogChanges:
    """The slice's log changes, deciding every key the logs name from the log records and the base file's
    record key and ordering columns only (the base file's other columns are never decoded); with the
    ``decision`` made earlier for the same slice, visible instants and ordering field, only the log blocks
    are decoded (the rows it names are taken)."""
    logs = read_log_records(storage, file_slice, schema, visible_instants)
    if decision is not None:
        return LogChanges(logs.data.take(pa.array(decision.winners, pa.int64())), decision)
    if logs.data.num_rows == 0 and len(logs.delete_keys) == 0:
        return LogChanges(logs.data, LogDecision(np.zeros(0, np.int64), np.zeros(0, np.int64)))
    decisive = merge_schema(schema, (), ordering_field)
    log_keys = logs.keys
    touched: list[pa.Table] = []
    positions: list[np.ndarray] = [np.zeros(0, np.int64)]
    offset = 0
    for batch in _base_batches(storage, file_slice, decisive):
        named = pc.is_in(batch.column(RECORD_KEY_COLUMN), value_set=log_keys)
        positions.append(offset + np.flatnonzero(named.to_numpy(zero_copy_only=False)))
        touched.append(batch.filter(named))
        offset += batch.num_rows
    base = pa.concat_tables(touched) if touched else decisive.empty_table()
    data = pa.concat_tables([base, logs.data.select(decisive.names)])
    seq = np.concatenate([np.zeros(base.num_rows, np.int64), logs.seq])
    winners = _winners(data, seq, logs.delete_keys, logs.delete_seqs, ordering_field)
    kept = np.zeros(base.num_rows, dtype=bool)
    kept[winners[winners < base.num_rows]] = True
    log_winners = (winners[winners >= base.num_rows] - base.num_rows).astype(np.int64)
    replaced = np.concatenate(positions)[~kept].astype(np.int64)
    return LogChanges(logs.data.take(pa.array(log_winners)), LogDecision(replaced, log_winners))


def deleted_base_keys(
    storage: Storage,
    file_slice: FileSlice,
    schema: pa.Schema,
    visible_instants: Collection[str],
    ordering_field: str | None,
) -> pa.Array:
    """The record keys of the slice's base file that its log blocks delete: the merged slice no longer holds
    them, though the base file does until compaction (``schema``: the record key and the ordering field are
    all it needs). A base row the logs replace is deleted unless one of the winning log rows has its key."""
    changes = log_changes(storage, file_slice, schema, visible_instants, ordering_field)
    if len(changes.replaced) == 0:
        return pa.array([], pa.string())
    key_schema = pa.schema([schema.field(RECORD_KEY_COLUMN)])
    stored = pa.concat_tables(_base_batches(storage, file_slice, key_schema)).column(RECORD_KEY_COLUMN)
    lost = stored.take(pa.array(changes.replaced)).combine_chunks()
    alive = changes.rows.column(RECORD_KEY_COLUMN).combine_chunks()
    return lost.filter(pc.invert(pc.is_in(lost, value_set=alive)))


def read_merged_slice(
    storage: Storage,
    file_slice: FileSlice,
    schema: pa.Schema,
    visible_instants: Collection[str],
    ordering_field: str | None,
) -> pa.Table:
    """The whole merged slice as one table (compaction, CDC images)."""
    parts = list(iter_merged_slice(storage, file_slice, schema, visible_instants, ordering_field))
    return pa.concat_tables(parts) if parts else schema.empty_table()


def _winners(data: pa.Table, seq: np.ndarray, delete_keys: pa.Array, delete_seqs: np.ndarray,
             ordering_field: str | None) -> np.ndarray:
    """The positions in ``data``, ascending, of each key's winning record (highest ordering value, then
    highest ``seq``), but for keys a delete with a higher ``seq`` came after."""
    keys = data.column(RECORD_KEY_COLUMN)
    sort_table = pa.table({"k": keys, SEQ: seq})
    sort_keys = [("k", "ascending")]
    if ordering_field and ordering_field in data.column_names:
        sort_table = sort_table.append_column("o", data.column(ordering_field))
        sort_keys.append(("o", "descending"))
    sort_keys.append((SEQ, "descending"))
    order = pc.sort_indices(sort_table, sort_keys=sort_keys).to_numpy()
    sorted_keys = pc.take(keys, pa.array(order))
    first = np.ones(len(order), dtype=bool)
    if len(order) > 1:
        first[1:] = ~pc.equal(sorted_keys[1:], sorted_keys[:-1]).to_numpy(zero_copy_only=False)
    winners = order[first]
    if len(delete_keys):
        deletes = pa.table({"k": delete_keys, "d": delete_seqs})
        last_delete = deletes.group_by("k").aggregate([("d", "max")])
        winner_table = pa.table({"k": pc.take(keys, pa.array(winners)).cast(pa.string()), "w": seq[winners],
                                 "i": winners})
        joined = winner_table.join(last_delete, "k", join_type="left outer")
        alive = pc.or_(pc.is_null(joined.column("d_max")),
                       pc.greater(joined.column("w"), joined.column("d_max")))
        winners = joined.filter(pc.fill_null(alive, True)).column("i").to_numpy()
    return np.sort(winners)
