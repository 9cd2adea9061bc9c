"""The indexes that look incoming keys up among the stored ones: Apache Hudi's ``HoodieBloomIndex``,
``HoodieGlobalBloomIndex``, ``HoodieSimpleIndex`` and ``HoodieGlobalSimpleIndex``, columnar.

Each pairs a record with the latest base files of its partition (of every partition: a global index) whose
[min, max] key range holds its key, then keeps the pairs whose file stores the key: a bloom index probes the
file's bloom filter first and reads the stored keys only where filters leave it unsure (``lookup.confirm_pairs``),
a simple index reads the stored keys of every candidate file (Hudi's simple indexes join with the keys of
every base file; the key ranges only skip files that cannot hold a key). Under a global index on a
merge-on-read table, a key its slice's logs deleted is no location (``log_deletes``).

    tag         both steps at once, for records that hold every record of their keys (a task that owns
                their partitions, the local engine)
    candidates  step 1 alone: thin (key, partition, candidate file) rows of a batch; the records stay put
    confirm     step 2 alone: the exact locations among candidates, which need not hold every candidate of
                their keys (a distributed engine shuffles them by ``LOOKUP_FILE_COLUMN`` first, so that each
                file is read once)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.config.write_operation import WriteOperation
from hoodie_datasource.errors import HoodieIndexError
from hoodie_datasource.index.index import CANDIDATE_SCHEMA, LOCATION_SCHEMA, LOOKUP_FILE_COLUMN, Index, TagScope, unlocated
from hoodie_datasource.index.key_ranges import FileKeyRange, load_key_ranges, unranged
from hoodie_datasource.index.log_deletes import LogDeletes
from hoodie_datasource.index.lookup import (
    BloomSource,
    IndexCounts,
    confirm_pairs,
    partition_positives,
    range_candidates,
)
from hoodie_datasource.index.metadata_file_index import MetadataFileIndex
from hoodie_datasource.storage.storage import FileInfo, Storage
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.meta_columns import (
    FILE_ID_COLUMN,
    LOCATION_PARTITION_COLUMN,
    PARTITION_PATH_COLUMN,
    RECORD_KEY_COLUMN,
)
from hoodie_datasource.table.table import Table

MAX_LOOKUP_TASKS = 200


def _codes(values: pa.Array) -> tuple[np.ndarray, pa.Array]:
    encoded = pc.dictionary_encode(values)
    return encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64), encoded.dictionary


@dataclass(frozen=True)
class LookupIndex(Index):
    """``metadata``: where a bloom index takes its files' filters and key ranges instead of their footers, once
    bound to a table with ``hoodie.bloom.index.use.metadata`` (``for_table``)."""

    metadata: MetadataFileIndex | None = None
    uses_bloom: ClassVar[bool]

    def for_table(self, table: Table) -> Index:
        """A bloom index with ``hoodie.bloom.index.use.metadata``: the table's metadata table, when it has a ready
        ``bloom_filters`` or ``column_stats`` partition (Hudi's ``HoodieBloomIndex``)."""
        if not (self.uses_bloom and self.config.use_metadata):
            return self
        found = MetadataFileIndex.of(table)
        return self if found is None else replace(self, metadata=found)

    def file_ranges(self, storage: Storage, slices: Sequence[FileSlice]) -> list[FileKeyRange]:
        """The key range of every slice with a base file: from the footers (``key_ranges.load_key_ranges``), or
        the metadata table's record key statistics (none needed when the ranges prune nothing); then the slices
        of log files only, unranged, which ``tag`` and ``candidates`` refuse to look keys up in."""
        log_only = [unranged(s) for s in slices if s.base_file is None]
        if self.metadata is None:
            return load_key_ranges(storage, list(slices)) + log_only
        if not self.config.prune_by_ranges:
            return [unranged(s) for s in slices if s.base_file is not None] + log_only
        return self.metadata.key_ranges(storage, slices) + log_only

    def _blooms(self, storage: Storage, listed: dict[str, FileInfo] | None = None) -> BloomSource | None:
        return None if self.metadata is None else self.metadata.blooms(storage, listed)

    def scope(self, table: Table, instant: str, operation: WriteOperation, data: pa.Schema) -> TagScope:
        """Under a global index on a merge-on-read table, the keys a slice's logs delete are no location
        (Hudi's ``mayContainDuplicateLookup``, set for merge-on-read tables)."""
        deletes = LogDeletes.of(table, data) if self.is_global and table.config.is_mor else None
        return replace(super().scope(table, instant, operation, data), log_deletes=deletes)

    def check_lookup_files(self, files: Sequence[FileKeyRange]) -> None:
        """Keys are looked up among base files only, as Hudi's bloom and simple indexes do
        (``HoodieIndexUtils.getLatestBaseFilesForAllPartitions``): a key stored in a file group of log files only
        (which Hudi writes under an index that indexes log files, ``HoodieIndex.canIndexLogFiles``) would be taken
        for new and stored twice, as Hudi stores it. Refused instead, naming the indexes that locate such keys."""
        log_only = [f for f in files if f.base_file is None]
        if log_only:
            first = log_only[0]
            raise HoodieIndexError(
                f"hoodie.index.type={self.config.index_type} looks keys up in base files only, and {len(log_only)} "
                f"file group(s) hold log files only (e.g. {first.file_id} in partition {first.partition!r}): their "
                "keys would be stored twice. Tag with an index that locates keys in log files: RECORD_INDEX, BUCKET "
                "(when the table was written with it), HBASE; or compact the table first (a compaction gives each "
                "group holding records a base file)")

    def candidates(self, records: pa.Table, files: Sequence[FileKeyRange]) -> pa.Table:
        """Thin (key, partition, candidate file) rows (``CANDIDATE_SCHEMA``) of keyed ``records``."""
        self.check_lookup_files(files)
        keys = records.column(RECORD_KEY_COLUMN).combine_chunks()
        parts = records.column(PARTITION_PATH_COLUMN).combine_chunks()
        found = range_candidates(keys, parts, files, self.config.prune_by_ranges, self.is_global)
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

    def lookup_tasks(self, files: Sequence[FileKeyRange]) -> int:
        """A task per candidate base file, up to ``MAX_LOOKUP_TASKS``."""
        return max(1, min(len(files), MAX_LOOKUP_TASKS))

    def confirm(self, cands: pa.Table, files: Sequence[FileKeyRange], scope: TagScope) -> pa.Table:
        """The exact locations (``LOCATION_SCHEMA``) among ``cands`` (which may span several of ``files`` and need
        not hold every candidate of their keys): every bloom positive is checked against the file's stored keys,
        and a key its slice's logs deleted is no location."""
        if cands.num_rows == 0:
            return LOCATION_SCHEMA.empty_table()
        pair_key, keys = _codes(cands.column(RECORD_KEY_COLUMN).combine_chunks())
        pair_file, base_files = _codes(cands.column(LOOKUP_FILE_COLUMN).combine_chunks())
        keep, _ = confirm_pairs(scope.storage, keys, pair_key, pair_file, base_files.to_pylist(), self.uses_bloom,
                                blooms=self._blooms(scope.storage))
        if scope.log_deletes is not None:
            by_base_file = {f.base_file: f for f in files}
            keep = scope.log_deletes.live(scope.storage, keys, pair_key, pair_file, keep,
                                          [by_base_file[b] for b in base_files.to_pylist()])
        return cands.filter(pa.array(keep)).select(LOCATION_SCHEMA.names)

    def tag(self, records: pa.Table, files: Sequence[FileKeyRange], scope: TagScope
            ) -> tuple[pa.Table, IndexCounts | None]:
        """``records`` with the file group that holds each one's key: a key only one bloom filter claims goes to
        that file group unchecked (``lookup.confirm_pairs``); a key its slice's logs deleted is not located there.
        With no files to look in, every key is new and nothing is counted."""
        if not files:
            return unlocated(records), None
        self.check_lookup_files(files)
        storage = scope.storage
        keys = records.column(RECORD_KEY_COLUMN).combine_chunks()
        parts = records.column(PARTITION_PATH_COLUMN).combine_chunks()
        listed = {f.base_file: FileInfo(f.base_file, f.size) for f in files}
        # random keys under a partition-local index: each key against all its partition's filters, no pairs
        grid = None if self.is_global or not self.uses_bloom else \
            partition_positives(storage, keys, parts, files, self.config.prune_by_ranges, listed,
                                self._blooms(storage, listed))
        if grid is not None:
            pair_key, pair_file, keep, counts = grid
        else:
            found = range_candidates(keys, parts, files, self.config.prune_by_ranges, self.is_global)
            pair_key, pair_file = found.rows, found.files
            # a pair's record row stands for its key's identity (``claims``): the rows of one key (in one
            # partition, or anywhere under a global index) have the same candidate files and bloom answers,
            # so a row's positives are its key's
            keep, counts = confirm_pairs(storage, keys, pair_key, pair_file, [f.base_file for f in files],
                                         self.uses_bloom, pair_key, listed, self._blooms(storage, listed))
            counts = replace(counts, pairs=found.by_partition,
                             candidate_files=int(np.count_nonzero(np.bincount(pair_file, minlength=len(files)))))
        if scope.log_deletes is not None:
            keep = scope.log_deletes.live(storage, keys, pair_key, pair_file, keep, files)
        location = np.full(records.num_rows, -1, dtype=np.int64)
        location[pair_key[keep][::-1]] = pair_file[keep][::-1]  # the first file that holds a key wins
        missing = location < 0
        at = pa.array(np.where(missing, 0, location), mask=missing)
        file_ids = pc.take(pa.array([f.file_id for f in files], pa.string()), at)
        where = pc.take(pa.array([f.partition for f in files], pa.string()), at)
        touched = set(pc.unique(parts).to_pylist())
        counts = replace(counts, keys=records.num_rows, found=int((~missing).sum()),
                         files=len(files) if self.is_global else sum(f.partition in touched for f in files))
        return (records.append_column(FILE_ID_COLUMN, file_ids).append_column(LOCATION_PARTITION_COLUMN, where),
                counts)


class BloomIndex(LookupIndex):
    """``HoodieBloomIndex``: key ranges and the bloom filters of the base files' footers, per partition."""

    uses_bloom = True


class GlobalBloomIndex(BloomIndex):
    """``HoodieGlobalBloomIndex``: the bloom index over every partition's files."""

    is_global = True


class SimpleIndex(LookupIndex):
    """``HoodieSimpleIndex``: the stored keys of the partition's latest base files, no bloom filter."""

    uses_bloom = False


class GlobalSimpleIndex(SimpleIndex):
    """``HoodieGlobalSimpleIndex``: every incoming key checked against the stored keys of every partition's latest
    base files; a key written with another partition moves there (``hoodie.simple.index.update.partition.path``)."""

    is_global = True
