"""Apache Hudi's HBase index (``hoodie.index.type=HBASE``, ``SparkHoodieHBaseIndex``): each record key's file group
kept in an HBase table (``index.hbase_table``) that Java Hudi's HBase index may share.

Tagging looks the batch's keys up in batched gets, in the task holding the records (``tags_records``; Hudi's
``locationTagFunction`` in ``mapPartitionsWithIndex``). An entry counts as ``index.location_validity`` says: its
``commit_ts`` a completed instant or older than the timeline (Hudi's ``checkIfValidCommit``: a failed write's
entries are ignored), and, beyond Hudi, its file group live (a key whose group a clustering or an overwrite replaced
is new, not an update of a file group no reader sees). The index is global; a key written with
another partition moves there with ``hoodie.hbase.index.update.partition.path`` (``routing.partition_changes``).

After the data files are written and before the commit completes (``update_location``, Hudi's ``updateLocation``),
every key a file added is put with the commit's instant, its file group and partition (Hudi puts the records that
had no location). Every key removed (and not added again, as a moved key is) is deleted once the commit completed
(``forget_removed``); Hudi deletes them with the puts, so a write that failed after its deletes leaves keys the
table still holds without an entry, and their next upsert stores them twice. A failed write's puts, which may
cover an older entry (a key it moved), are read past: tagging takes the newest version of a completed instant
(the table keeps ``VERSIONS => 2`` or more), where Hudi, without ``rollback.sync``, takes the key for new and
stores it twice. An entry left by a commit whose deletes did not go through names a file group that no longer
holds the key: an upsert of it writes it there, once. The mutations go from the driver, at ``put.batch.size`` a
second (or the autocomputed rate, ``HBaseIndexConfig.put_rate``, for one putting process); Hudi puts from a task
per file group with inserts.

A rollback with ``hoodie.index.hbase.rollback.sync`` restores each entry written since the rolled-back instant
began to its previous version, or deletes it when it has none (Hudi's ``rollbackCommit``); without it nothing is
undone, and the entries are ignored while their instant is not completed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.config.hbase_index_config import HBaseIndexConfig
from hoodie_datasource.index.hbase_table import ENTRY_SCHEMA, HBaseIndexTable
from hoodie_datasource.index.index import Index, TagScope
from hoodie_datasource.index.key_ranges import FileKeyRange, unranged
from hoodie_datasource.index.location_validity import committed_instants, committed_mask, valid_locations
from hoodie_datasource.index.lookup import IndexCounts
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.meta_columns import FILE_ID_COLUMN, LOCATION_PARTITION_COLUMN, RECORD_KEY_COLUMN
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.commit_metadata import WriteStat
from hoodie_datasource.timeline.instant_time import parse_instant
from hoodie_datasource.timeline.timeline import Timeline
from hoodie_datasource.timeline.written_keys import written_keys


@dataclass(frozen=True)
class HBaseIndex(Index):
    """``SparkHoodieHBaseIndex``; ``timeline``: the table's, once bound (``for_table``)."""

    timeline: Timeline | None = None
    is_global = True
    tags_records = True
    tracks_written_keys = True

    @property
    def hbase(self) -> HBaseIndexConfig:
        assert self.config.hbase is not None, "hoodie.index.type=HBASE resolves its hoodie.index.hbase.* options"
        return self.config.hbase

    def for_table(self, table: Table) -> Index:
        return replace(self, timeline=table.timeline)

    def file_ranges(self, storage: Storage, slices: Sequence[FileSlice]) -> list[FileKeyRange]:
        """Every slice, its footers unread: HBase names the file groups (Java Hudi's merge-on-read inserts under
        this index go to file groups of log files only, ``HoodieIndex.canIndexLogFiles``)."""
        return [unranged(s) for s in slices]

    def tag(self, records: pa.Table, files: Sequence[FileKeyRange], scope: TagScope
            ) -> tuple[pa.Table, IndexCounts | None]:
        """``records`` with the file group HBase holds each key in (null: a new key)."""
        keys = records.column(RECORD_KEY_COLUMN)
        found = self._locations(keys, files)
        at = pc.index_in(keys, value_set=found.column("key"))
        counts = IndexCounts(keys=records.num_rows, found=int(pc.sum(pc.is_valid(at)).as_py() or 0))
        return records.append_column(FILE_ID_COLUMN, found.column("file_name").take(at)).append_column(
            LOCATION_PARTITION_COLUMN, found.column("partition_path").take(at)), counts

    def _locations(self, keys: pa.Array | pa.ChunkedArray, files: Sequence[FileKeyRange]) -> pa.Table:
        """The entries of the distinct ``keys`` that count (``ENTRY_SCHEMA``); HBase is not asked while the table
        has no file a key could be in."""
        unique = pc.unique(pc.drop_null(keys))
        if len(unique) == 0 or not files:
            return ENTRY_SCHEMA.empty_table()
        assert self.timeline is not None, "HBaseIndex.for_table(table) binds the index before it tags"
        table = HBaseIndexTable(self.hbase)
        found = table.entries(unique.to_pylist())
        whole = pc.and_(pc.and_(pc.is_valid(found.column("commit_ts")), pc.is_valid(found.column("file_name"))),
                        pc.is_valid(found.column("partition_path")))
        found = found.filter(whole)
        committed = committed_mask(found.column("commit_ts"), self.timeline)
        if not pc.all(committed).as_py():
            # a failed write put these entries over older ones: the newest of a completed instant counts
            earlier = table.earlier_entries(found.filter(pc.invert(committed)).column("key").to_pylist(),
                                            lambda instants: committed_instants(self.timeline, instants))
            found = pa.concat_tables([found.filter(committed), earlier])
        return found.filter(valid_locations(found.column("commit_ts"), found.column("partition_path"),
                                            found.column("file_name"), self.timeline, files))

    def update_location(self, stats: Sequence[WriteStat], instant: str) -> None:
        added, _ = written_keys(stats)
        if added.num_rows:
            puts = pa.Table.from_arrays(
                [added.column("key"), pa.array([instant] * added.num_rows, pa.string()), added.column("file_id"),
                 added.column("partition")], schema=ENTRY_SCHEMA)
            self._mutate(puts, [])

    def forget_removed(self, stats: Sequence[WriteStat], instant: str) -> None:
        _, removed = written_keys(stats)
        if len(removed):
            self._mutate(ENTRY_SCHEMA.empty_table(), removed.to_pylist())

    def _mutate(self, puts: pa.Table, deletes: list[str]) -> None:
        table = HBaseIndexTable(self.hbase)
        servers = table.region_servers() if self.hbase.put_batch_size_autocompute else 1
        table.mutate(puts, deletes, self.hbase.put_rate(servers, tasks=1))

    def rollback_commit(self, instant: str) -> None:
        if not self.hbase.rollback_sync:
            return
        since = int(parse_instant(instant).timestamp() * 1000)
        table = HBaseIndexTable(self.hbase)
        keys = table.written_since(since)
        if not keys:
            return
        previous = table.entries_before(keys, since - 1)
        gone = pc.invert(pc.is_in(pa.array(keys, pa.string()), value_set=previous.column("key")))
        table.mutate(previous, pa.array(keys, pa.string()).filter(gone).to_pylist(), self.hbase.put_batch_size)

