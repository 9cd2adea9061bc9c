"""The file-system view: which file slices make up the table as of an instant.

Lists partition directories once, groups files by (partition, fileId), and keeps only files whose
instant is a *completed* write at or before the requested time, so files of failed or in-flight
writes are never read. File groups replaced by a completed replacecommit are dropped.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from hoodie_datasource.config.table_config import METAFOLDER, TableConfig
from hoodie_datasource.storage.storage import FileInfo, Storage
from hoodie_datasource.table.file_group import BaseFile, FileGroup, FileSlice, LogFile
from hoodie_datasource.table.file_names import (
    BASE_FILE,
    CDC_LOG_SUFFIX,
    PARTITION_METAFILE,
    BaseFileName,
    LogFileName,
)
from hoodie_datasource.timeline.timeline import Timeline


def _is_partition(names: Iterable[str]) -> bool:
    return any(n == PARTITION_METAFILE or BaseFileName.parse(n) for n in names)


def list_table_files(storage: Storage) -> dict[str, list[FileInfo]]:
    """Every data directory of the table and its files, from one listing of the whole table (one
    paginated LIST on an object store, not one per directory); ``.hoodie`` is skipped. A folder whose name
    starts with a dot is a partition like any other when it holds one (a partition value may start with a
    dot), as Hudi's ``FileSystemBackedTableMetadata`` skips only the meta folder."""
    by_dir: dict[str, list[FileInfo]] = {}
    for info in storage.list_tree(""):
        directory = posixpath.dirname(info.path)
        if directory.split("/", 1)[0] == METAFOLDER:
            continue
        by_dir.setdefault(directory, []).append(info)
    return by_dir


def partitions_of(by_dir: Mapping[str, Sequence[FileInfo]]) -> list[str]:
    """The partition paths among the directories of ``list_table_files``."""
    return sorted(d for d, files in by_dir.items() if d and _is_partition(f.name for f in files))


@dataclass
class FileSystemView:
    """The table's file groups (made by ``table.table.Table``). Without ``partitions`` the whole table is
    listed once; with them, one listing per partition asked for, unless ``listed`` (from
    ``list_table_files``) already holds the table's files."""

    storage: Storage
    config: TableConfig
    timeline: Timeline
    partitions: list[str] | None = None
    listed: Mapping[str, Sequence[FileInfo]] | None = None
    _groups: dict[str, dict[str, FileGroup]] = field(default_factory=dict, init=False)  # by partition, file id
    _loaded: set[str] = field(default_factory=set, init=False)

    def __post_init__(self) -> None:
        if self.partitions is not None:
            return
        if not self.config.is_partitioned:
            self.partitions = [""]
            return
        by_dir = list_table_files(self.storage)
        self.partitions = partitions_of(by_dir)
        for partition in self.partitions:
            self._add_files(partition, by_dir[partition])

    def _load_partition(self, partition: str) -> None:
        if partition in self._loaded:
            return
        if self.listed is not None:
            self._add_files(partition, self.listed.get(partition, ()))
        else:
            self._add_files(partition, self.storage.list_dir(partition).files)

    def _add_files(self, partition: str, files: Iterable[FileInfo]) -> None:
        """Each base and log file into its file group (a plan of the whole table calls this for every file: the
        base file's name is matched once, not parsed into a ``BaseFileName`` first)."""
        self._loaded.add(partition)
        groups = self._groups.setdefault(partition, {})
        match_base = BASE_FILE.match
        for info in files:
            name = info.name
            base = match_base(name)
            if base is not None:
                file_id, _, instant, _ = base.groups()
                group = groups.get(file_id)
                if group is None:
                    group = groups[file_id] = FileGroup(partition, file_id)
                group.base_files.append(BaseFile(name, file_id, instant, info.size))
                continue
            log = LogFileName.parse(name) or LogFileName.parse_cdc(name)
            if log is not None:
                group = groups.get(log.file_id)
                if group is None:
                    group = groups[log.file_id] = FileGroup(partition, log.file_id)
                files = group.cdc_log_files if name.endswith(CDC_LOG_SUFFIX) else group.log_files
                files.append(LogFile(name, log.file_id, log.instant_time, log.version, log.write_token, info.size))

    def next_log_version(self, partition: str, file_id: str, base_instant: str) -> int:
        """One more than the highest log version of the slice listed (from storage, committed or not: a failed
        write's log still holds its version; from the metadata table, committed only: a pending write's log of
        that version makes the new one roll over, ``write.append_handle``)."""
        self._load_partition(partition)
        group = self._groups.get(partition, {}).get(file_id)
        logs = group.log_files if group is not None else []
        return max((log.version for log in logs if log.instant_time == base_instant), default=0) + 1

    def file_groups(self, partitions: Iterable[str] | None = None) -> list[FileGroup]:
        """The file groups of ``partitions`` (every partition of the view when None), by partition and file id."""
        wanted = sorted(set((self.partitions or []) if partitions is None else partitions))
        for partition in wanted:
            self._load_partition(partition)
        return [group for partition in wanted for _, group in sorted(self._groups.get(partition, {}).items())]

    def latest_file_slices(
        self,
        as_of: str | None = None,
        partitions: Iterable[str] | None = None,
        file_ids: set[tuple[str, str]] | None = None,
    ) -> list[FileSlice]:
        """The newest committed slice of every live file group, as of ``as_of`` (inclusive)."""
        committed = self.timeline.committed_upto(as_of)
        replaced = self.timeline.replaced_file_ids(as_of)
        layout = self.config.timeline_layout_version
        # logs written while a compaction of their file group is pending are named after it
        pending = self.timeline.pending_compactions() if self.config.is_mor else {}
        slices: list[FileSlice] = []
        for group in self.file_groups(partitions):
            key = (group.partition_path, group.file_id)
            if key in replaced or (file_ids is not None and key not in file_ids):
                continue
            pending_instant = pending.get(key) if layout < 2 else None
            found = (_latest_slice_layout_1(group, committed, pending_instant) if layout < 2
                     else _latest_slice_layout_2(group, committed, as_of))
            if found is not None:
                slices.append(found)
        return slices


