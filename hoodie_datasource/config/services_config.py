"""Table-service settings (compaction, cleaning, archival), resolved once from options."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from hoodie_datasource.config import keys as k
from hoodie_datasource.config.write_config import IndexConfig
from hoodie_datasource.services.archival import ArchiveConfig
from hoodie_datasource.services.cleaner import CleanConfig
from hoodie_datasource.services.compaction import CompactionConfig


@dataclass(frozen=True)
class ServicesConfig:
    inline_compact: bool = False
    compaction: CompactionConfig = field(default_factory=CompactionConfig)
    auto_clean: bool = True
    clean: CleanConfig = field(default_factory=CleanConfig)
    auto_archive: bool = True
    archive: ArchiveConfig = field(default_factory=ArchiveConfig)


def resolve_services_config(options: Mapping[str, str], index: IndexConfig | None = None,
                            compression: str = "snappy") -> ServicesConfig:
    k.CATALOG.check_unknown(options, k.SPARK_PASSTHROUGH)
    get = lambda prop: k.CATALOG.resolve(options, prop)  # noqa: E731
    return ServicesConfig(
        inline_compact=get(k.INLINE_COMPACT),
        compaction=CompactionConfig(
            strategy=get(k.COMPACTION_STRATEGY), max_delta_commits=get(k.MAX_DELTA_COMMITS),
            target_partitions=get(k.DAYBASED_PARTITIONS), target_io_mb=get(k.TARGET_IO),
            index=index or IndexConfig(), compression=compression,
        ),
        auto_clean=get(k.AUTO_CLEAN),
        clean=CleanConfig(get(k.CLEANER_POLICY), get(k.COMMITS_RETAINED), get(k.FILE_VERSIONS_RETAINED)),
        auto_archive=get(k.AUTO_ARCHIVE),
        archive=ArchiveConfig(get(k.KEEP_MIN_COMMITS), get(k.KEEP_MAX_COMMITS)),
    )
