"""What an instant changed in the data table's files, per partition, as the metadata table records it.

From Hudi 0.15's ``HoodieTableMetadataUtil``:
- a commit, deltacommit, replacecommit or compaction (``convertMetadataToFilesPartitionRecords(HoodieCommitMetadata)``):
  every file in its write stats, with its size (a file written twice in one commit keeps the larger size: sizes only
  grow), and its CDC log files; every partition it wrote is named (the partition list record). Files replaced by a
  replacecommit stay listed until the cleaner deletes them.
- a clean (``...(HoodieCleanMetadata)``): each partition's ``deletePathPatterns``; partitions it deleted whole.
- a rollback: Hudi's undoes a deltacommit in the metadata table and records only the log files the rollback
  appended; ours deletes every file of the instant it undoes, so those files are recorded as deleted: that
  also holds where the metadata table can no longer undo the instant (compacted into a base file).
- a listing of the table, when a partition is built (``HoodieBackedTableMetadataWriter.DirectoryInfo``): every
  partition (a folder with a partition metafile) and its files of committed instants (a base file's own, a log
  file's slice's, a CDC log file's).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hoodie_datasource.table.file_names import data_file_instant
from hoodie_datasource.table.fs_view import list_table_files, partitions_of
from hoodie_datasource.table.table import Table


@dataclass(frozen=True)
class PartitionFiles:
    """One data partition's change: files added (name -> size) and deleted (names)."""

    added: Mapping[str, int] = field(default_factory=dict)
    deleted: tuple[str, ...] = ()


@dataclass(frozen=True)
class FileChanges:
    """Per data partition path (``""`` for a table without partitions): the files added and deleted; the
    partitions written (the partition list gains them) and the partitions deleted whole."""

    partitions: Mapping[str, PartitionFiles] = field(default_factory=dict)
    written: tuple[str, ...] = ()
    deleted_partitions: tuple[str, ...] = ()

    @property
    def added_files(self) -> dict[str, dict[str, int]]:
        return {p: dict(c.added) for p, c in self.partitions.items() if c.added}

    @property
    def deleted_files(self) -> dict[str, tuple[str, ...]]:
        return {p: c.deleted for p, c in self.partitions.items() if c.deleted}


def _name(path: str) -> str:
    return posixpath.basename(path)


def of_commit(partition_to_write_stats: Mapping[str, Iterable[Mapping[str, Any]]]) -> FileChanges:
    """The files a commit's write stats name (its ``partitionToWriteStats``, JSON or Avro decoded alike)."""
    partitions: dict[str, PartitionFiles] = {}
    for partition, stats in partition_to_write_stats.items():
        sizes: dict[str, int] = {}
        for stat in stats or ():
            if stat.get("path"):
                name = _name(stat["path"])
                sizes[name] = max(sizes.get(name, 0), int(stat.get("fileSizeInBytes") or 0))
            for cdc_path, size in (stat.get("cdcStats") or {}).items():
                sizes[_name(cdc_path)] = int(size)
        partitions[partition] = PartitionFiles(sizes)
    return FileChanges(partitions, tuple(partitions))


def of_clean(metadata: Mapping[str, Any]) -> FileChanges:
    """The files a clean deleted (``HoodieCleanMetadata.partitionMetadata``: the planned names)."""
    partitions: dict[str, PartitionFiles] = {}
    whole = []
    for partition, meta in (metadata.get("partitionMetadata") or {}).items():
        partitions[partition] = PartitionFiles(deleted=tuple(_name(p) for p in meta.get("deletePathPatterns") or ()))
        if meta.get("isPartitionDeleted"):
            whole.append(partition)
    return FileChanges(partitions, deleted_partitions=tuple(whole))


def of_deleted(paths: Iterable[str]) -> FileChanges:
    """Files deleted (paths relative to the table), as a rollback deletes them."""
    by_partition: dict[str, list[str]] = {}
    for path in paths:
        by_partition.setdefault(posixpath.dirname(path), []).append(_name(path))
    return FileChanges({p: PartitionFiles(deleted=tuple(sorted(names))) for p, names in by_partition.items()})


def of_listing(table: Table) -> FileChanges:
    """Every partition of the table and its committed data files, from one listing, as files added."""
    by_dir = list_table_files(table.storage)
    partitions = partitions_of(by_dir) if table.config.is_partitioned else [""]
    committed = table.timeline.committed_upto(None)
    changes = {}
    for partition in partitions:
        files = {}
        for info in by_dir.get(partition, ()):
            instant = data_file_instant(info.name)
            if instant is not None and committed(instant):
                files[info.name] = info.size
        changes[partition] = PartitionFiles(files)
    return FileChanges(changes, tuple(partitions))
