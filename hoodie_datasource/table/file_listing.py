"""Where a table's files come from when not from a listing of storage.

Apache Hudi's metadata table lists every partition's files (``metadata.reader.MetadataTableReader``); a table
handle given a ``FileListing`` builds its file-system views from it, with no LIST of a data partition. The
protocol lives here, below the metadata table, so the handle needs no import of what implements it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from hoodie_datasource.storage.storage import FileInfo


class FileListing(Protocol):
    def partition_paths(self) -> list[str]:
        """Every partition of the table (``""`` for the non-partitioned table's one)."""

    def partition_file_infos(self, partitions: Iterable[str]) -> dict[str, list[FileInfo]]:
        """The files of each of ``partitions``, their paths relative to the table, as a listing gives them."""
