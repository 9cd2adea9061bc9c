"""Record-level steps of a write that every engine applies to whole Arrow batches.

    with_keys        compute _hoodie_record_key / _hoodie_partition_path
    keyed            with_keys as a write's config asks (every engine's first step)
    candidates       (record key, partition, file) pairs by key range       [index step 1]
    confirm          per file: bloom filter, then exact key check            [index step 2]
    locate           both index steps and the tags at once, for records that hold every
                     record of their keys (a task owning its partitions, the local engine)
    route            give every record its target file group (updates keep theirs,
                     inserts get a bucket, deletes of unknown keys are dropped)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.config.write_config import IndexConfig, WriteConfig
from hoodie_datasource.errors import InvalidRecordError
from hoodie_datasource.index.key_ranges import FileKeyRange
from hoodie_datasource.index.lookup import IndexCounts, confirm_pairs, partition_positives, range_candidates
from hoodie_datasource.index.murmur_hash import hash_strings
from hoodie_datasource.storage.storage import FileInfo, Storage
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.keygen import KeyGenerator
from hoodie_datasource.table.meta_columns import (
    FILE_ID_COLUMN,
    IS_DELETE_COLUMN,
    IS_DELETED_COLUMN,
    LOCATION_PARTITION_COLUMN,
    PARTITION_PATH_COLUMN,
    RECORD_KEY_COLUMN,
)
from hoodie_datasource.write.partitioner import InsertPlan
from hoodie_datasource.write.records import dedupe

CANDIDATE_SCHEMA = pa.schema(
    [(RECORD_KEY_COLUMN, pa.string()), (PARTITION_PATH_COLUMN, pa.string()), (FILE_ID_COLUMN, pa.string()),
     (LOCATION_PARTITION_COLUMN, pa.string()), ("_hoodie_base_file", pa.string())]
)
LOCATION_SCHEMA = pa.schema(
    [(RECORD_KEY_COLUMN, pa.string()), (PARTITION_PATH_COLUMN, pa.string()), (FILE_ID_COLUMN, pa.string()),
     (LOCATION_PARTITION_COLUMN, pa.string())]
)


def with_keys(batch: pa.Table, keygen: KeyGenerator, is_delete: bool = False,
              ordering_field: str | None = None) -> pa.Table:
    """``batch`` with its record keys, partition paths and delete flags.

    Every row is a delete when ``is_delete``. Otherwise a row is a delete when the internal boolean
    ``_hoodie_is_delete`` marks it (SQL MERGE: one write upserts some keys and deletes others), or when
    Hudi's soft-delete data column ``_hoodie_is_deleted`` is true (it stays a data column, as in Hudi;
    null or false is not a delete).

    ``ordering_field``: the write combines records by it, so every record needs a value (Hudi's
    HoodieCreateRecordUtils reads it with ``HoodieAvroUtils.getNestedFieldVal(..., returnNullIfNotFound
    = false)``, which fails the write with "The value of <field> can not be null")."""
    keys = keygen.record_keys(batch)
    partitions = keygen.partition_paths(batch)
    deletes = pa.repeat(pa.scalar(is_delete), batch.num_rows)
    if IS_DELETE_COLUMN in batch.column_names:
        marked = pc.fill_null(batch.column(IS_DELETE_COLUMN).cast(pa.bool_()), False)
        deletes = pc.or_(marked, is_delete)
        batch = batch.drop_columns([IS_DELETE_COLUMN])
    if ordering_field is not None and not is_delete:
        _check_ordering_values(batch, ordering_field, deletes)
    if IS_DELETED_COLUMN in batch.column_names:
        deletes = pc.or_(deletes, pc.fill_null(batch.column(IS_DELETED_COLUMN), False))
    out = batch.append_column(RECORD_KEY_COLUMN, keys).append_column(PARTITION_PATH_COLUMN, partitions)
    return out.append_column(IS_DELETE_COLUMN, deletes)


def keyed(records: pa.Table, config: WriteConfig) -> pa.Table:
    """``records`` keyed as the write ``config`` asks (``with_keys``): the first step of every engine."""
    return with_keys(records, config.keygen, config.operation.deletes_records, config.combine_field)


def combined_across_partitions(records: pa.Table, config: WriteConfig) -> pa.Table:
    """Under a global index one record per key in the whole batch, whatever its partition: Hudi's
    ``HoodieWriteHelper.deduplicateRecords`` keys records by the record key alone when the index is
    global, so the same key arriving in two partitions keeps only the record with the highest ordering
    value. (Partition-local indexes combine per file group, where the writer sees every record of it.)
    ``records`` must hold every record of their keys."""
    if not (config.index.is_global and config.dedupes):
        return records
    ordering = config.precombine_field if config.precombine_field in records.column_names else None
    return dedupe(records, ordering, by_partition=False)


def _check_ordering_values(batch: pa.Table, ordering_field: str, hard_deletes: pa.Array) -> None:
    """Every record but a hard delete (which carries only its key) has an ordering value."""
    missing = pc.and_(pc.is_null(batch.column(ordering_field)), pc.invert(hard_deletes))
    count = pc.sum(missing).as_py() or 0
    if count:
        raise InvalidRecordError(
            f"Precombine field {ordering_field!r} is null in {count} record(s); a write that combines "
            "records by it (hoodie.combine.before.upsert / hoodie.combine.before.insert) needs a value in "
            "every record, as in Apache Hudi"
        )


@dataclass(frozen=True)
class LogDeletes:
    """Under a global index on a merge-on-read table, a key that moved partition stays in its old base file,
    deleted there by a log block, until compaction; moved back, it is in two base files and only one file
    group holds it. Apache Hudi reads the stored records of the keys it tags through a merged read
    (``HoodieIndexUtils.mergeForPartitionUpdatesIfNeeded``), so a key its slice's logs deleted is no
    location; ``live`` does the same for the (key, file) pairs the filters and key checks kept.
    ``deleted_keys``: the keys of a slice's base file that its logs delete, as the table's readers merge
    the slice (picklable: it travels to Spark tasks)."""

    deleted_keys: Callable[[Storage, FileSlice], pa.Array]

    def live(self, storage: Storage, keys: pa.Array, pair_key: np.ndarray, pair_file: np.ndarray, keep: np.ndarray,
             files: Sequence[FileKeyRange]) -> np.ndarray:
        """``keep`` less the pairs whose key the file's slice deletes (only slices with log files are read)."""
        keep = keep.copy()
        for i in np.unique(pair_file[keep]).tolist():
            if not files[i].logs:
                continue
            deleted = self.deleted_keys(storage, files[i].file_slice)
            if len(deleted):
                at = np.flatnonzero(keep & (pair_file == i))
                gone = pc.is_in(keys.take(pa.array(pair_key[at])), value_set=deleted)
                keep[at[gone.to_numpy(zero_copy_only=False)]] = False
        return keep


