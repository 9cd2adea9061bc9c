"""The protocol's response lines in the parquet format (PROTOCOL.md "API Response Actions in Parquet Format"):
one JSON object per line, ``{"protocol": ...}``, ``{"metaData": ...}``, then one ``{"file": ...}`` per file of a
snapshot or one ``{"cdf": ...}`` per change file of a change feed. The server answers no capabilities header, so
clients read the parquet format (the Python client's ``autoresolve_query_format``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from hoodie_datasource.sharing.spark_schema import struct_json

NDJSON = "application/x-ndjson; charset=utf-8"
VERSION_HEADER = "Delta-Table-Version"


_ENCODER = json.JSONEncoder(separators=(",", ":"))  # one encoder: json.dumps with options makes one per call


def line(obj: dict[str, Any]) -> str:
    return _ENCODER.encode(obj) + "\n"


PROTOCOL_LINE = line({"protocol": {"minReaderVersion": 1}})


def metadata_line(table_id: str, name: str, schema: pa.Schema, partition_columns: tuple[str, ...],
                  cdf: bool, version: int | None = None, size: int | None = None,
                  num_files: int | None = None) -> str:
    meta: dict[str, Any] = {
        "id": table_id, "name": name, "format": {"provider": "parquet"},
        "schemaString": json.dumps(struct_json(list(schema)), separators=(",", ":")),
        "partitionColumns": list(partition_columns),
        "configuration": {"enableChangeDataFeed": "true" if cdf else "false"},
    }
    for key, value in (("version", version), ("size", size), ("numFiles", num_files)):
        if value is not None:
            meta[key] = value
    return line({"metaData": meta})


def file_id(table_id: str, rel: str) -> str:
    """A file's stable id: a hash of its table and path (the same file, the same id, in every response)."""
    return hashlib.sha256(f"{table_id}/{rel}".encode()).hexdigest()[:32]


@dataclass(frozen=True)
class FileEntry:
    """One file of a table as responses show it, but for its URL and expiry (made per response): ``members``
    holds its ``id``, ``partitionValues``, ``size`` and ``stats`` as JSON object members, rendered once."""

    rel: str  # relative to the table
    size: int
    members: str

    @staticmethod
    def of(table_id: str, rel: str, size: int, partition_values: dict[str, str], stats: str | None) -> FileEntry:
        body: dict[str, Any] = {"id": file_id(table_id, rel), "partitionValues": partition_values, "size": size}
        if stats is not None:
            body["stats"] = stats
        return FileEntry(rel, size, _ENCODER.encode(body)[1:-1])

    def line(self, kind: str, url: str, expiration_ms: int, version: int | None = None,
             timestamp_ms: int | None = None) -> str:
        """The response line: ``kind`` is ``file`` (a snapshot's file), ``add`` or ``remove`` (a version's data
        change) or ``cdf`` (a change file)."""
        extra = "" if version is None else f',"version":{version}'
        extra += "" if timestamp_ms is None else f',"timestamp":{timestamp_ms}'
        return (f'{{"{kind}":{{"url":{_ENCODER.encode(url)},{self.members},'
                f'"expirationTimestamp":{expiration_ms}{extra}}}}}\n')


def error_body(error_code: str, message: str) -> dict[str, str]:
    return {"errorCode": error_code, "message": message}
