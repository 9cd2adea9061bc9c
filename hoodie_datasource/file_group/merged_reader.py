"""Merge-on-read: a file slice's base file merged with its log blocks, by record key, as Apache Hudi 0.15
merges them.

Only blocks of completed instants (at or before the query's instant) count, and blocks a rollback
command block targets are dropped. The merge has two steps (``MergeRule``): the log records of a key
merge with each other first, in log order, by pre-combining (``HoodieMergedLogRecordScanner``); the
result then combines with the base record, as Hudi's snapshot reader (``HoodieMergeOnReadRDD``) and
compaction (``HoodieMergeHandle``) combine them, and as a copy-on-write upsert combines an incoming
record with the stored one: a slice reads the same before and after compaction, and a late record
lands as on a copy-on-write table (where two log records of a key meet, the greater ordering value
wins even under ``OverwriteWithLatestAvroPayload``: a copy-on-write table, merging each write as it
comes, keeps the later one; so do Hudi's two table types).

The log blocks are decoded first; then the base file streams by in batches, and a base row whose
key no log block names passes through untouched (one vectorized membership test per batch), as
Hudi's base-file iterator passes a base record absent from the log's record map. Only the base rows of
the keys the logs name join the log records in the merge. No Python work per record. ``log_changes``
decides the same merge from the base file's key and ordering columns alone, for readers that read the
base file themselves (the jvm-shim hands it to Spark's parquet scan).

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

from hoodie_datasource.config.table_config import TableConfig, orders_by_event_time
from hoodie_datasource.file_group.base_reader import read_base_file
from hoodie_datasource.log.data_block import decode_data_block
from hoodie_datasource.log.delete_block import comparable_orderings, decode_delete_records
from hoodie_datasource.log.log_format import BlockType, LogBlock, read_log_blocks
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.meta_columns import RECORD_KEY_COLUMN, conform

logger = logging.getLogger(__name__)

@dataclass(frozen=True)
class MergeRule:
    """How the records of one key merge, by ``ordering_field`` (the table's precombine field) and the
    table's payload class.

    Log records with each other (pre-combining, ``HoodieMergedLogRecordScanner.processNextRecord`` with
    ``OverwriteWithLatestAvroPayload.preCombine``, which ``DefaultHoodieRecordPayload`` shares): the greater
    ordering value wins, a tie goes to the later record, and a record after a delete wins whatever its value.
    A delete (``processNextDeletedRecord``) replaces the record before it unless that record's ordering value
    is greater than the delete's own, when the delete carries one (not the default 0).

    The merged log record with the base record (combining, ``combineAndGetUpdateValue``): a delete removes
    it; a record replaces it, but under ``stored_may_win`` (``DefaultHoodieRecordPayload``) a base record
    with a greater ordering value stays as it is (commit time and all)."""

    ordering_field: str | None
    stored_may_win: bool = False

    @classmethod
    def of(cls, table: TableConfig) -> MergeRule:
        return cls(table.precombine_field, orders_by_event_time(table.payload_class))


@dataclass(frozen=True)
class LogRecords:
    """A slice's visible log blocks, decoded: the data records with the sequence number of their block
    (1 for the first block that counts, in log order) and the deleted keys with theirs and with their
    ordering values where Hudi's log scanner weighs them (``comparable_orderings``; None without an
    ordering field)."""

    data: pa.Table
    seq: np.ndarray
    delete_keys: pa.Array
    delete_seqs: np.ndarray
    delete_orderings: pa.Array | None

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
                     visible_instants: Collection[str], ordering_field: str | None = None) -> LogRecords:
    """The slice's visible log records in ``schema``."""
    ordering_type = schema.field(ordering_field).type if ordering_field in schema.names else None
    parts: list[pa.Table] = []
    seqs: list[np.ndarray] = []
    delete_keys: list[pa.Array] = [pa.array([], pa.string())]
    delete_seqs: list[np.ndarray] = [np.zeros(0, np.int64)]
    delete_orderings: list[pa.Array] = [] if ordering_type is None else [pa.array([], ordering_type)]
    for seq, block in enumerate(_visible_blocks(storage, file_slice, visible_instants), start=1):
        if block.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA):
            part = conform(decode_data_block(block, set(schema.names)), schema)
            parts.append(part)
            seqs.append(np.full(part.num_rows, seq, np.int64))
        elif block.block_type == BlockType.DELETE:
            records = decode_delete_records(block)
            delete_keys.append(pa.array([r.record_key for r in records], pa.string()))
            delete_seqs.append(np.full(len(records), seq, np.int64))
            if ordering_type is not None:
                delete_orderings.append(comparable_orderings(records, ordering_type))
        else:
            logger.warning("Skipping unsupported %s block in %s", block.block_type.name, file_slice.file_id)
    data = pa.concat_tables(parts) if parts else schema.empty_table()
    return LogRecords(data, np.concatenate(seqs) if seqs else np.zeros(0, np.int64),
                      pa.concat_arrays(delete_keys), np.concatenate(delete_seqs),
                      pa.concat_arrays(delete_orderings) if delete_orderings else None)


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
    rule: MergeRule,
) -> Iterator[pa.Table]:
    """The merged rows of ``file_slice`` in ``schema`` (which must hold the record key and, to order by
    it, the ordering field): the untouched base rows batch by batch, then the merged rows of the keys the
    logs name."""
    logs = read_log_records(storage, file_slice, schema, visible_instants, rule.ordering_field)
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
    decision = _decide(base, logs, rule)
    alive = decision.base_kept | (decision.base_replacement >= 0)
    from_base = np.where(decision.base_kept, np.arange(base.num_rows), base.num_rows + decision.base_replacement)
    positions = np.concatenate([from_base[alive], base.num_rows + decision.new_rows])
    if len(positions):
        yield pa.concat_tables([base, logs.data]).take(pa.array(positions, pa.int64()))


