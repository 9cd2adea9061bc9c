"""``Table``: the handle every path takes, one table as one listing of its timeline showed it.

It holds the table's storage, its config (``hoodie.properties``) and its timeline; the file-system view
and the schema are made from them when first asked for, once. ``Table.load`` reads ``hoodie.properties``
once and lists the timeline once; ``refresh()`` lists the timeline again (where an operation must see what
others did since: under the table lock, before a commit point). Immutable, as hudi-rs's ``Table``
(``crates/core/src/table/mod.rs``), pyiceberg's ``Table`` and delta-rs's snapshots are: what changes the
table returns a new one (``with_instant``, ``refresh``).

A ``Table`` travels to Spark tasks pickled, with the instant files its timeline decoded (a task's
file-system view asks about the same ones) but not the file-system view or the schema made from it: a task
lists what it needs itself, or is handed the driver's listing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pyarrow as pa

from hoodie_datasource.config.table_config import TableConfig, load_table_config
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.storage.storage import FileInfo, Storage
from hoodie_datasource.table.file_listing import FileListing
from hoodie_datasource.table.fs_view import FileSystemView, list_table_files
from hoodie_datasource.table.table_schema import read_schema, table_data_schema
from hoodie_datasource.timeline.instant import Instant
from hoodie_datasource.timeline.timeline import Timeline

_MADE_WHEN_ASKED = ("fs_view", "data_schema", "schema", "file_listing")  # the cached properties, which never travel
ListingSource = Callable[["Table"], FileListing | None]


@dataclass(frozen=True)
class Table:
    storage: Storage
    config: TableConfig
    timeline: Timeline
    # the instant a reader sees the table as of (its schema and file slices then); None: the latest. The
    # timeline stays whole: a clean after it tells whether the files of then are still there
    as_of_instant: str | None = None
    # where file-system views take the table's files from instead of listing storage (Apache Hudi's metadata
    # table: metadata.reader), made from the table when first asked for; None, or a source that gives None: list
    listing: ListingSource | None = field(default=None, compare=False)

    @staticmethod
    def load(table: str | Storage, options: Mapping[str, str] | None = None, config: TableConfig | None = None,
             listing: ListingSource | None = None) -> Table:
        """The table at ``table`` (a URI, opened with the ``hoodie.storage.*`` keys of ``options``, or its
        storage): one read of ``hoodie.properties`` (none when the caller has just read or written it:
        ``config``), one listing of the timeline. ``listing`` makes where its files come from."""
        storage = open_storage(table, options or {}) if isinstance(table, str) else table
        config = config or load_table_config(storage)
        return Table(storage, config, Timeline.load(storage, config), listing=listing)

    def refresh(self) -> Table:
        """The table as its timeline is now: one listing (``hoodie.properties`` is not read again)."""
        return Table(self.storage, self.config, Timeline.load(self.storage, self.config), self.as_of_instant,
                     self.listing)

    @cached_property
    def file_listing(self) -> FileListing | None:
        """Where this table's files come from, when not from a listing of storage."""
        return self.listing(self) if self.listing is not None else None

    def with_instant(self, instant: Instant) -> Table:
        """The table with ``instant`` on its timeline, in place of the instant of its time (a writer's own
        requested instant, or the instant it just completed), without listing the timeline again."""
        return Table(self.storage, self.config, self.timeline.with_instant(instant), self.as_of_instant, self.listing)

    def as_of(self, instant_time: str | None) -> Table:
        """The table as a reader at ``instant_time`` sees it (None: the latest)."""
        return self if instant_time == self.as_of_instant else dataclasses.replace(self, as_of_instant=instant_time)

    @property
    def uri(self) -> str:
        """The table's base URI, as its storage spells it."""
        return self.storage.uri

    @cached_property
    def fs_view(self) -> FileSystemView:
        """The file groups of the whole table, listed once (the first time it is asked for)."""
        return self.file_system_view()

    def listed_files(self, partitions: Sequence[str] | None = None) -> Mapping[str, Sequence[FileInfo]]:
        """The files of ``partitions`` (every partition when None), their paths relative to the table, by
        partition: from ``file_listing`` when there is one (no LIST of a data partition), else from storage (one
        walk of the whole table, or one listing per partition asked for). A walk holds every directory of the
        table, those that are no partition too (``fs_view.partitions_of`` tells them apart)."""
        if self.file_listing is not None:
            wanted = self.file_listing.partition_paths() if partitions is None else partitions
            return self.file_listing.partition_file_infos(wanted)
        if partitions is None:
            return list_table_files(self.storage)
        return {p: self.storage.list_dir(p).files for p in partitions}

    def file_system_view(self, partitions: list[str] | None = None,
                         listed: Mapping[str, Sequence[FileInfo]] | None = None) -> FileSystemView:
        """A new file-system view: of the whole table, or of ``partitions`` only (taken from ``listed``, the
        table's files by directory, when given; else from ``file_listing``, when there is one)."""
        if listed is None and self.file_listing is not None:
            partitions = self.file_listing.partition_paths() if partitions is None else partitions
            listed = self.file_listing.partition_file_infos(partitions)
        return FileSystemView(self.storage, self.config, self.timeline, partitions, listed)

    @cached_property
    def data_schema(self) -> pa.Schema | None:
        """The data columns as of ``as_of_instant`` (``table_schema.table_data_schema``); None before any."""
        return table_data_schema(self.storage, self.config, self.timeline, self.as_of_instant)

    @cached_property
    def schema(self) -> pa.Schema:
        """What a reader reads: the meta columns (when the table has them) and the data columns."""
        return read_schema(self.config, self.data_schema)

    def __getstate__(self) -> dict[str, Any]:
        return {name: value for name, value in self.__dict__.items() if name not in _MADE_WHEN_ASKED}
