"""The latest file slice of each file group of a metadata-table partition (``HoodieTableMetadataUtil
.getPartitionLatestMergedFileSlices``, Hudi 0.15).

One listing of the partition's folder. Files are grouped by file id, and within a group by the instant their
slice starts at: a base HFile's instant, or the base instant in a log file's name (a file group starts with logs
alone: the partition's initialisation writes no base file). A slice counts when that instant is a completed write
of the metadata timeline (or older than its start), or a pending compaction: then its logs, written while the
compaction runs, merge into the slice before it (``getLatestMergedFileSlicesBeforeOrOn``). The latest counted
slice at or before the latest completed instant is the group's; slices come sorted by file id, the order the
key-to-file-group mapping counts in.
"""

from __future__ import annotations

from hoodie_datasource.metadata.records import MetadataPartition
from hoodie_datasource.metadata.timeline import MetadataTimeline
from hoodie_datasource.storage.storage import Storage, join
from hoodie_datasource.table.file_group import BaseFile, FileSlice, LogFile
from hoodie_datasource.table.file_names import BaseFileName, LogFileName
from hoodie_datasource.table.metadata_table import METADATA_TABLE


def latest_merged_slices(storage: Storage, timeline: MetadataTimeline, partition: MetadataPartition
                         ) -> list[FileSlice]:
    folder = join(METADATA_TABLE, partition.path)
    bases: dict[str, dict[str, BaseFile]] = {}
    logs: dict[str, dict[str, list[LogFile]]] = {}
    for info in storage.list_dir(folder).files:
        base = BaseFileName.parse(info.name)
        if base is not None:
            bases.setdefault(base.file_id, {})[base.instant_time] = BaseFile(info.name, base.file_id,
                                                                              base.instant_time, info.size)
            continue
        log = LogFileName.parse(info.name)
        if log is not None:
            logs.setdefault(log.file_id, {}).setdefault(log.instant_time, []).append(
                LogFile(info.name, log.file_id, log.instant_time, log.version, log.write_token, info.size))
    latest = timeline.latest_completed or ""
    slices = []
    for file_id in sorted(set(bases) | set(logs)):
        starts = sorted(t for t in set(bases.get(file_id, {})) | set(logs.get(file_id, {})) if t <= latest
                        and (timeline.is_committed(t) or t in timeline.pending_compactions))
        if not starts:
            continue
        start = starts[-1]
        group_logs = list(logs.get(file_id, {}).get(start, []))
        base = bases.get(file_id, {}).get(start)
        if start in timeline.pending_compactions and len(starts) > 1:
            # the compaction has not written its base file yet: its logs go on the slice before it
            start = starts[-2]
            base = bases.get(file_id, {}).get(start)
            group_logs += logs.get(file_id, {}).get(start, [])
        elif start in timeline.pending_compactions:
            base = None
        ordered = tuple(sorted(group_logs, key=lambda f: (f.instant_time, f.version, f.write_token)))
        slices.append(FileSlice(folder, file_id, start, base, ordered))
    return slices