@dataclass(frozen=True)
class LogDecision:
    """Which records a slice's merge keeps, as positions: ``replaced``, in the base file (0-based, in file
    order: Spark's ``_metadata.row_index``), the base rows that lose (to a log record or a delete);
    ``winners``, among the slice's visible log data records (``read_log_records``, in log order), the ones
    the merged slice holds (a record replacing a key the base file holds twice is named twice). It depends
    on the record key and ordering columns only, never on the other columns a read asks for
    (``log_changes_cache`` keeps it for the other read of the same query)."""

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
    rule: MergeRule,
    decision: LogDecision | None = None,
) -> LogChanges:
    """The slice's log changes, deciding every key the logs name from the log records and the base file's
    record key and ordering columns only (the base file's other columns are never decoded); with the
    ``decision`` made earlier for the same slice, visible instants and rule, only the log blocks are
    decoded (the rows it names are taken)."""
    logs = read_log_records(storage, file_slice, schema, visible_instants, rule.ordering_field)
    if decision is not None:
        return LogChanges(logs.data.take(pa.array(decision.winners, pa.int64())), decision)
    if logs.data.num_rows == 0 and len(logs.delete_keys) == 0:
        return LogChanges(logs.data, LogDecision(np.zeros(0, np.int64), np.zeros(0, np.int64)))
    decisive = merge_schema(schema, (), rule.ordering_field)
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
    merged = _decide(base, logs, rule)
    replacing = merged.base_replacement[merged.base_replacement >= 0]
    winners = np.concatenate([replacing, merged.new_rows]).astype(np.int64)
    replaced = np.concatenate(positions)[~merged.base_kept].astype(np.int64)
    return LogChanges(logs.data.take(pa.array(winners, pa.int64())), LogDecision(replaced, winners))


def deleted_base_keys(
    storage: Storage,
    file_slice: FileSlice,
    schema: pa.Schema,
    visible_instants: Collection[str],
    rule: MergeRule,
) -> pa.Array:
    """The record keys of the slice's base file that its log blocks delete: the merged slice no longer holds
    them, though the base file does until compaction (``schema``: the record key and the ordering field are
    all it needs). A base row the logs replace is deleted unless one of the winning log rows has its key."""
    changes = log_changes(storage, file_slice, schema, visible_instants, rule)
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
    rule: MergeRule,
) -> pa.Table:
    """The whole merged slice as one table (compaction, CDC images)."""
    parts = list(iter_merged_slice(storage, file_slice, schema, visible_instants, rule))
    return pa.concat_tables(parts) if parts else schema.empty_table()


@dataclass(frozen=True)
class _Decision:
    """The merge of the base rows the logs name with the log records, as positions: per base row,
    ``base_kept`` (it stays as stored) or ``base_replacement`` (the log data record it becomes, else -1;
    a row neither kept nor replaced is deleted); ``new_rows``, ascending, the log data records of keys no
    such base row holds."""

    base_kept: np.ndarray
    base_replacement: np.ndarray
    new_rows: np.ndarray


