"""Table-service settings (compaction, clustering, cleaning, archival), resolved once from options.

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
class ClusteringConfig:
    """Hudi's ``HoodieClusteringConfig``: what a plan takes (``services.clustering_plan``), how it runs
    (``services.clustering``) and how writers treat the file groups it will rewrite."""

    small_file_limit: int = 300 * k.MB
    target_file_max_bytes: int = 1024 * k.MB
    max_bytes_per_group: int = 2048 * k.MB
    max_num_groups: int = 30
    sort_columns: tuple[str, ...] = ()
    single_group: bool = True
    partition_filter_mode: str = "NONE"
    lookback_partitions: int = 2
    skip_latest_partitions: int = 0
    begin_partition: str | None = None
    end_partition: str | None = None
    partitions_selected: tuple[str, ...] = ()
    partition_regex: str | None = None
    layout_strategy: str = "linear"
    curve_build_method: str = "direct"
    curve_sample_size: int = 200_000
    parquet_max_file_size: int = 120 * k.MB  # the size a slice without a base file counts as
    plan_strategy: str = k.CLUSTERING_PLAN_STRATEGIES[0]
    execution_strategy: str = k.CLUSTERING_EXECUTION_STRATEGIES[0]
    rejects_updates: bool = True  # hoodie.clustering.updates.strategy: SparkRejectUpdateStrategy
    rollback_pending_on_conflict: bool = False
    index: IndexConfig = IndexConfig()
    compression: str = "snappy"
    metadata: MetadataConfig = MetadataConfig()
    heartbeat_interval_ms: int = 60_000
    heartbeat_expiry_ms: int = 120_000

    def __post_init__(self) -> None:
        for name in ("target_file_max_bytes", "max_bytes_per_group", "max_num_groups"):
            if getattr(self, name) < 1:
                raise HoodieConfigError(f"Clustering setting {name} must be >= 1, got {getattr(self, name)}")

    @property
    def strategy_params(self) -> dict[str, str]:
        """The plan's ``strategyParams`` (``SparkSizeBasedClusteringPlanStrategy.getStrategyParams``)."""
        return {k.CLUSTERING_SORT_COLUMNS.key: ",".join(self.sort_columns)} if self.sort_columns else {}


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
    inline_cluster: bool = False  # hoodie.clustering.inline: schedule and run
    schedule_cluster_inline: bool = False  # hoodie.clustering.schedule.inline: schedule only
    async_cluster: bool = False  # hoodie.clustering.async.enabled
    cluster_max_commits: int = 4  # ...inline.max.commits, or ...async.max.commits when clustering is async
    clustering: ClusteringConfig = field(default_factory=ClusteringConfig)
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
        inline_cluster=get(k.CLUSTERING_INLINE),
        schedule_cluster_inline=get(k.CLUSTERING_SCHEDULE_INLINE),
        async_cluster=get(k.CLUSTERING_ASYNC),
        cluster_max_commits=get(k.CLUSTERING_ASYNC_MAX_COMMITS) if get(k.CLUSTERING_ASYNC) and not get(
            k.CLUSTERING_INLINE) else get(k.CLUSTERING_INLINE_MAX_COMMITS),
        clustering=ClusteringConfig(
            small_file_limit=get(k.CLUSTERING_SMALL_FILE_LIMIT),
            target_file_max_bytes=get(k.CLUSTERING_TARGET_FILE_MAX_BYTES),
            max_bytes_per_group=get(k.CLUSTERING_MAX_BYTES_PER_GROUP), max_num_groups=get(k.CLUSTERING_MAX_NUM_GROUPS),
            sort_columns=get(k.CLUSTERING_SORT_COLUMNS), single_group=get(k.CLUSTERING_SINGLE_GROUP),
            partition_filter_mode=get(k.CLUSTERING_PARTITION_FILTER_MODE),
            lookback_partitions=get(k.CLUSTERING_LOOKBACK_PARTITIONS),
            skip_latest_partitions=get(k.CLUSTERING_SKIP_LATEST_PARTITIONS),
            begin_partition=get(k.CLUSTERING_BEGIN_PARTITION), end_partition=get(k.CLUSTERING_END_PARTITION),
            partitions_selected=get(k.CLUSTERING_PARTITIONS_SELECTED), partition_regex=get(k.CLUSTERING_PARTITION_REGEX),
            layout_strategy=get(k.LAYOUT_OPTIMIZE_STRATEGY), curve_build_method=get(k.LAYOUT_CURVE_BUILD_METHOD),
            curve_sample_size=get(k.LAYOUT_CURVE_SAMPLE_SIZE), parquet_max_file_size=get(k.MAX_FILE_SIZE),
            plan_strategy=get(k.CLUSTERING_PLAN_STRATEGY), execution_strategy=get(k.CLUSTERING_EXECUTION_STRATEGY),
            rejects_updates=get(k.CLUSTERING_UPDATES_STRATEGY) == k.CLUSTERING_UPDATE_STRATEGIES[0],
            rollback_pending_on_conflict=get(k.CLUSTERING_ROLLBACK_PENDING_ON_CONFLICT),
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
