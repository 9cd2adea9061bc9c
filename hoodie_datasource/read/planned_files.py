"""A read plan as a list of files, for readers that read parquet themselves (the jvm-shim hands base
files to Spark's parquet reader).

One entry per file slice the plan reads. A slice is ``native`` when its base file alone holds its rows
in the table's schema, so any parquet reader reading that file for the table's columns (by name;
absent columns as nulls) returns exactly what our reader returns, given the plan's commit-time range
for incremental pulls (``begin`` exclusive, ``instant`` inclusive). That needs a slice without log
blocks to merge (copy-on-write, read-optimized, a merge-on-read slice without log files) whose file
stores every table column it has with the table's type: our reader casts other types (a column
widened since, a partition column Hudi's time-based key generator stores as a number), which another
reader may not. The other slices are left to our reader, pinned to ``instant`` and restricted to their
file groups, so the two parts never overlap and show the same commits.

A slice with log files to merge is ``changes`` when its base file stores the table's columns as they are
and the table has the record key and partition path meta columns: a parquet reader then reads its base
file less the rows (by file name and row index) the logs replace, and our reader adds the log
records that win (``file_group.merged_reader.log_changes``), so only the slice's log records and the base
file's key and ordering columns pass through Python.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

import pyarrow as pa

from hoodie_datasource.read.planner import ReadPlan
from hoodie_datasource.storage.parquet import read_parquet_schema
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.meta_columns import PARTITION_PATH_COLUMN, RECORD_KEY_COLUMN

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PlannedFile:
    group: str  # the file group: partition path / file id
    path: str | None  # the base file's full URI (a plain absolute path locally); None for a slice of log files only
    size: int  # bytes: of the base file when native or changes, else of the whole slice
    native: bool
    changes: bool = False  # the base file less the rows the log changes replace, plus the log rows that win


@dataclass(frozen=True)
class PlannedFiles:
    instant: str | None  # the newest completed write the plan shows
    begin: str | None  # incremental pulls: rows with _hoodie_commit_time > begin (and <= instant)
    files: tuple[PlannedFile, ...]
    commits: frozenset[str] | None = None  # incremental pulls by completion time: rows of these commit times


@functools.lru_cache(maxsize=4096)
def _file_schema(storage: Storage, rel: str, size: int) -> pa.Schema:
    return read_parquet_schema(storage, rel, size)  # base files never change once written


def stores_as_is(file_schema: pa.Schema, schema: pa.Schema) -> bool:
    """Every column of ``schema`` the file has is stored with exactly its type (and none under a name
    that matches only ignoring case, which a case-insensitive reader would take)."""
    stored = {f.name: f.type for f in file_schema}
    by_lower = {name.lower() for name in stored}
    return all(
        stored[field.name] == field.type if field.name in stored else field.name.lower() not in by_lower
        for field in schema
    )


def _native_instants(plan: ReadPlan, slices: list[FileSlice]) -> set[str]:
    """The base-file instants whose files store the table's columns as they are. One writer writes all
    the base files of a commit with one schema, so one footer per commit tells."""
    first_file: dict[str, tuple[str, int]] = {}
    for s in slices:
        if s.base_file is not None:
            first_file.setdefault(s.base_file.instant_time, (s.relative_path(s.base_file.name), s.base_file.size))
    return {instant for instant, (rel, size) in first_file.items()
            if stores_as_is(_file_schema(plan.storage, rel, size), plan.schema)}


def planned_files(plan: ReadPlan) -> PlannedFiles:
    slices = [s for s in plan.slices if s.base_file is not None or plan.needs_merge(s)]
    as_is = _native_instants(plan, slices)
    keyed = {RECORD_KEY_COLUMN, PARTITION_PATH_COLUMN} <= set(plan.schema.names)
    files = []
    for s in slices:
        readable = s.base_file is not None and s.base_file.instant_time in as_is
        native = readable and not plan.needs_merge(s)
        changes = readable and keyed and plan.needs_merge(s)
        path = plan.storage.uri_of(s.base_relative_path) if s.base_relative_path else None
        size = s.base_file.size if (native or changes) and s.base_file else s.total_size
        files.append(PlannedFile(s.group, path, size, native, changes))
    logger.info("Planned %d file slices: %d base files read as they are, %d less their log changes", len(files),
                sum(f.native for f in files), sum(f.changes for f in files))
    filtered = plan.commit_filter() is not None
    begin = plan.commit_range[0] if plan.commit_range and filtered else None
    return PlannedFiles(plan.instant, begin, tuple(files), plan.commit_times if filtered else None)