def _decide(base: pa.Table, logs: LogRecords, rule: MergeRule) -> _Decision:
    """``MergeRule``'s two steps over whole columns: the log records of each key pre-combined (the
    deletes that count, ``_effective_deletes``, cut each key's records; the greatest ordering value, then
    the latest, of the records after the last of them wins), then combined with every base row of the key,
    as compaction's ``HoodieMergeHandle`` and a copy-on-write upsert merge a record into each stored copy of
    its key (Hudi's Spark snapshot reader merges it into the first copy only, ``removeLogRecord``, and so
    reads a key an insert stored twice differently before and after compaction; this reads it as after)."""
    n_base, n_log = base.num_rows, logs.data.num_rows
    keys = pa.concat_arrays([base.column(RECORD_KEY_COLUMN).combine_chunks().cast(pa.string()),
                             logs.data.column(RECORD_KEY_COLUMN).combine_chunks().cast(pa.string()),
                             logs.delete_keys])
    encoded = pc.dictionary_encode(keys)
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    n_keys = len(encoded.dictionary)
    base_codes, log_codes, delete_codes = codes[:n_base], codes[n_base:n_base + n_log], codes[n_base + n_log:]
    ordering = rule.ordering_field if rule.ordering_field in logs.data.column_names else None
    log_ordering = logs.data.column(ordering).combine_chunks() if ordering else None
    last_delete = _effective_deletes(log_codes, logs.seq, log_ordering, delete_codes, logs.delete_seqs,
                                     logs.delete_orderings if ordering else None, n_keys)
    live = np.flatnonzero(logs.seq > last_delete[log_codes])
    log_winner = np.full(n_keys, -1, np.int64)
    winners = _latest_greatest(log_codes[live], None if log_ordering is None else log_ordering.take(pa.array(live)),
                               live)
    log_winner[log_codes[winners]] = winners
    replacement = log_winner[base_codes]
    kept = (replacement < 0) & (last_delete[base_codes] == 0)
    if rule.stored_may_win and ordering and ordering in base.column_names:
        rows = np.flatnonzero(replacement >= 0)
        stored = base.column(ordering).take(pa.array(rows))
        incoming = log_ordering.take(pa.array(replacement[rows]))
        stored_wins = rows[pc.fill_null(pc.greater(stored, incoming), False).to_numpy(zero_copy_only=False)]
        kept[stored_wins] = True
        replacement[stored_wins] = -1
    in_base = np.zeros(n_keys, dtype=bool)
    in_base[base_codes] = True
    new_rows = np.sort(log_winner[(log_winner >= 0) & ~in_base])
    return _Decision(kept, replacement, new_rows)


def _latest_greatest(codes: np.ndarray, ordering: pa.Array | None, positions: np.ndarray) -> np.ndarray:
    """Of the records at ``positions`` (ascending: log order), with key ``codes`` and ordering values
    ``ordering``, each key's winner: the greatest ordering value, then the latest (a null value loses)."""
    if not len(positions):
        return positions
    columns = {"k": codes, "p": positions}
    sort_keys = [("k", "ascending")]
    if ordering is not None:
        columns["o"] = ordering
        sort_keys.append(("o", "descending"))
    sort_keys.append(("p", "descending"))
    order = pc.sort_indices(pa.table(columns), sort_keys=sort_keys).to_numpy()
    sorted_codes = codes[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = sorted_codes[1:] != sorted_codes[:-1]
    return positions[order[first]]


def _effective_deletes(log_codes: np.ndarray, log_seqs: np.ndarray, log_ordering: pa.Array | None,
                       delete_codes: np.ndarray, delete_seqs: np.ndarray, delete_orderings: pa.Array | None,
                       n_keys: int) -> np.ndarray:
    """Per key, the sequence number of the last delete that counts (0: none). A delete counts unless the
    key's pre-combined record before it, the greatest ordering value among its records since the last delete
    that counts, is greater than the delete's own ordering value (null: the delete always counts). Each
    key's deletes are decided in log order, the first of every key at once, then the second, and so on: as
    many vectorized rounds as a key has deletes at most."""
    last = np.zeros(n_keys, np.int64)
    if not len(delete_codes):
        return last
    if log_ordering is None or delete_orderings is None or delete_orderings.null_count == len(delete_orderings):
        np.maximum.at(last, delete_codes, delete_seqs)
        return last
    order = np.lexsort((delete_seqs, delete_codes))
    sorted_codes = delete_codes[order]
    group_start = np.flatnonzero(np.concatenate([[True], sorted_codes[1:] != sorted_codes[:-1]]))
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order)) - np.repeat(group_start, np.diff(np.append(group_start, len(order))))
    for r in range(int(rank.max()) + 1):
        at = np.flatnonzero(rank == r)  # at most one delete per key
        codes, seqs = delete_codes[at], delete_seqs[at]
        slot = np.full(n_keys, -1, np.int64)
        slot[codes] = np.arange(len(at))
        owner = slot[log_codes]  # the delete of this round each log record's key has, else -1
        safe = np.maximum(owner, 0)
        between = np.flatnonzero((owner >= 0) & (log_seqs > last[codes][safe]) & (log_seqs < seqs[safe]))
        effective = np.ones(len(at), dtype=bool)
        if len(between):
            before = pa.table({"d": owner[between], "o": log_ordering.take(pa.array(between))})
            greatest = before.group_by("d").aggregate([("o", "max")])
            deciding = greatest.column("d").to_numpy()
            outweighs = pc.greater(greatest.column("o_max"), delete_orderings.take(pa.array(at[deciding])))
            effective[deciding] = ~pc.fill_null(outweighs, False).to_numpy(zero_copy_only=False)
        last[codes[effective]] = seqs[effective]
    return last
