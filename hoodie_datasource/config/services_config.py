"""Table-service settings (compaction, cleaning, archival), resolved once from options.

Why in ``config/``: the settings are plain validated values; keeping them beside the other configs
lets the write path and the table facade resolve them without importing the services themselves."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from hoodie_datasource.config import keys as k
from hoodie_datasource.config.concurrency_config import resolve_concurrency_config
from hoodie_datasource.config.metadata_config import MetadataConfig, resolve_metadata_config
from hoodie_datasource.config.write_config import IndexConfig
from hoodie_datasource.errors import HoodieConfigError

POLICIES = k.CLEANER_POLICY.choices
STRATEGIES = ("LogFileSizeBasedCompactionStrategy", "DayBasedCompactionStrategy", "UnBoundedCompactionStrategy")


@dataclass(frozen=True)
class CleanConfig:
    policy: str = "KEEP_LATEST_COMMITS"
    commits_retained: int = 10
    file_versions_retained: int = 3
    hours_retained: int = 24
    # hoodie.cleaner.policy.failed.writes: LAZY, the cleaner rolls back failed writes (heartbeat expired)
    rolls_back_failed_writes: bool = False
    heartbeat_expiry_ms: int = 120_000

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise HoodieConfigError(f"Unknown cleaner policy {self.policy!r}; valid values: {', '.join(POLICIES)}")
        if self.commits_retained < 1 or self.file_versions_retained < 1 or self.hours_retained < 1:
            raise HoodieConfigError("hoodie.cleaner.commits.retained, ...fileversions.retained and ...hours.retained "
                                    "must be >= 1")


@dataclass(frozen=True)
class CompactionConfig:
    strategy: str = "LogFileSizeBasedCompactionStrategy"
    max_delta_commits: int = 5
    target_partitions: int = 10
    target_io_mb: int = 500 * 1024
    index: IndexConfig = IndexConfig()
    compression: str = "snappy"
    metadata: MetadataConfig = MetadataConfig()  # the column statistics to keep of the base files it writes
    # a compaction beats a heartbeat while it runs, so no other process restarts it meanwhile
    heartbeat_interval_ms: int = 60_000
    heartbeat_expiry_ms: int = 120_000

    def __post_init__(self) -> None:
        name = self.strategy.rsplit(".", 1)[-1]
        if name not in STRATEGIES:
            raise HoodieConfigError(f"Unknown compaction strategy {self.strategy!r}; valid values: {', '.join(STRATEGIES)}")
        object.__setattr__(self, "strategy", name)


@dataclass(frozen=True)
class ArchiveConfig:
    min_commits: int = 20
    max_commits: int = 30
    beyond_savepoint: bool = False  # hoodie.archive.beyond.savepoint

    def __post_init__(self) -> None:
        if not 0 < self.min_commits < self.max_commits:
            raise HoodieConfigError("hoodie.keep.min.commits must be > 0 and < hoodie.keep.max.commits")


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
    concurrency = resolve_concurrency_config(options)
    return ServicesConfig(
        inline_compact=get(k.INLINE_COMPACT),
        compaction=CompactionConfig(
            strategy=get(k.COMPACTION_STRATEGY), max_delta_commits=get(k.MAX_DELTA_COMMITS),
            target_partitions=get(k.DAYBASED_PARTITIONS), target_io_mb=get(k.TARGET_IO),
            index=index or IndexConfig(), compression=compression, metadata=resolve_metadata_config(options),
            heartbeat_interval_ms=concurrency.heartbeat_interval_ms, heartbeat_expiry_ms=concurrency.heartbeat_expiry_ms,
        ),
        auto_clean=get(k.AUTO_CLEAN),
        clean=CleanConfig(get(k.CLEANER_POLICY), get(k.COMMITS_RETAINED), get(k.FILE_VERSIONS_RETAINED),
                          get(k.HOURS_RETAINED), concurrency.failed_writes_policy == "LAZY",
                          concurrency.heartbeat_expiry_ms),
        auto_archive=get(k.AUTO_ARCHIVE),
        archive=ArchiveConfig(get(k.KEEP_MIN_COMMITS), get(k.KEEP_MAX_COMMITS), get(k.ARCHIVE_BEYOND_SAVEPOINT)),
    )
