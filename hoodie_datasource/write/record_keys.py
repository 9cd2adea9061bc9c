"""The first step of every write, on whole Arrow batches: each record's key, partition path and delete flag.

    with_keys                   compute _hoodie_record_key / _hoodie_partition_path / _hoodie_is_delete
    keyed                       with_keys as a write's config asks (every engine's first step)
    combined_across_partitions  one record per key in the whole batch (under a global index)
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.config.write_config import WriteConfig
from hoodie_datasource.errors import InvalidRecordError
from hoodie_datasource.table.keygen import KeyGenerator
from hoodie_datasource.table.meta_columns import (
    IS_DELETE_COLUMN,
    IS_DELETED_COLUMN,
    PARTITION_PATH_COLUMN,
    RECORD_KEY_COLUMN,
)
from hoodie_datasource.write.records import dedupe


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
    """One record per key in the whole batch, whatever its partition, when the write combines records: under a
    global index Hudi's ``HoodieWriteHelper.deduplicateRecords`` keys records by the record key alone, so the same
    key arriving in two partitions keeps only the record with the highest ordering value. (Partition-local indexes
    combine per file group, where the writer sees every record of it.) ``records`` must hold every record of
    their keys."""
    if not config.dedupes:
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