def candidates(records: pa.Table, files: Sequence[FileKeyRange], prune_by_ranges: bool, global_index: bool) -> pa.Table:
    """Thin (key, partition, candidate file) rows; the records themselves stay where they are."""
    keys = records.column(RECORD_KEY_COLUMN).combine_chunks()
    parts = records.column(PARTITION_PATH_COLUMN).combine_chunks()
    found = range_candidates(keys, parts, files, prune_by_ranges, global_index)
    if len(found.rows) == 0:
        return CANDIDATE_SCHEMA.empty_table()
    idx = pa.array(found.rows)
    pos = pa.array(found.files)
    return pa.Table.from_arrays(
        [
            pc.take(keys, idx),
            pc.take(parts, idx),
            pc.take(pa.array([f.file_id for f in files], pa.string()), pos),
            pc.take(pa.array([f.partition for f in files], pa.string()), pos),
            pc.take(pa.array([f.base_file for f in files], pa.string()), pos),
        ],
        schema=CANDIDATE_SCHEMA,
    )


def _codes(values: pa.Array) -> tuple[np.ndarray, pa.Array]:
    encoded = pc.dictionary_encode(values)
    return encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64), encoded.dictionary


def confirm(storage: Storage, cands: pa.Table, use_bloom: bool, log_deletes: LogDeletes | None = None,
            files: Mapping[str, FileKeyRange] | None = None) -> pa.Table:
    """Exact locations among ``cands`` (which may span several files and need not hold every candidate
    of their keys): every bloom positive is checked against the file's stored keys; with ``log_deletes``
    (and ``files``, by base file), a key its slice's logs deleted is no location."""
    if cands.num_rows == 0:
        return LOCATION_SCHEMA.empty_table()
    pair_key, keys = _codes(cands.column(RECORD_KEY_COLUMN).combine_chunks())
    pair_file, base_files = _codes(cands.column("_hoodie_base_file").combine_chunks())
    keep, _ = confirm_pairs(storage, keys, pair_key, pair_file, base_files.to_pylist(), use_bloom)
    if log_deletes is not None and files is not None:
        keep = log_deletes.live(storage, keys, pair_key, pair_file, keep, [files[b] for b in base_files.to_pylist()])
    return cands.filter(pa.array(keep)).select(LOCATION_SCHEMA.names)


