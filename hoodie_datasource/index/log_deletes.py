"""What a global index on a merge-on-read table must not take for a key's location: a base file row its slice's
logs delete.

A key that moved partition stays in its old base file, deleted there by a log block, until compaction; moved
back, it is in two base files and only one file group holds it. Apache Hudi reads the stored records of the keys
it tags through a merged read (``HoodieIndexUtils.tagGlobalLocationBackToRecords`` with
``mayContainDuplicateLookup`` on a merge-on-read table, ``mergeForPartitionUpdatesIfNeeded``), so a key its
slice's logs deleted is no location. ``LogDeletes.live`` does the same for the (key, file) pairs the filters and
key checks kept, merging the slice as the table's readers do (``file_group.merged_reader.deleted_base_keys``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.file_group.merged_reader import MergeRule, deleted_base_keys
from hoodie_datasource.index.key_ranges import FileKeyRange
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.meta_columns import RECORD_KEY_COLUMN
from hoodie_datasource.table.table import Table


@dataclass(frozen=True)
class LogDeletes:
    """How to merge a slice to find the keys of its base file its logs delete (picklable: it travels to Spark
    tasks): the record key and ordering columns (``schema``), the instants whose log blocks count, the merge rule."""

    schema: pa.Schema
    visible_instants: frozenset[str]
    rule: MergeRule

    @staticmethod
    def of(table: Table, data: pa.Schema) -> LogDeletes:
        """The completed writes' log blocks of ``table``, decided by the record key and the ordering field (typed
        as the write's ``data`` schema has it)."""
        ordering = table.config.precombine_field
        fields = [pa.field(RECORD_KEY_COLUMN, pa.string())]
        if ordering and ordering in data.names:
            fields.append(data.field(ordering))
        visible = frozenset(i.timestamp for i in table.timeline.completed_writes_upto(None))
        return LogDeletes(pa.schema(fields), visible, MergeRule.of(table.config))

    def live(self, storage: Storage, keys: pa.Array, pair_key: np.ndarray, pair_file: np.ndarray, keep: np.ndarray,
             files: Sequence[FileKeyRange]) -> np.ndarray:
        """``keep`` less the pairs whose key the file's slice deletes (only slices with log files are read)."""
        keep = keep.copy()
        for i in np.unique(pair_file[keep]).tolist():
            if not files[i].logs:
                continue
            deleted = deleted_base_keys(storage, files[i].file_slice, self.schema, self.visible_instants, self.rule)
            if len(deleted):
                at = np.flatnonzero(keep & (pair_file == i))
                gone = pc.is_in(keys.take(pa.array(pair_key[at])), value_set=deleted)
                keep[at[gone.to_numpy(zero_copy_only=False)]] = False
        return keep
