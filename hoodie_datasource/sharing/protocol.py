"""The protocol's response lines in the parquet format (PROTOCOL.md "API Response Actions in Parquet Format"):
one JSON object per line, ``{"protocol": ...}``, ``{"metaData": ...}``, then one ``{"file": ...}`` per file of a
snapshot or one ``{"cdf": ...}`` per change file of a change feed. The server answers no capabilities header, so
clients read the parquet format (the Python client's ``autoresolve_query_format``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from hoodie_datasource.sharing.spark_schema import struct_json

NDJSON = "application/x-ndjson; charset=utf-8"
VERSION_HEADER = "Delta-Table-Version"


def line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":")) + "\n"


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


@dataclass(frozen=True)
class FileLine:
    """One file of a response: ``kind`` is ``file`` (a snapshot's), ``cdf``, ``add`` or ``remove``."""

    kind: str
    url: str
    id: str
    partition_values: dict[str, str]
    size: int
    stats: str | None
    expiration_ms: int
    version: int | None = None
    timestamp_ms: int | None = None

    def render(self) -> str:
        body: dict[str, Any] = {"url": self.url, "id": self.id, "partitionValues": self.partition_values,
                                "size": self.size, "expirationTimestamp": self.expiration_ms}
        if self.stats is not None and self.kind != "cdf":
            body["stats"] = self.stats
        if self.version is not None:
            body["version"] = self.version
        if self.timestamp_ms is not None:
            body["timestamp"] = self.timestamp_ms
        return line({self.kind: body})


def error_body(error_code: str, message: str) -> dict[str, str]:
    return {"errorCode": error_code, "message": message}
