"""Commit metadata (HoodieCommitMetadata / HoodieWriteStat) as Hudi 0.14/0.15 writes it: JSON.

Readers (Java's TableSchemaResolver, hudi-rs) take the table schema from ``extraMetadata.schema``
and find the files an instant wrote in ``partitionToWriteStats``; Java sizes small files from
``numWrites`` and ``fileSizeInBytes``. Field order follows real v6 commit files.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import pyarrow as pa


@dataclass
class WriteStat:
    """One file written by an instant (HoodieWriteStat; delta fields only for log writes)."""

    fileId: str
    path: str | None
    partitionPath: str
    prevCommit: str = "null"
    numWrites: int = 0
    numDeletes: int = 0
    numUpdateWrites: int = 0
    numInserts: int = 0
    totalWriteBytes: int = 0
    fileSizeInBytes: int = 0
    totalLogRecords: int = 0
    totalLogBlocks: int = 0
    totalCorruptLogBlock: int = 0
    totalRollbackBlocks: int = 0
    totalLogFilesCompacted: int = 0
    totalLogSizeCompacted: int = 0
    totalUpdatedRecordsCompacted: int = 0
    minEventTime: int | None = None
    maxEventTime: int | None = None
    runtimeStats: dict[str, int] | None = None
    cdcStats: dict[str, int] | None = None  # CDC log files written with the base file: path -> bytes
    # delta (log) write fields
    logVersion: int | None = None
    logOffset: int | None = None
    baseFile: str | None = None
    logFiles: list[str] | None = None
    # what the metadata table's index partitions take from the file, carried from the task that wrote it to the
    # commit and never written into the commit's JSON: the record keys it added and removed (``key``,
    # ``deleted``) for the record index, its column statistics (``write.column_stats``), its bloom filter as
    # its footer holds it (serialized) and the filter's type code
    record_keys: pa.Table | None = field(default=None, compare=False, repr=False)
    column_stats: pa.Table | None = field(default=None, compare=False, repr=False)
    bloom_filter: str | None = field(default=None, compare=False, repr=False)
    bloom_filter_type: str | None = field(default=None, compare=False, repr=False)

    def to_json_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "fileId": self.fileId,
            "path": self.path,
            "cdcStats": self.cdcStats,
            "prevCommit": self.prevCommit,
            "numWrites": self.numWrites,
            "numDeletes": self.numDeletes,
            "numUpdateWrites": self.numUpdateWrites,
            "numInserts": self.numInserts,
            "totalWriteBytes": self.totalWriteBytes,
            "totalWriteErrors": 0,
            "tempPath": None,
            "partitionPath": self.partitionPath,
            "totalLogRecords": self.totalLogRecords,
            "totalLogFilesCompacted": self.totalLogFilesCompacted,
            "totalLogSizeCompacted": self.totalLogSizeCompacted,
            "totalUpdatedRecordsCompacted": self.totalUpdatedRecordsCompacted,
            "totalLogBlocks": self.totalLogBlocks,
            "totalCorruptLogBlock": self.totalCorruptLogBlock,
            "totalRollbackBlocks": self.totalRollbackBlocks,
            "fileSizeInBytes": self.fileSizeInBytes,
            "minEventTime": self.minEventTime,
            "maxEventTime": self.maxEventTime,
            "runtimeStats": self.runtimeStats,
        }
        if self.logFiles is not None:
            out.update(
                logVersion=self.logVersion,
                logOffset=self.logOffset,
                baseFile=self.baseFile,
                logFiles=self.logFiles,
                recordsStats=None,
            )
        return out

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> WriteStat:
        """The stat ``as_dict`` made (a task's, sent to the driver as JSON), or a commit's decoded stat."""
        known = {f for f in WriteStat.__dataclass_fields__}
        stat = WriteStat(**{k: v for k, v in data.items() if k in known and k not in _ARROW_FIELDS})
        for name in _ARROW_FIELDS:
            if data.get(name) is not None:
                setattr(stat, name, pa.ipc.open_stream(base64.b64decode(data[name])).read_all())
        return stat

    def as_dict(self) -> dict[str, Any]:
        """Every field, JSON-ready (an Arrow table as a base64 IPC stream), for ``from_dict``."""
        out = asdict(_without_arrow(self))
        for name in _ARROW_FIELDS:
            table = getattr(self, name)
            if table is not None:
                sink = pa.BufferOutputStream()
                with pa.ipc.new_stream(sink, table.schema) as writer:
                    writer.write_table(table)
                out[name] = base64.b64encode(sink.getvalue().to_pybytes()).decode("ascii")
        return out


_ARROW_FIELDS = ("record_keys", "column_stats")  # the Arrow fields a task carries to the driver


def _without_arrow(stat: WriteStat) -> WriteStat:
    """``stat`` without its Arrow fields (which ``asdict`` cannot copy)."""
    return WriteStat(**{f.name: getattr(stat, f.name) for f in fields(stat) if f.name not in _ARROW_FIELDS})


@dataclass
class CommitMetadata:
    operation_type: str
    write_stats: list[WriteStat] = field(default_factory=list)
    extra_metadata: dict[str, str] = field(default_factory=dict)
    compacted: bool = False
    replaced_file_ids: dict[str, list[str]] | None = None  # replacecommit only

    def partition_to_write_stats(self) -> dict[str, list[dict[str, Any]]]:
        grouped: dict[str, list[dict[str, Any]]] = {}
        for stat in self.write_stats:
            grouped.setdefault(stat.partitionPath, []).append(stat.to_json_dict())
        return grouped

    def to_json(self) -> bytes:
        body: dict[str, Any] = {"partitionToWriteStats": self.partition_to_write_stats()}
        if self.replaced_file_ids is not None:
            body["partitionToReplaceFileIds"] = self.replaced_file_ids
        body["compacted"] = self.compacted
        body["extraMetadata"] = self.extra_metadata
        body["operationType"] = self.operation_type
        return json.dumps(body, indent=2, separators=(",", " : ")).encode()


def write_stats_of(metadata: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    """Every write stat in decoded commit metadata (JSON or Avro alike)."""
    for stats in (metadata.get("partitionToWriteStats") or {}).values():
        yield from stats or ()
