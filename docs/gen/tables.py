"""The small real tables the concept diagrams are drawn from, written by the library itself (its local
engine and ``HoodieTable``'s services, no Spark), so a diagram shows what the code does today.

Instant times and file ids differ at every run; the diagrams name them t1, t2, ... and A, B, ... in the
order they appear, so the rendered files only change when the library's behaviour does."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.instant import Instant

SCHEMA = pa.schema([("uuid", pa.string()), ("ts", pa.int64()), ("city", pa.string()), ("fare", pa.float64())])
# no service runs unless asked, so each instant on the diagrams is one step below
OPTIONS = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "uuid",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.clean.automatic": "false",
           "hoodie.archive.automatic": "false"}


def _rows(*rows: tuple[str, int, str, float]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(SCHEMA.names, r)) for r in rows], schema=SCHEMA)


def _write(path: str, data: pa.Table, operation: str, **options: str) -> str:
    return write_local(path, data, {**OPTIONS, **options, "hoodie.datasource.write.operation": operation})


@dataclass(frozen=True)
class Version:
    """One file of a file group: a base file or a log file, the instant that wrote it, its row count."""

    group: str
    kind: str  # base | log
    instant: str
    slice_instant: str
    rows: int


@dataclass(frozen=True)
class TableFacts:
    instants: tuple[Instant, ...]
    versions: tuple[Version, ...]
    latest_slices: tuple[tuple[str, str, tuple[str, ...]], ...]  # (group, base instant, log-writing instants)
    compactions: frozenset[str]  # instants that are compactions (a completed one is a commit on the timeline)


def _log_writers(table: HoodieTable) -> dict[str, str]:
    """Log file name -> the deltacommit that wrote it (layout 1 names a log after its slice, not its writer)."""
    timeline = table.timeline()
    found = {}
    for instant in timeline.completed():
        for stats in (timeline.read_metadata(instant).get("partitionToWriteStats") or {}).values():
            for stat in stats or ():
                found[stat["path"].rsplit("/", 1)[-1]] = instant.timestamp
    return found


def facts(path: str) -> TableFacts:
    table = HoodieTable(path)
    timeline = table.timeline()
    view = Table.load(path).fs_view
    writers = _log_writers(table)
    versions = []
    for group in view.file_groups():
        name = f"{group.partition_path}/{group.file_id}" if group.partition_path else group.file_id
        for base in group.base_files:
            rows = pq.read_metadata(f"{path}/{group.partition_path}/{base.name}").num_rows
            versions.append(Version(name, "base", base.instant_time, base.instant_time, rows))
        for log in group.log_files:
            versions.append(Version(name, "log", writers[log.name], log.instant_time, 0))
    latest = tuple((f"{s.partition_path}/{s.file_id}" if s.partition_path else s.file_id, s.base_instant,
                    tuple(writers[log.name] for log in s.log_files)) for s in view.latest_file_slices())
    return TableFacts(timeline.instants, tuple(sorted(versions, key=lambda v: (v.group, v.instant))), latest,
                      frozenset(i.timestamp for i in timeline.instants if timeline.is_compaction(i)))


def cow_table(path: str) -> tuple[TableFacts, tuple[str, str]]:
    """A COPY_ON_WRITE table of two partitions and three commits, and the incremental range (t1, t2]."""
    options = {"hoodie.datasource.write.partitionpath.field": "city"}
    t1 = _write(path, _rows(("a", 1, "sf", 10.0), ("b", 1, "sf", 11.0), ("c", 1, "nyc", 12.0)), "insert", **options)
    t2 = _write(path, _rows(("a", 2, "sf", 20.0)), "upsert", **options)
    _write(path, _rows(("c", 3, "nyc", 30.0), ("d", 3, "sf", 31.0)), "upsert", **options)
    return facts(path), (t1, t2)


def mor_table(path: str) -> tuple[TableFacts, TableFacts]:
    """A MERGE_ON_READ table of one file group: an insert, two updates into logs, a compaction, one more
    update into the new slice (the file group's facts then), a clean that keeps one commit, another update
    and a compaction scheduled but not run (the timeline's facts at the end)."""
    options = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    _write(path, _rows(("a", 1, "sf", 10.0), ("b", 1, "sf", 11.0)), "insert", **options)
    _write(path, _rows(("a", 2, "sf", 20.0)), "upsert", **options)
    _write(path, _rows(("b", 3, "sf", 30.0)), "upsert", **options)
    table = HoodieTable(path)
    table.compact()
    _write(path, _rows(("a", 4, "sf", 40.0)), "upsert", **options)
    before_clean = facts(path)
    table.clean(**{"hoodie.cleaner.commits.retained": "1"})
    _write(path, _rows(("b", 5, "sf", 50.0)), "upsert", **options)
    table.schedule_compaction()
    return before_clean, facts(path)
