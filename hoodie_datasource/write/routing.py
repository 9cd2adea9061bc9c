"""Where each tagged record goes, on whole Arrow batches: the step between the index and the file-group writers.

    partition_changes      a key a global index found in another partition: deleted there and inserted here
                           (the index's update-partition-path option on), or updated where it is stored
    insert_counts          the workload profile: inserts per partition, which the insert plan sizes
    route                  every record's target file group (updates keep theirs, inserts get a bucket of the
                           insert plan, deletes of keys the table does not hold are dropped)
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.index.index import Index
from hoodie_datasource.index.murmur_hash import hash_strings
from hoodie_datasource.table.meta_columns import (
    FILE_ID_COLUMN,
    IS_DELETE_COLUMN,
    LOCATION_PARTITION_COLUMN,
    PARTITION_PATH_COLUMN,
    RECORD_KEY_COLUMN,
)
from hoodie_datasource.write.partitioner import InsertPlan


def partition_changes(records: pa.Table, index: Index) -> pa.Table:
    """Tagged ``records`` with the keys a global index found in another partition than the record's settled as
    Hudi's ``HoodieIndexUtils.tagGlobalLocationBackToRecords`` settles them: moved (``split_partition_moves``)
    when the index's update-partition-path option is on, else updated where they are stored
    (``updated_in_place``). A partition-local index finds no key elsewhere."""
    if not index.is_global:
        return records
    return split_partition_moves(records) if index.config.update_partition_path else updated_in_place(records)


def _moved(records: pa.Table) -> pa.Array:
    location = records.column(LOCATION_PARTITION_COLUMN)
    return pc.fill_null(
        pc.and_(pc.is_valid(location), pc.not_equal(location, records.column(PARTITION_PATH_COLUMN))), False
    )


def updated_in_place(records: pa.Table) -> pa.Table:
    """A key found in another partition is written where it is stored: its record's partition path becomes the
    stored one, its data (the partition fields too) as given."""
    moved = _moved(records)
    if not pc.any(moved).as_py():
        return records
    at = records.schema.get_field_index(PARTITION_PATH_COLUMN)
    stored = pc.if_else(moved, records.column(LOCATION_PARTITION_COLUMN), records.column(PARTITION_PATH_COLUMN))
    return records.set_column(at, PARTITION_PATH_COLUMN, stored)


def split_partition_moves(records: pa.Table) -> pa.Table:
    """A key found in another partition is deleted where it was and inserted where it goes."""
    moved = _moved(records)
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
