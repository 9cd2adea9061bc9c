"""Small copy-on-write tables on local disk or S3 for the commit race and crash tests, and what those
tests compare: the rows a snapshot read returns, the data files present against those the completed
commits name."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.file_names import BaseFileName
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.commit_metadata import write_stats_of

COW = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
       "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
       "hoodie.datasource.write.operation": "upsert"}


@dataclass(frozen=True)
class Place:
    """Where a test table lives: its URI and the options that reach it."""

    uri: str
    options: dict[str, str]

    def storage(self) -> Storage:
        return open_storage(self.uri, self.options)

    def write_options(self, **extra: str) -> dict[str, str]:
        return {**COW, **self.options, **extra}


def rows(tag: str, n: int = 3, ts: int = 1) -> pa.Table:
    """``n`` rows whose keys and values name ``tag`` (a writer, a round)."""
    return pa.table({"id": [f"{tag}-{i}" for i in range(n)], "ts": [ts] * n, "p": [("x", "y")[i % 2] for i in range(n)],
                     "v": [f"{tag}:{i}" for i in range(n)]})


def snapshot(place: Place) -> list[tuple[str, str]]:
    out = read_table(place.uri, ReadConfig(), place.options)
    return sorted(zip(out.column("id").to_pylist(), out.column("v").to_pylist()))


def pairs(table: pa.Table) -> list[tuple[str, str]]:
    return sorted(zip(table.column("id").to_pylist(), table.column("v").to_pylist()))


def committed_files(storage: Storage) -> set[str]:
    """Every data file a completed write of the table names."""
    timeline = Table.load(storage).timeline
    return {s["path"] for i in timeline.completed() for s in write_stats_of(timeline.read_metadata(i)) if s.get("path")}


def data_files(storage: Storage) -> set[str]:
    """Every base or log file present under the table, by listing it."""
    return {f.path for f in storage.list_tree("") if not f.path.startswith(".hoodie")
            and (BaseFileName.parse(f.name) is not None or ".log." in f.name)}