def _log_order(log: LogFile) -> tuple[str, int, str]:
    return log.instant_time, log.version, log.write_token


def _latest_slice_layout_1(group: FileGroup, committed: Callable[[str], bool], pending_instant: str | None
                           ) -> FileSlice | None:
    """Layout 1 names a log by its slice's base instant, so a slice starts at a base file's instant or at the
    instant its logs are named after; a file group of log files only (Hudi's ``HoodieFileGroup`` with a
    ``FileSlice`` whose base file is absent) starts at the deltacommit that created it. The latest slice
    whose start is committed is the group's (``HoodieFileGroup.isFileSliceCommitted``); logs named after a
    pending compaction of the group merge into it (``getLatestMergedFileSlicesBeforeOrOn``)."""
    bases = group.base_files
    if len(bases) == 1 and not group.log_files:  # most copy-on-write groups: one base file, nothing to sort
        return _slice(group, bases[0], ()) if committed(bases[0].instant_time) else None
    start = max((t for t in {b.instant_time for b in bases} | {log.instant_time for log in group.log_files}
                 if committed(t)), default=None)
    if start is None:
        return None
    base = next((b for b in bases if b.instant_time == start), None)
    logs = tuple(sorted((log for log in group.log_files
                         if log.instant_time == start or (pending_instant is not None
                                                          and log.instant_time == pending_instant)),
                        key=_log_order))
    return _slice(group, base, logs, start)


def _latest_slice_layout_2(group: FileGroup, committed: Callable[[str], bool], as_of: str | None
                           ) -> FileSlice | None:
    """Layout 2 names a log by its own deltacommit: a slice is the latest committed base file and the committed
    logs at or after it (to ``as_of``); a group without a committed base file is a slice of its committed logs
    alone, starting at the first of them (``HoodieFileGroup.getBaseInstantTime`` with no slice yet)."""
    bases = group.base_files
    if len(bases) == 1:
        base = bases[0] if committed(bases[0].instant_time) else None
    else:
        base = max((b for b in bases if committed(b.instant_time)), key=_instant_of, default=None)
    since = base.instant_time if base is not None else ""
    logs = tuple(sorted((log for log in group.log_files
                         if committed(log.instant_time) and log.instant_time >= since
                         and (as_of is None or log.instant_time <= as_of)), key=_log_order))
    if base is None and not logs:
        return None
    return _slice(group, base, logs, base.instant_time if base is not None else logs[0].instant_time)


def _slice(group: FileGroup, base: BaseFile | None, logs: tuple[LogFile, ...], start: str | None = None
           ) -> FileSlice:
    return FileSlice(group.partition_path, group.file_id, start if start is not None else base.instant_time,
                     base, logs)


def _instant_of(base: BaseFile) -> str:
    return base.instant_time
