"""One shared table as the protocol serves it: its versions, its schema, the files of a version, the change files
of a range of versions.

A request works on one ``TableState``: one listing of the timeline, from which every answer of that request is
made, so a table written while it is read is served at one version. The state is kept while the timeline lists
the same instants, so repeated queries of an unchanged table list nothing more and read no footer twice.

Files of a version (``snapshot``): its file slices as a snapshot read as of that version plans them
(``read.planner``: the read window refuses a version whose files the cleaner removed). A slice with a base file
only is served as it is; a merge-on-read slice with log files is merged (``read.file_reader``) into plain parquet
of the data columns, made once per slice version in the table's ``FileCache``: the key is the file group, its
files, and the latest write up to the version that touched the group, so versions that left a group alone share
its file. Change files (``changes``): a version's CDC query (``read.cdc_reader``) as rows with ``_change_type``
(``change_rows``), made once per version.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import pyarrow as pa

from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.metadata.reader import planning_from_metadata
from hoodie_datasource.read.cdc_reader import read_cdc
from hoodie_datasource.read.cdc_splits import DATA_CHANGE_OPERATIONS
from hoodie_datasource.read.file_reader import read_file_slice
from hoodie_datasource.read.planner import ReadPlan, plan_read
from hoodie_datasource.sharing.change_rows import change_rows, partition_parts, rows_of_part
from hoodie_datasource.sharing.config import SharedTable
from hoodie_datasource.sharing.file_cache import FileCache
from hoodie_datasource.sharing.file_stats import FooterStats
from hoodie_datasource.sharing.partitions import partition_columns, partition_values
from hoodie_datasource.sharing.protocol import FileEntry
from hoodie_datasource.sharing.versions import TableVersions
from hoodie_datasource.storage.parquet import read_parquet
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.meta_columns import META_COLUMNS
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.commit_metadata import write_stats_of
from hoodie_datasource.timeline.instant import Instant

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class _MergedSlice:
    """A merge-on-read slice served merged: its cache key and how to make it."""

    key: str
    make: Callable[[], pa.Table]
    group: str
    latest: bool
    partition_values: dict[str, str]


@dataclass(frozen=True)
class TableState:
    table: Table
    versions: TableVersions
    # the planned files of each version asked for, kept while the timeline lists the same instants
    planned: dict[int, list[FileEntry | _MergedSlice]] = field(default_factory=dict, compare=False, repr=False)

    schemas: dict[int, pa.Schema] = field(default_factory=dict, compare=False, repr=False)

    def changes_data(self, version: int) -> bool:
        """Whether ``version``'s write changed rows (Hudi's ``WriteOperationType.isDataChange``): a compaction or a
        clustering rewrites files, not rows, as a Delta ``OPTIMIZE`` (``dataChange=false``) does. A write that
        names no operation counts as changing rows."""
        instant = self.table.timeline.find(self.versions.instant(version))
        operation = str(self.table.timeline.read_metadata(instant).get("operationType") or "").upper()
        return not operation or operation in DATA_CHANGE_OPERATIONS

    def data_schema(self, version: int) -> pa.Schema:
        """The data columns (no ``_hoodie_*`` meta column) as of ``version``."""
        if version not in self.schemas:
            schema = self.table.as_of(self.versions.instant(version)).data_schema or pa.schema([])
            self.schemas[version] = pa.schema([f for f in schema if f.name not in META_COLUMNS])
        return self.schemas[version]


class TableService:
    def __init__(self, shared: SharedTable, stats: FooterStats, cache_max_bytes: int, grace_ms: int) -> None:
        self.shared = shared
        self.storage = open_storage(shared.location, dict(shared.storage_options))
        self.cache = FileCache(self.storage, cache_max_bytes, grace_ms)
        self._stats = stats
        self._state: TableState | None = None
        self._groups: dict[str, frozenset[str]] = {}  # write instant -> the file groups it touched
        self._lock = threading.Lock()

    def state(self) -> TableState:
        """The table as its timeline lists now (the kept state, when it lists the same instants)."""
        table = planning_from_metadata(Table.load(self.storage))
        with self._lock:
            if self._state is not None and self._state.table.timeline.instants == table.timeline.instants:
                return self._state
            self._state = TableState(table, TableVersions.of(table))
            return self._state

    def _groups_of(self, state: TableState, instant: Instant) -> frozenset[str]:
        """The file groups a write touched (its commit metadata's write stats), read once per process."""
        with self._lock:
            found = self._groups.get(instant.timestamp)
        if found is None:
            found = frozenset(f"{s.get('partitionPath')}/{s['fileId']}" if s.get("partitionPath") else s["fileId"]
                              for s in write_stats_of(state.table.timeline.read_metadata(instant)) if s.get("fileId"))
            with self._lock:
                self._groups[instant.timestamp] = found
        return found

    def _latest_touch(self, state: TableState, group: str, upto: str) -> str:
        """The latest write up to ``upto`` that touched ``group``, among the writes the state's timeline holds
        completed (a write rolled back since touches nothing)."""
        touches = [i.timestamp for i in state.table.timeline.completed_writes_upto(upto)
                   if group in self._groups_of(state, i)]
        return touches[-1] if touches else ""

    def snapshot(self, state: TableState, version: int) -> list[FileEntry]:
        """The files of the table as of ``version``: planned once per state, merged slices looked up (and made
        again, if the cache dropped them) at each call, which marks them served."""
        planned = state.planned.get(version)
        if planned is None:
            planned = state.planned.setdefault(version, self._plan(state, version))
        names = frozenset(state.data_schema(version).names)
        return [p if isinstance(p, FileEntry) else self._entry(
            *self.cache.get("slices", p.key, p.make, group=p.group, latest=p.latest), p.partition_values, names)
            for p in planned]

    def _entry(self, rel: str, size: int, partition_values: dict[str, str], names: frozenset[str]) -> FileEntry:
        return FileEntry.of(self.shared.id, rel, size, partition_values, self._stats.of(self.storage, rel, size, names))

    def _plan(self, state: TableState, version: int) -> list[FileEntry | _MergedSlice]:
        instant = state.versions.instant(version)
        plan = plan_read(state.table, ReadConfig(as_of_instant=instant))
        schema = state.data_schema(version)
        columns = partition_columns(state.table.config, schema)
        names = frozenset(schema.names)
        latest = version == state.versions.latest
        planned: list[FileEntry | _MergedSlice] = []
        for file_slice in plan.slices:
            values = partition_values(state.table.config, columns, file_slice.partition_path)
            if plan.needs_merge(file_slice):
                planned.append(self._merged(state, plan, file_slice, instant, schema, latest, values))
            elif file_slice.base_file is not None:
                planned.append(self._entry(file_slice.base_relative_path, file_slice.base_file.size, values, names))
        return planned

    def _merged(self, state: TableState, plan: ReadPlan, file_slice: FileSlice, instant: str, schema: pa.Schema,
                latest: bool, values: dict[str, str]) -> _MergedSlice:
        touch = self._latest_touch(state, file_slice.group, instant)
        key = hashlib.sha256("|".join([file_slice.group, *file_slice.file_names, touch, schema.to_string()])
                             .encode()).hexdigest()[:40]

        def make() -> pa.Table:
            batches = list(read_file_slice(plan, file_slice))
            rows = pa.Table.from_batches(batches, plan.schema) if batches else plan.schema.empty_table()
            return rows.select(schema.names)

        return _MergedSlice(key, make, file_slice.group, latest, values)

    def changes(self, state: TableState, start: int, end: int) -> list[tuple[int, FileEntry]]:
        """The change files of each version in [start, end] that changed rows, with their version: one a version,
        or, for a table with partition columns, one a partition the version changed, with its partition values.
        Which partitions a version changed is kept beside its files (``<key>-parts``), so a server that finds them
        cached reads no CDC again."""
        schema = state.data_schema(state.versions.latest)
        columns = partition_columns(state.table.config, schema)
        out = []
        for version in range(start, end + 1):
            instant = state.versions.instant(version)
            begin = state.versions.instant(version - 1) if version else "0"
            key = hashlib.sha256(f"{instant}|{schema.to_string()}".encode()).hexdigest()[:40]
            rows = _Once(lambda begin=begin, instant=instant: change_rows(read_cdc(state.table, ReadConfig(
                query_type="incremental", incremental_format="cdc", begin_instant=begin, end_instant=instant)), schema))
            if columns:
                rel, _ = self.cache.get("changes", f"{key}-parts", lambda rows=rows: pa.table(
                    {"part": [json.dumps(p) for p in partition_parts(rows(), columns)]}))
                parts = [json.loads(p) for p in read_parquet(self.storage, rel).column("part").to_pylist()]
            else:
                parts = [{}]
            for part in parts:
                part_key = hashlib.sha256(f"{key}|{json.dumps(part)}".encode()).hexdigest()[:40] if part else key
                rel, size = self.cache.get("changes", part_key, lambda rows=rows, part=part: rows_of_part(rows(), part))
                stats = self._stats.of(self.storage, rel, size, frozenset())
                if json.loads(stats)["numRecords"]:
                    out.append((version, FileEntry.of(self.shared.id, rel, size, part, None)))
        return out


class _Once:
    """A value made on first call, then kept: a version's change rows, which each of its files is cut from."""

    def __init__(self, make: Callable[[], pa.Table]) -> None:
        self._make = make
        self._value: pa.Table | None = None

    def __call__(self) -> pa.Table:
        if self._value is None:
            self._value = self._make()
        return self._value
