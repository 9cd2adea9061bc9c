"""The file-system view: which file slices make up the table as of an instant.

Lists partition directories once, groups files by (partition, fileId), and keeps only files whose
instant is a *completed* write at or before the requested time, so files of failed or in-flight
writes are never read. File groups replaced by a completed replacecommit are dropped.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from hoodie_datasource.table.file_group import BaseFile, FileGroup, FileSlice, LogFile
from hoodie_datasource.table.file_names import PARTITION_METAFILE, BaseFileName, LogFileName
from hoodie_datasource.table.table_config import METAFOLDER
from hoodie_datasource.timeline.timeline import Timeline

logger = logging.getLogger(__name__)


def list_partitions(base_path: str, partitioned: bool) -> list[str]:
    """Relative partition paths ("" for a non-partitioned table)."""
    if not partitioned:
        return [""]
    found: list[str] = []
    for root, dirs, files in os.walk(base_path):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != METAFOLDER)
        if root == base_path:
            continue
        if PARTITION_METAFILE in files or any(BaseFileName.parse(f) for f in files):
            found.append(os.path.relpath(root, base_path).replace(os.sep, "/"))
    return found


@dataclass
class FileSystemView:
    base_path: str
    timeline: Timeline
    partitions: list[str] | None = None
    _groups: dict[tuple[str, str], FileGroup] = field(default_factory=dict, init=False)
    _loaded: set[str] = field(default_factory=set, init=False)

    def __post_init__(self) -> None:
        if self.partitions is None:
            self.partitions = list_partitions(self.base_path, self.timeline.config.is_partitioned)

    def _load_partition(self, partition: str) -> None:
        if partition in self._loaded:
            return
        self._loaded.add(partition)
        directory = os.path.join(self.base_path, partition) if partition else self.base_path
        try:
            entries = list(os.scandir(directory))
        except FileNotFoundError:
            return
        for entry in entries:
            if not entry.is_file():
                continue
            base = BaseFileName.parse(entry.name)
            if base is not None:
                group = self._group(partition, base.file_id)
                group.base_files.append(BaseFile(entry.name, base.file_id, base.instant_time, entry.stat().st_size))
                continue
            log = LogFileName.parse(entry.name)
            if log is not None:
                group = self._group(partition, log.file_id)
                group.log_files.append(
                    LogFile(entry.name, log.file_id, log.instant_time, log.version, log.write_token,
                            entry.stat().st_size)
                )

    def _group(self, partition: str, file_id: str) -> FileGroup:
        key = (partition, file_id)
        if key not in self._groups:
            self._groups[key] = FileGroup(partition, file_id)
        return self._groups[key]

    def file_groups(self, partitions: Iterable[str] | None = None) -> list[FileGroup]:
        wanted = list(self.partitions or []) if partitions is None else list(partitions)
        for partition in wanted:
            self._load_partition(partition)
        wanted_set = set(wanted)
        return [g for (p, _), g in sorted(self._groups.items()) if p in wanted_set]

    def latest_file_slices(
        self,
        as_of: str | None = None,
        partitions: Iterable[str] | None = None,
        file_ids: set[tuple[str, str]] | None = None,
    ) -> list[FileSlice]:
        """The newest committed slice of every live file group, as of ``as_of`` (inclusive)."""
        committed = self.timeline.committed_upto(as_of)
        replaced = self.timeline.replaced_file_ids(as_of)
        layout = self.timeline.config.timeline_layout_version
        # logs written while a compaction of their file group is pending are named after it
        pending = self.timeline.pending_compactions() if self.timeline.config.is_mor else {}
        slices: list[FileSlice] = []
        for group in self.file_groups(partitions):
            key = (group.partition_path, group.file_id)
            if key in replaced or (file_ids is not None and key not in file_ids):
                continue
            bases = sorted((b for b in group.base_files if committed(b.instant_time)), key=lambda b: b.instant_time)
            if not bases:
                continue
            base = bases[-1]
            pending_instant = pending.get(key)
            logs = tuple(
                sorted(
                    (log for log in group.log_files
                     if _log_in_slice(log, base, committed, layout, as_of)
                     or (pending_instant is not None and layout < 2 and log.instant_time == pending_instant)),
                    key=lambda log: (log.instant_time, log.version, log.write_token),
                )
            )
            slices.append(FileSlice(group.partition_path, group.file_id, base.instant_time, base, logs))
        return slices


def _log_in_slice(log: LogFile, base: BaseFile, committed: Callable[[str], bool], layout: int,
                  as_of: str | None) -> bool:
    """Layout 1 names a log by its slice's base instant; layout 2 by its own deltacommit."""
    if layout < 2:
        return log.instant_time == base.instant_time
    return committed(log.instant_time) and log.instant_time >= base.instant_time and (
        as_of is None or log.instant_time <= as_of
    )
