"""The metadata table's settings of a write or table service (Hudi's ``HoodieMetadataConfig``), resolved once.

They decide what a change to the table builds or drops (``hoodie.metadata.enable`` and each index partition's
switch) and how an index partition is sized when it is built. Which partitions a commit updates is not theirs
to say: it is what ``hoodie.table.metadata.partitions`` lists as ready, as Hudi's writers update every ready
partition (``HoodieBackedTableMetadataWriter.getMetadataPartitionsToUpdate``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hoodie_datasource.config import keys as k
from hoodie_datasource.errors import HoodieConfigError


@dataclass(frozen=True)
class MetadataConfig:
    enabled: bool = True
    column_stats: bool = False
    column_stats_columns: tuple[str, ...] = ()  # none: every column of the table (its meta columns too)
    column_stats_file_groups: int = 2
    bloom_filters: bool = False
    bloom_filter_file_groups: int = 4
    record_index: bool = False
    record_index_min_file_groups: int = 10
    record_index_max_file_groups: int = 10000
    record_index_max_file_group_bytes: int = 1024 * k.MB
    record_index_growth_factor: float = 2.0
    compact_max_delta_commits: int = 10
    max_delta_commits_when_pending: int = 1000

    def __post_init__(self) -> None:
        counts = {k.METADATA_COLUMN_STATS_FILE_GROUPS.key: self.column_stats_file_groups,
                  k.METADATA_BLOOM_FILTER_FILE_GROUPS.key: self.bloom_filter_file_groups,
                  k.METADATA_RECORD_INDEX_MIN_FILE_GROUPS.key: self.record_index_min_file_groups,
                  k.METADATA_COMPACT_DELTA_COMMITS.key: self.compact_max_delta_commits}
        for key, value in counts.items():
            if value < 1:
                raise HoodieConfigError(f"Option {key!r} must be 1 or more, got {value}")
        if self.record_index_max_file_groups < self.record_index_min_file_groups:
            raise HoodieConfigError(
                f"Option {k.METADATA_RECORD_INDEX_MAX_FILE_GROUPS.key!r} ({self.record_index_max_file_groups}) must "
                f"not be below {k.METADATA_RECORD_INDEX_MIN_FILE_GROUPS.key!r} ({self.record_index_min_file_groups})")
        if self.record_index_max_file_group_bytes < 1 or self.record_index_growth_factor <= 0:
            raise HoodieConfigError(f"Options {k.METADATA_RECORD_INDEX_MAX_FILE_GROUP_SIZE.key!r} and "
                                    f"{k.METADATA_RECORD_INDEX_GROWTH_FACTOR.key!r} must be positive")


DISABLED = MetadataConfig(enabled=False)


def resolve_metadata_config(options: Mapping[str, str]) -> MetadataConfig:
    get = lambda prop: k.CATALOG.resolve(options, prop)  # noqa: E731
    return MetadataConfig(
        enabled=get(k.METADATA_ENABLE),
        column_stats=get(k.METADATA_COLUMN_STATS),
        column_stats_columns=get(k.METADATA_COLUMN_STATS_COLUMNS),
        column_stats_file_groups=get(k.METADATA_COLUMN_STATS_FILE_GROUPS),
        bloom_filters=get(k.METADATA_BLOOM_FILTERS),
        bloom_filter_file_groups=get(k.METADATA_BLOOM_FILTER_FILE_GROUPS),
        record_index=get(k.METADATA_RECORD_INDEX),
        record_index_min_file_groups=get(k.METADATA_RECORD_INDEX_MIN_FILE_GROUPS),
        record_index_max_file_groups=get(k.METADATA_RECORD_INDEX_MAX_FILE_GROUPS),
        record_index_max_file_group_bytes=get(k.METADATA_RECORD_INDEX_MAX_FILE_GROUP_SIZE),
        record_index_growth_factor=get(k.METADATA_RECORD_INDEX_GROWTH_FACTOR),
        compact_max_delta_commits=get(k.METADATA_COMPACT_DELTA_COMMITS),
        max_delta_commits_when_pending=get(k.METADATA_MAX_DELTA_COMMITS_WHEN_PENDING),
    )
