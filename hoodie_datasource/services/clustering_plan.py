"""Which file slices a clustering rewrites: Hudi's size-based plan strategy.

    partitions     every partition (from the metadata table when it is on), or those of
                   ``hoodie.clustering.plan.strategy.partition.selected``; only those matching
                   ``...partition.regex.pattern``; then the partition filter mode (``ClusteringPlanPartitionFilter``:
                   NONE, RECENT_DAYS, SELECTED_PARTITIONS, DAY_ROLLING)
    eligible       each partition's latest file slices, but those of file groups a pending compaction or
                   clustering holds, whose base file is smaller than ``...small.file.limit``
                   (``SparkSizeBasedClusteringPlanStrategy.getFileSlicesEligibleForClustering``)
    groups         slices largest first into groups of at most ``...max.bytes.per.group`` bytes (a slice
                   without a base file counts as ``hoodie.parquet.max.file.size``), each writing
                   ceil(bytes / ``...target.file.max.bytes``) files; at most ``...max.num.groups`` groups a
                   partition and a plan; a partition's last group of one slice only when
                   ``...single.group.clustering.enabled`` or sort columns are set
                   (``PartitionAwareClusteringPlanStrategy.buildClusteringGroupsForPartition``)

The plan is the ``HoodieClusteringPlan`` Hudi writes: slices name their files by full path, as Hudi's
``ClusteringPlanStrategy.getFileSliceInfo`` does (Java's executor opens them as given).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from hoodie_datasource.config.services_config import ClusteringConfig
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.storage.storage import join
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.table import Table

logger = logging.getLogger(__name__)

MB = 1024 * 1024
PLAN_VERSION = 1  # ClusteringPlanStrategy.CLUSTERING_PLAN_VERSION_1


def filter_partitions(partitions: Sequence[str], cfg: ClusteringConfig, hour: int | None = None) -> list[str]:
    """The partitions the plan looks at (``ClusteringPlanPartitionFilter``); ``hour``: DAY_ROLLING's hour
    of the day (now when None)."""
    if cfg.partition_regex:
        try:
            pattern = re.compile(cfg.partition_regex)
        except re.error as exc:
            raise HoodieConfigError(f"hoodie.clustering.plan.strategy.partition.regex.pattern "
                                    f"{cfg.partition_regex!r} is no regular expression: {exc}") from None
        partitions = [p for p in partitions if pattern.fullmatch(p)]
    mode = cfg.partition_filter_mode
    if mode == "NONE":
        return list(partitions)
    if mode == "RECENT_DAYS":
        newest = sorted(partitions, reverse=True)[max(cfg.skip_latest_partitions, 0):]
        return newest[:cfg.lookback_partitions] if cfg.lookback_partitions > 0 else newest
    if mode == "SELECTED_PARTITIONS":
        return [p for p in partitions if (cfg.begin_partition is None or p >= cfg.begin_partition)
                and (cfg.end_partition is None or p <= cfg.end_partition)]
    hour = datetime.now().hour if hour is None else hour  # DAY_ROLLING
    return [p for i, p in enumerate(sorted(partitions)) if i % 24 == hour]


def _slice_size(s: FileSlice, cfg: ClusteringConfig) -> int:
    return s.base_file.size if s.base_file is not None else cfg.parquet_max_file_size


def _metrics(slices: Sequence[FileSlice], cfg: ClusteringConfig) -> dict[str, float]:
    """``FileSliceMetricUtils.addFileSliceCommonMetrics``."""
    log_bytes = sum(log.size for s in slices for log in s.log_files)
    base_bytes = sum(_slice_size(s, cfg) for s in slices)
    read_mb = (base_bytes + log_bytes) // MB
    write_mb = base_bytes // MB
    return {"TOTAL_IO_READ_MB": float(read_mb), "TOTAL_IO_WRITE_MB": float(write_mb),
            "TOTAL_IO_MB": float(read_mb + write_mb), "TOTAL_LOG_FILES_SIZE": float(log_bytes),
            "TOTAL_LOG_FILES": float(sum(len(s.log_files) for s in slices))}


def _slice_info(table: Table, s: FileSlice) -> dict[str, Any]:
    uri = table.storage.uri_of
    return {
        "dataFilePath": uri(s.base_relative_path) if s.base_file is not None else "",
        "deltaFilePaths": [uri(s.relative_path(log.name)) for log in s.log_files],
        "fileId": s.file_id,
        "partitionPath": s.partition_path,
        "bootstrapFilePath": "",
        "version": 1,
    }


def build_groups(slices: Sequence[FileSlice], cfg: ClusteringConfig) -> list[list[FileSlice]]:
    """One partition's eligible slices in groups (largest first, each under the byte limit)."""
    groups: list[list[FileSlice]] = []
    current: list[FileSlice] = []
    size = 0
    for s in sorted(slices, key=lambda s: -_slice_size(s, cfg)):
        slice_size = _slice_size(s, cfg)
        if current and size + slice_size > cfg.max_bytes_per_group:
            groups.append(current)
            current, size = [], 0
            if len(groups) >= cfg.max_num_groups:
                return groups
        current.append(s)
        size += slice_size
    if current and (len(current) > 1 or cfg.single_group or cfg.sort_columns):
        groups.append(current)
    return groups


def clustering_plan(table: Table, cfg: ClusteringConfig, held: set[tuple[str, str]]) -> dict[str, Any] | None:
    """The ``HoodieClusteringPlan`` of ``table`` (None when nothing is worth clustering); ``held``: the file
    groups pending compactions and clusterings hold."""
    listing = table.file_listing
    if cfg.partitions_selected:
        partitions = list(cfg.partitions_selected)
    elif not table.config.is_partitioned:
        partitions = [""]
    else:
        partitions = listing.partition_paths() if listing is not None else table.fs_view.partitions or []
    partitions = filter_partitions(partitions, cfg)
    if not partitions:
        return None
    view = table.file_system_view(sorted(partitions))
    by_partition: dict[str, list[FileSlice]] = {}
    for s in view.latest_file_slices(partitions=partitions):
        if (s.partition_path, s.file_id) in held:
            continue
        if (s.base_file.size if s.base_file is not None else 0) < cfg.small_file_limit:
            by_partition.setdefault(s.partition_path, []).append(s)
    groups = []
    for partition in partitions:
        for group in build_groups(by_partition.get(partition, []), cfg):
            if len(groups) >= cfg.max_num_groups:
                break
            size = sum(_slice_size(s, cfg) for s in group)
            groups.append({
                "slices": [_slice_info(table, s) for s in group],
                "metrics": _metrics(group, cfg),
                "numOutputFileGroups": max(1, math.ceil(size / cfg.target_file_max_bytes)),
                "extraMetadata": None,
                "version": 1,
            })
    if not groups:
        return None
    return {
        "inputGroups": groups,
        "strategy": {"strategyClassName": cfg.execution_strategy, "strategyParams": cfg.strategy_params,
                     "version": 1},
        "extraMetadata": {},
        "version": PLAN_VERSION,
        "preserveHoodieMetadata": True,
    }


def slice_paths(info: dict[str, Any]) -> tuple[str, list[str]]:
    """A plan slice's partition and its files' paths relative to the table (a plan names full paths, or,
    written by others, names)."""
    partition = info.get("partitionPath") or ""
    names = [p.rsplit("/", 1)[-1] for p in ([info.get("dataFilePath")] + list(info.get("deltaFilePaths") or ()))
             if p]
    return partition, [join(partition, n) for n in names]