def locate(storage: Storage, records: pa.Table, files: Sequence[FileKeyRange], index: IndexConfig,
           log_deletes: LogDeletes | None = None) -> tuple[pa.Table, IndexCounts]:
    """``records`` with the file group that holds each one's key (null for a new key), when they hold
    every record of their keys (a task that owns their partitions, or the local engine): a key only one
    bloom filter claims goes to that file group unchecked (``lookup.confirm_pairs``); with ``log_deletes``,
    a key its slice's logs deleted is not located there. Also the counts of the index work."""
    keys = records.column(RECORD_KEY_COLUMN).combine_chunks()
    parts = records.column(PARTITION_PATH_COLUMN).combine_chunks()
    listed = {f.base_file: FileInfo(f.base_file, f.size) for f in files}
    # random keys under a partition-local index: each key against all its partition's filters, no pairs
    grid = None if index.is_global or not index.uses_bloom else \
        partition_positives(storage, keys, parts, files, index.prune_by_ranges, listed)
    if grid is not None:
        pair_key, pair_file, keep, counts = grid
    else:
        found = range_candidates(keys, parts, files, index.prune_by_ranges, index.is_global)
        pair_key, pair_file = found.rows, found.files
        # a pair's record row stands for its key's identity (``claims``): the rows of one key (in one
        # partition, or anywhere under a global index) have the same candidate files and bloom answers,
        # so a row's positives are its key's
        keep, counts = confirm_pairs(storage, keys, pair_key, pair_file, [f.base_file for f in files],
                                     index.uses_bloom, pair_key, listed)
        counts = replace(counts, pairs=found.by_partition,
                         candidate_files=int(np.count_nonzero(np.bincount(pair_file, minlength=len(files)))))
    if log_deletes is not None:
        keep = log_deletes.live(storage, keys, pair_key, pair_file, keep, files)
    location = np.full(records.num_rows, -1, dtype=np.int64)
    location[pair_key[keep][::-1]] = pair_file[keep][::-1]  # the first file that holds a key wins
    missing = location < 0
    at = pa.array(np.where(missing, 0, location), mask=missing)
    file_ids = pc.take(pa.array([f.file_id for f in files], pa.string()), at)
    where = pc.take(pa.array([f.partition for f in files], pa.string()), at)
    touched = set(pc.unique(parts).to_pylist())
    counts = replace(counts, keys=records.num_rows, found=int((~missing).sum()),
                     files=len(files) if index.is_global else sum(f.partition in touched for f in files))
    return (records.append_column(FILE_ID_COLUMN, file_ids).append_column(LOCATION_PARTITION_COLUMN, where),
            counts)


