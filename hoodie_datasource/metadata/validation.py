"""The metadata table's listing of the data table checked against a listing of storage, file by file with sizes
(Hudi's ``ValidateMetadataTableFilesProcedure``, 0.15).

Both sides as Hudi lists them: the metadata table's partitions and each one's files (``MetadataTableReader``), and
storage's partitions (folders holding a partition metafile) and each one's data files
(``FSUtils.getAllDataFilesInPartition``: a name ending in a base-file format's extension, or holding ``.log``),
committed or not. So the files of a write in flight, or of a failed one not yet rolled back, show as in storage
only, as they do in Hudi's; a quiescent table's listing matches storage's exactly. Storage is listed once, with
one listing of the whole table (``list_table_files``).
"""

from __future__ import annotations

from dataclasses import dataclass

from hoodie_datasource.metadata.reader import MetadataTableReader
from hoodie_datasource.table.fs_view import list_table_files, partitions_of
from hoodie_datasource.table.table import Table

# HoodieFileFormat's extensions (PARQUET, HOODIE_LOG, HFILE, ORC), and a log file's marker in its name
_DATA_EXTENSIONS = frozenset((".parquet", ".log", ".hfile", ".orc"))
_LOG_MARKER = ".log"
_HADOOP_CHECKSUM = ".crc"


@dataclass(frozen=True)
class FileListingDifference:
    """One file of a partition as the metadata table and storage list it (a size 0 where it is not listed), a
    row of ``validate_metadata_table_files``."""

    partition: str
    file_name: str
    in_storage: bool
    in_metadata: bool
    storage_size: int
    metadata_size: int

    @property
    def matches(self) -> bool:
        """Listed on both sides, with one size."""
        return self.in_storage and self.in_metadata and self.storage_size == self.metadata_size


def is_data_file(name: str) -> bool:
    """Whether storage's listing counts ``name`` as a data file (``FSUtils.getAllDataFilesInPartition``). The
    ``.<file>.crc`` checksum Hadoop's local file system writes beside each file of Java Hudi's (``..<log>.crc``
    beside a log file holds ``.log.``) never is: that file system hides them from every listing
    (``ChecksumFileSystem``)."""
    if name.startswith(".") and name.endswith(_HADOOP_CHECKSUM):
        return False
    dot = name.rfind(".")
    return (dot >= 0 and name[dot:] in _DATA_EXTENSIONS) or _LOG_MARKER in name


def storage_listing(table: Table) -> dict[str, dict[str, int]]:
    """Every partition of the table in storage (``""``: the non-partitioned table's) and its data files, name ->
    size, from one listing."""
    by_dir = list_table_files(table.storage)
    partitions = partitions_of(by_dir) if table.config.is_partitioned else [""]
    return {p: {f.name: f.size for f in by_dir.get(p, ()) if is_data_file(f.name)} for p in partitions}


def compare_file_listings(table: Table, reader: MetadataTableReader, verbose: bool = False,
                          in_storage: dict[str, dict[str, int]] | None = None) -> list[FileListingDifference]:
    """Every file of every partition either side lists whose listing differs (``verbose``: every file), sorted
    by partition and name. ``in_storage``: ``storage_listing(table)`` when the caller has it already."""
    in_storage = storage_listing(table) if in_storage is None else in_storage
    metadata_partitions = reader.all_partitions()
    in_metadata = reader.partition_files(metadata_partitions)
    rows = []
    for partition in sorted(set(in_storage) | set(metadata_partitions)):
        stored, listed = in_storage.get(partition, {}), in_metadata.get(partition, {})
        for name in sorted(set(stored) | set(listed)):
            row = FileListingDifference(partition, name, name in stored, name in listed, stored.get(name, 0),
                                        listed.get(name, 0))
            if verbose or not row.matches:
                rows.append(row)
    return rows
