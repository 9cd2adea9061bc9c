"""The index protocol: how a write finds the file group of each incoming key, as Apache Hudi's ``HoodieIndex``.

``index.registry.index_for(config)`` makes a write's index once from its options; nothing else asks which type
of index it is. An index tells what it can do, as Hudi's does:

    is_global             ``HoodieIndex.isGlobal``: a key is unique in the whole table, not per partition, so its
                          records are tagged against every partition's files, and a key written with another
                          partition moves there
    places_by_hash        the file group follows from the key alone (Hudi's bucket index): placing a record needs
                          no lookup of stored keys and no other record, so any slice of a batch is placed alike,
                          with no shuffle
    requires_tagging(op)  ``HoodieIndex.requiresTagging``: the operation's records are placed by the index
    join_keys             the columns that identify a key's records: the record key, and its partition unless the
                          index is global
    routes_by_key         a key's lookup reads one file known from the key alone (the record index's file group):
                          a distributed engine finds each key's lookup task as it keys the records
                          (``lookup_task_of``), or Spark does before keying them when the key is one field's
                          value (``spark.lookup_routing``), with no candidates step
    tags_records          the keys are looked up in a store outside the table (HBase), by ``tag`` in the task that
                          holds the records, as Hudi's ``HoodieIndex.isImplicitWithStorage`` false says: no
                          candidates step, no shuffle
    tracks_written_keys   the index learns the keys each file added after the data files are written and before
                          the commit completes (``update_location``, Hudi's ``updateLocation``), and forgets the
                          keys the commit removed once it completed (``forget_removed``), from the write stats,
                          which then carry them; a rollback undoes the first (``rollback_commit``)

and does (``Index``):

    file_ranges(storage, slices)  what it reads of the latest file slices it may place records in
    scope(table, ...)             what one write's tagging needs besides its records and files (``TagScope``)
    tag(records, files, scope)    every record's file group (null: a new key), for records that hold every record
                                  of their keys (a task that owns its partitions, the local engine)

A location is the file group the index names, not a proof that it holds the key: a bucket index names the
bucket's group whatever it holds, and a bloom filter's claim goes unchecked where only one file makes it. A reader
of records by key (``read.key_lookup``) reads the groups named and keeps what they hold.

An index that looks keys up (not ``places_by_hash``: ``lookup_index.LookupIndex``, ``record_index.RecordIndex``)
also has the two steps a distributed engine runs apart, and says how many tasks the second takes:

    candidates(records, files)     thin (key, partition, file to read) rows per batch (``CANDIDATE_SCHEMA``)
    lookup_tasks(files)            the tasks the candidates are shuffled to by ``LOOKUP_FILE_COLUMN``
    confirm(cands, files, scope)   the exact locations among a task's candidates, each file read once
An index that ``routes_by_key`` has, in place of ``candidates`` and ``confirm``:
    lookup_task_of(keys)           the task, of ``lookup_tasks``, that tags the records of each key

A write's index is made from its options, then bound to the table as the write starts (``for_table``): the
record index reads the table's metadata table, or falls back to another index while it has none ready.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.config.write_config import IndexConfig
from hoodie_datasource.config.write_operation import WriteOperation
from hoodie_datasource.index.key_ranges import FileKeyRange
from hoodie_datasource.index.log_deletes import LogDeletes
from hoodie_datasource.index.lookup import IndexCounts
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.meta_columns import (
    FILE_ID_COLUMN,
    LOCATION_PARTITION_COLUMN,
    PARTITION_PATH_COLUMN,
    RECORD_KEY_COLUMN,
)
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.commit_metadata import WriteStat
from hoodie_datasource.timeline.timeline import Timeline

# the columns tagging adds: the file group holding the record's key, and that group's partition (which differs
# from the record's own when a global index finds the key elsewhere)
LOCATION_COLUMNS = (FILE_ID_COLUMN, LOCATION_PARTITION_COLUMN)
# a key, its partition (null under a global index that was not told it) and the file group the index names for it
LOCATION_SCHEMA = pa.schema(
    [(RECORD_KEY_COLUMN, pa.string()), (PARTITION_PATH_COLUMN, pa.string()), (FILE_ID_COLUMN, pa.string()),
     (LOCATION_PARTITION_COLUMN, pa.string())]
)

# what a lookup's confirming task reads for a candidate: a base file, or a record-index file group
LOOKUP_FILE_COLUMN = "_hoodie_lookup_file"
CANDIDATE_SCHEMA = pa.schema(
    [(RECORD_KEY_COLUMN, pa.string()), (PARTITION_PATH_COLUMN, pa.string()), (FILE_ID_COLUMN, pa.string()),
     (LOCATION_PARTITION_COLUMN, pa.string()), (LOOKUP_FILE_COLUMN, pa.string())]
)


def unlocated(records: pa.Table) -> pa.Table:
    """``records`` with no location: every key new to the table."""
    nulls = pa.nulls(records.num_rows, pa.string())
    return records.append_column(FILE_ID_COLUMN, nulls).append_column(LOCATION_PARTITION_COLUMN, nulls)


def located(tagged: pa.Table) -> pa.Table:
    """The rows of ``tagged`` (``Index.tag``'s) whose key the index names an existing file group for, as
    ``LOCATION_SCHEMA`` rows: a record a bucket index sends to a new group of its bucket has no location."""
    return tagged.filter(pc.is_valid(tagged.column(LOCATION_PARTITION_COLUMN))).select(LOCATION_SCHEMA.names)


@dataclass(frozen=True)
class TagScope:
    """What one write's tagging needs besides its records and the files (picklable: it travels to Spark tasks)."""

    storage: Storage
    instant: str  # the write's: a new file group an index places records in is named after it
    overwrite: bool = False  # the operation replaces the file groups it writes: none of theirs is a location
    log_deletes: LogDeletes | None = None  # a global index on a merge-on-read table: keys a slice's logs deleted


@dataclass(frozen=True)
class Index(ABC):
    """A write's index (Hudi's ``HoodieIndex``): its capabilities are its class's, its options ``config``."""

    config: IndexConfig
    is_global: ClassVar[bool] = False
    places_by_hash: ClassVar[bool] = False
    routes_by_key: ClassVar[bool] = False
    tags_records: ClassVar[bool] = False
    tracks_written_keys: ClassVar[bool] = False

    @property
    def join_keys(self) -> tuple[str, ...]:
        """What identifies a key's records (Hudi's ``HoodieKey`` as the index matches it): the record key, and its
        partition unless the index is global."""
        return (RECORD_KEY_COLUMN,) if self.is_global else (RECORD_KEY_COLUMN, PARTITION_PATH_COLUMN)

    def for_table(self, table: Table) -> Index:
        """This index bound to ``table`` as a write or lookup starts (itself: most indexes read the table's files
        when they tag)."""
        return self

    def requires_tagging(self, operation: WriteOperation) -> bool:
        """Hudi's default: updates and deletes are tagged; inserts, bulk inserts and overwrites are not."""
        return operation.needs_tagging

    @abstractmethod
    def file_ranges(self, storage: Storage, slices: Sequence[FileSlice]) -> list[FileKeyRange]:
        """The latest slices, as the index needs them (a merge-on-read slice of log files only included)."""

    def scope(self, table: Table, instant: str, operation: WriteOperation, data: pa.Schema) -> TagScope:
        """What tagging the records of a write of ``operation`` at ``instant`` into ``table`` (as the write started)
        needs; ``data``: the write's data schema."""
        return TagScope(table.storage, instant, operation.replaces_file_groups)

    @abstractmethod
    def tag(self, records: pa.Table, files: Sequence[FileKeyRange], scope: TagScope
            ) -> tuple[pa.Table, IndexCounts | None]:
        """Keyed ``records`` with their location columns (``LOCATION_COLUMNS``), and the index work it took (None:
        nothing was looked up). ``records`` hold every record of their keys; ``files``: those of ``file_ranges``
        of the latest slices of the records' partitions (of every partition: a global index)."""

    def check_lookup_files(self, files: Sequence[FileKeyRange]) -> None:
        """Refuse, before a key is looked up, ``files`` (``file_ranges``') the index cannot look keys up in (none
        here: every other index locates keys in any slice)."""
        return None

    def check_table(self, timeline: Timeline) -> None:
        """Refuse, before anything is written, a write the table's history says the index cannot do (none here)."""
        return None

    def update_location(self, stats: Sequence[WriteStat], instant: str) -> None:
        """Record where the commit at ``instant`` put its keys, before it completes (Hudi's ``updateLocation``):
        nothing for an index kept with the table's files."""
        return None

    def forget_removed(self, stats: Sequence[WriteStat], instant: str) -> None:
        """After the commit at ``instant`` completed: drop the keys it removed (nothing here)."""
        return None

    def rollback_commit(self, instant: str) -> None:
        """Undo ``update_location`` of the instant being rolled back (Hudi's ``rollbackCommit``): nothing here."""
        return None

    def commit_metadata(self) -> dict[str, str]:
        """What a write's commit records of the index in its ``extraMetadata``."""
        return {}