def untagged(records: pa.Table) -> pa.Table:
    nulls = pa.nulls(records.num_rows, pa.string())
    return records.append_column(FILE_ID_COLUMN, nulls).append_column(LOCATION_PARTITION_COLUMN, nulls)


def split_partition_moves(records: pa.Table) -> pa.Table:
    """Global index: a key that moved partition is deleted where it was and inserted where it goes."""
    location = records.column(LOCATION_PARTITION_COLUMN)
    moved = pc.fill_null(
        pc.and_(pc.is_valid(location), pc.not_equal(location, records.column(PARTITION_PATH_COLUMN))), False
    )
    if not pc.any(moved).as_py():
        return records
    movers = records.filter(moved)
    deletes = movers.set_column(
        movers.schema.get_field_index(PARTITION_PATH_COLUMN), PARTITION_PATH_COLUMN, movers.column(LOCATION_PARTITION_COLUMN)
    ).set_column(movers.schema.get_field_index(IS_DELETE_COLUMN), IS_DELETE_COLUMN,
                 pa.repeat(pa.scalar(True), movers.num_rows))
    nulls = pa.nulls(movers.num_rows, pa.string())
    inserts = movers.set_column(movers.schema.get_field_index(FILE_ID_COLUMN), FILE_ID_COLUMN, nulls)
    return pa.concat_tables([records.filter(pc.invert(moved)), deletes, inserts])


def insert_counts(records: pa.Table) -> dict[str, int]:
    inserts = records.filter(pc.and_(pc.is_null(records.column(FILE_ID_COLUMN)),
                                     pc.invert(records.column(IS_DELETE_COLUMN))))
    if inserts.num_rows == 0:
        return {}
    counted = inserts.group_by(PARTITION_PATH_COLUMN).aggregate([(RECORD_KEY_COLUMN, "count")])
    return dict(zip(counted.column(PARTITION_PATH_COLUMN).to_pylist(), counted.column(1).to_pylist()))


def route(records: pa.Table, plan: InsertPlan) -> pa.Table:
    """Fill the target file id of inserts; drop deletes of keys the table does not hold.

    Such a delete in a partition that takes inserts goes, by its key, to the file group an insert of
    that key goes to, so that combining there decides which of them wins (a soft delete with the higher
    ordering value cancels the insert, as Hudi's preCombine does before the write); the file group's
    write then drops it. This needs no other record of the batch, so any slice of a batch routes alike."""
    file_ids = records.column(FILE_ID_COLUMN)
    stray = pc.and_(records.column(IS_DELETE_COLUMN), pc.is_null(file_ids))
    if pc.any(stray).as_py():
        inserting = pa.array(list(plan.by_partition), pa.string())
        routable = pc.is_in(records.column(PARTITION_PATH_COLUMN), value_set=inserting)
        records = records.filter(pc.invert(pc.and_(stray, pc.invert(routable))))
    file_ids = records.column(FILE_ID_COLUMN).combine_chunks()
    missing = pc.is_null(file_ids)
    if not pc.any(missing).as_py():
        return records
    rows = np.nonzero(missing.to_numpy(zero_copy_only=False))[0]
    idx = pa.array(rows)
    assigned = plan.assign(
        pc.take(records.column(PARTITION_PATH_COLUMN), idx).combine_chunks(),
        pc.take(records.column(RECORD_KEY_COLUMN), idx).combine_chunks(),
        hash_strings,
    )
    filled = pc.replace_with_mask(file_ids, missing, assigned)
    return records.set_column(records.schema.get_field_index(FILE_ID_COLUMN), FILE_ID_COLUMN, filled)
