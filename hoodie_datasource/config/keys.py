"""The options users may pass, with their Apache Hudi keys and short aliases."""

from __future__ import annotations

from hoodie_datasource.config.property import (
    ConfigProperty,
    OptionCatalog,
    parse_bool,
    parse_field_list,
    parse_float,
    parse_int,
    parse_path_list,
)
from hoodie_datasource.config.write_operation import WriteOperation

MB = 1024 * 1024

TABLE_TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")
INDEX_TYPES = ("BLOOM", "GLOBAL_BLOOM", "SIMPLE", "BUCKET")
BUCKET_ENGINES = ("SIMPLE", "CONSISTENT_HASHING")  # HoodieIndex.BucketIndexEngineType
BLOOM_FILTER_TYPES = ("DYNAMIC_V0", "SIMPLE")
QUERY_TYPES = ("snapshot", "read_optimized", "incremental")
HOLLOW_COMMIT_POLICIES = ("FAIL", "BLOCK", "USE_TRANSITION_TIME")
INCREMENTAL_FORMATS = ("latest_state", "cdc")
# HoodieCDCSupplementalLoggingMode (Hudi 0.14+); the 0.13 spellings are accepted as aliases
CDC_LOGGING_MODES = ("OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER")
PAYLOAD_CLASSES = (
    "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
    "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
)
COMPRESSION_CODECS = ("snappy", "gzip", "zstd", "uncompressed", "lz4", "brotli")
# Hudi's BulkInsertSortMode values we implement (its default is NONE, HoodieWriteConfig.BULK_INSERT_SORT_MODE)
BULK_INSERT_SORT_MODES = ("NONE", "GLOBAL_SORT", "PARTITION_SORT")

TABLE_NAME = ConfigProperty("hoodie.table.name", None, ("table.name", "hoodie.datasource.write.table.name"))
RECORD_KEY = ConfigProperty(
    "hoodie.datasource.write.recordkey.field", (), ("recordkey.field", "primaryKey"), parser=parse_field_list
)
PARTITION_PATH = ConfigProperty(
    "hoodie.datasource.write.partitionpath.field", (), ("partitionpath.field",), parser=parse_field_list
)
PRECOMBINE = ConfigProperty(
    "hoodie.datasource.write.precombine.field", None, ("precombine.field", "hoodie.table.ordering.fields", "preCombineField")
)
OPERATION = ConfigProperty(
    "hoodie.datasource.write.operation", WriteOperation.UPSERT, ("operation", "hoodie.operation"),
    choices=tuple(WriteOperation)
)
TABLE_TYPE = ConfigProperty(
    "hoodie.datasource.write.table.type",
    None,
    ("storage.type", "table.type", "hoodie.datasource.write.storage.type", "type"),
    choices=TABLE_TYPES,
    value_aliases=(("cow", "COPY_ON_WRITE"), ("mor", "MERGE_ON_READ")),  # Hudi SQL: TBLPROPERTIES (type = 'mor')
)
HIVE_STYLE = ConfigProperty(
    "hoodie.datasource.write.hive_style_partitioning",
    None,
    ("hive_style_partitioning",),
    parser=parse_bool,
)
URL_ENCODE = ConfigProperty(
    "hoodie.datasource.write.partitionpath.urlencode", False, ("partitionpath.urlencode",), parser=parse_bool
)
KEYGEN_CLASS = ConfigProperty("hoodie.datasource.write.keygenerator.class", None, ("keygenerator.class",))
PAYLOAD_CLASS = ConfigProperty(
    "hoodie.datasource.write.payload.class", None, ("payload.class",), choices=PAYLOAD_CLASSES
)
INDEX_TYPE = ConfigProperty("hoodie.index.type", "BLOOM", ("index.type",), choices=INDEX_TYPES)
# HoodieIndexConfig: BUCKET_INDEX_NUM_BUCKETS (default 256 per partition for Spark writers; Flink's
# FlinkOptions default is 4), BUCKET_INDEX_HASH_FIELD (default: the record key fields),
# BUCKET_INDEX_ENGINE_TYPE (default SIMPLE)
BUCKET_NUM_BUCKETS = ConfigProperty("hoodie.bucket.index.num.buckets", 256, ("bucket.index.num.buckets",),
                                    parser=parse_int)
BUCKET_HASH_FIELD = ConfigProperty("hoodie.bucket.index.hash.field", (), ("bucket.index.hash.field",),
                                   parser=parse_field_list)
BUCKET_ENGINE = ConfigProperty("hoodie.index.bucket.engine", "SIMPLE", ("index.bucket.engine",),
                               choices=BUCKET_ENGINES)
# HoodieIndexConfig.BLOOM_INDEX_UPDATE_PARTITION_PATH_ENABLE (true by default): under GLOBAL_BLOOM a key written
# with another partition moves there (deleted in the old one); false, which updates it in its old partition, is
# not implemented and refused
GLOBAL_UPDATE_PARTITION_PATH = ConfigProperty("hoodie.bloom.index.update.partition.path", True, parser=parse_bool)
BLOOM_NUM_ENTRIES = ConfigProperty("hoodie.index.bloom.num_entries", 60000, parser=parse_int)
BLOOM_FPP = ConfigProperty("hoodie.index.bloom.fpp", 1e-9, parser=parse_float)
BLOOM_FILTER_TYPE = ConfigProperty(
    "hoodie.bloom.index.filter.type", "DYNAMIC_V0", choices=BLOOM_FILTER_TYPES
)
BLOOM_MAX_ENTRIES = ConfigProperty("hoodie.bloom.index.filter.dynamic.max.entries", 100000, parser=parse_int)
PRUNE_BY_RANGES = ConfigProperty("hoodie.bloom.index.prune.by.ranges", True, parser=parse_bool)
# HoodieStorageConfig.PARQUET_WITH_BLOOM_FILTER_ENABLED: base files carry a bloom filter unless this is false
# and the index is no bloom index (HoodieFileWriterFactory.enableBloomFilter)
PARQUET_BLOOM_FILTER = ConfigProperty("hoodie.parquet.bloom.filter.enabled", True, parser=parse_bool)
MAX_FILE_SIZE = ConfigProperty("hoodie.parquet.max.file.size", 120 * MB, parser=parse_int)
SMALL_FILE_LIMIT = ConfigProperty("hoodie.parquet.small.file.limit", 100 * MB, parser=parse_int)
# merge-on-read under an index that cannot index log files: how many of a partition's small file slices
# (smallest first) inserts may be packed into (HoodieWriteConfig.MERGE_SMALL_FILE_GROUP_CANDIDATES_LIMIT)
SMALL_FILE_CANDIDATES = ConfigProperty("hoodie.merge.small.file.group.candidates.limit", 1, parser=parse_int)
RECORD_SIZE_ESTIMATE = ConfigProperty("hoodie.copyonwrite.record.size.estimate", 1024, parser=parse_int)
COMPRESSION = ConfigProperty(
    "hoodie.parquet.compression.codec", "snappy", ("compression",), choices=COMPRESSION_CODECS
)
COMBINE_BEFORE_UPSERT = ConfigProperty("hoodie.combine.before.upsert", True, parser=parse_bool)
COMBINE_BEFORE_INSERT = ConfigProperty("hoodie.combine.before.insert", False, parser=parse_bool)
# an insert packed into a small file appends its records to the stored ones (HoodieConcatHandle), a key it
# brings again stays twice; false: it is merged into every stored copy of its key (HoodieMergeHandle). True
# by default since Hudi 0.15 (HUDI-6089)
ALLOW_DUPLICATE_ON_INSERTS = ConfigProperty("hoodie.merge.allow.duplicate.on.inserts", True, parser=parse_bool)
LOG_BLOCK_FORMAT = ConfigProperty(
    "hoodie.logfile.data.block.format", "parquet", ("log.block.format",), choices=("parquet", "avro")
)
CDC_ENABLED = ConfigProperty("hoodie.table.cdc.enabled", None, ("cdc.enabled",), parser=parse_bool)
CDC_LOGGING_MODE = ConfigProperty(
    "hoodie.table.cdc.supplemental.logging.mode", None, ("cdc.supplemental.logging.mode",),
    choices=CDC_LOGGING_MODES,
    value_aliases=(("cdc_op_key", "OP_KEY_ONLY"), ("cdc_data_before", "DATA_BEFORE"),
                   ("cdc_data_before_after", "DATA_BEFORE_AFTER")),
)
PARALLELISM = ConfigProperty(
    "hoodie.upsert.shuffle.parallelism", 0, ("parallelism", "hoodie.insert.shuffle.parallelism"), parser=parse_int
)
BULK_INSERT_SORT_MODE = ConfigProperty(
    "hoodie.bulkinsert.sort.mode", "NONE", ("bulkinsert.sort.mode",), choices=BULK_INSERT_SORT_MODES
)
BULK_INSERT_PARALLELISM = ConfigProperty(
    "hoodie.bulkinsert.shuffle.parallelism", 0, ("bulkinsert.shuffle.parallelism",), parser=parse_int
)
# HoodieInternalConfig.STATIC_OVERWRITE_PARTITION_PATHS: the partitions an insert_overwrite replaces besides those
# its records fall in (set by SQL INSERT OVERWRITE ... PARTITION (...) in static mode, so an empty source
# still empties them: SparkInsertOverwriteCommitActionExecutor.getPartitionToReplacedFileIds)
STATIC_OVERWRITE_PARTITIONS = ConfigProperty("hoodie.static.overwrite.partition.paths", (), parser=parse_path_list)

INLINE_COMPACT = ConfigProperty("hoodie.compact.inline", False, ("compact.inline",), parser=parse_bool)
MAX_DELTA_COMMITS = ConfigProperty("hoodie.compact.inline.max.delta.commits", 5, parser=parse_int)
COMPACTION_STRATEGY = ConfigProperty("hoodie.compaction.strategy", "LogFileSizeBasedCompactionStrategy")
DAYBASED_PARTITIONS = ConfigProperty("hoodie.compaction.daybased.target.partitions", 10, parser=parse_int)
TARGET_IO = ConfigProperty("hoodie.compaction.target.io", 500 * 1024, parser=parse_int)
AUTO_CLEAN = ConfigProperty("hoodie.clean.automatic", True, ("clean.automatic",), parser=parse_bool)
CLEANER_POLICY = ConfigProperty(
    "hoodie.cleaner.policy", "KEEP_LATEST_COMMITS", choices=("KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS")
)
COMMITS_RETAINED = ConfigProperty("hoodie.cleaner.commits.retained", 10, parser=parse_int)
FILE_VERSIONS_RETAINED = ConfigProperty("hoodie.cleaner.fileversions.retained", 3, parser=parse_int)
AUTO_ARCHIVE = ConfigProperty("hoodie.archive.automatic", True, parser=parse_bool)
KEEP_MIN_COMMITS = ConfigProperty("hoodie.keep.min.commits", 20, parser=parse_int)
KEEP_MAX_COMMITS = ConfigProperty("hoodie.keep.max.commits", 30, parser=parse_int)
SERVICE_PROPERTIES = (
    INLINE_COMPACT, MAX_DELTA_COMMITS, COMPACTION_STRATEGY, DAYBASED_PARTITIONS, TARGET_IO, AUTO_CLEAN,
    CLEANER_POLICY, COMMITS_RETAINED, FILE_VERSIONS_RETAINED, AUTO_ARCHIVE, KEEP_MIN_COMMITS, KEEP_MAX_COMMITS,
)

# Several writers (Hudi's HoodieWriteConfig, HoodieLockConfig, HoodieCleanConfig; defaults as Hudi's)
CONCURRENCY_MODES = ("single_writer", "optimistic_concurrency_control")
FAILED_WRITES_POLICIES = ("EAGER", "LAZY")
IN_PROCESS_LOCK = "org.apache.hudi.client.transaction.lock.InProcessLockProvider"
FILE_SYSTEM_LOCK = "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
STORAGE_LOCK = "org.apache.hudi.client.transaction.lock.StorageBasedLockProvider"
ZOOKEEPER_LOCK = "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider"
CONCURRENCY_MODE = ConfigProperty(
    "hoodie.write.concurrency.mode", "single_writer", ("concurrency.mode",), choices=CONCURRENCY_MODES,
    value_aliases=(("occ", "optimistic_concurrency_control"),),
)
FAILED_WRITES_POLICY = ConfigProperty(
    "hoodie.cleaner.policy.failed.writes", None, ("cleaner.policy.failed.writes",), choices=FAILED_WRITES_POLICIES
)
HEARTBEAT_INTERVAL_MS = ConfigProperty("hoodie.client.heartbeat.interval_in_ms", 60_000, parser=parse_int)
HEARTBEAT_MISSES = ConfigProperty("hoodie.client.heartbeat.tolerable.misses", 2, parser=parse_int)
LOCK_PROVIDER = ConfigProperty(
    "hoodie.write.lock.provider", None, ("lock.provider",),
    choices=(IN_PROCESS_LOCK, STORAGE_LOCK, ZOOKEEPER_LOCK),
    value_aliases=(("in_process", IN_PROCESS_LOCK), ("storage", STORAGE_LOCK), (FILE_SYSTEM_LOCK, STORAGE_LOCK),
                   ("zookeeper", ZOOKEEPER_LOCK)),
)
LOCK_WAIT_MS = ConfigProperty("hoodie.write.lock.wait_time_ms", 60_000, parser=parse_int)
LOCK_NUM_RETRIES = ConfigProperty("hoodie.write.lock.num_retries", 15, parser=parse_int)
LOCK_RETRY_WAIT_MS = ConfigProperty("hoodie.write.lock.wait_time_ms_between_retry", 1_000, parser=parse_int)
CONFLICT_RETRIES = ConfigProperty("hoodie.write.num.retries.on.conflict", 0, parser=parse_int)
STORAGE_LOCK_VALIDITY_S = ConfigProperty("hoodie.write.lock.storage.validity.timeout.secs", 300, parser=parse_int)
STORAGE_LOCK_RENEW_S = ConfigProperty("hoodie.write.lock.storage.renew.interval.secs", 30, parser=parse_int)
ZK_URL = ConfigProperty("hoodie.write.lock.zookeeper.url", None)
ZK_PORT = ConfigProperty("hoodie.write.lock.zookeeper.port", None, parser=parse_int)
ZK_BASE_PATH = ConfigProperty("hoodie.write.lock.zookeeper.base_path", None)
ZK_LOCK_KEY = ConfigProperty("hoodie.write.lock.zookeeper.lock_key", None)
ZK_SESSION_TIMEOUT_MS = ConfigProperty("hoodie.write.lock.zookeeper.session_timeout_ms", 60_000, parser=parse_int)
ZK_CONNECTION_TIMEOUT_MS = ConfigProperty("hoodie.write.lock.zookeeper.connection_timeout_ms", 15_000, parser=parse_int)
CONCURRENCY_PROPERTIES = (
    CONCURRENCY_MODE, FAILED_WRITES_POLICY, HEARTBEAT_INTERVAL_MS, HEARTBEAT_MISSES, LOCK_PROVIDER, LOCK_WAIT_MS,
    LOCK_NUM_RETRIES, LOCK_RETRY_WAIT_MS, CONFLICT_RETRIES, STORAGE_LOCK_VALIDITY_S, STORAGE_LOCK_RENEW_S, ZK_URL,
    ZK_PORT, ZK_BASE_PATH, ZK_LOCK_KEY, ZK_SESSION_TIMEOUT_MS, ZK_CONNECTION_TIMEOUT_MS,
)

QUERY_TYPE = ConfigProperty(
    "hoodie.datasource.query.type", "snapshot", ("query", "query.type", "hoodie.datasource.view.type"),
    choices=QUERY_TYPES,
)
BEGIN_INSTANT = ConfigProperty(
    "hoodie.datasource.read.begin.instanttime", None, ("begin.instant", "begin.instanttime")
)
END_INSTANT = ConfigProperty("hoodie.datasource.read.end.instanttime", None, ("end.instant", "end.instanttime"))
AS_OF_INSTANT = ConfigProperty("as.of.instant", None, ("hoodie.datasource.read.as.of.instant", "timestampasof"))
READ_SPLIT_SIZE = ConfigProperty("hoodie.read.split.size", 128 * MB, ("split.size",), parser=parse_int)
READ_PARALLELISM = ConfigProperty("hoodie.read.parallelism", 0, ("read.parallelism",), parser=parse_int)
INCREMENTAL_FORMAT = ConfigProperty(
    "hoodie.datasource.query.incremental.format", "latest_state", ("incremental.format",),
    choices=INCREMENTAL_FORMATS,
)
INCR_FALLBACK_FULL_SCAN = ConfigProperty(
    "hoodie.datasource.read.incr.fallback.fulltablescan.enable", False, ("incr.fallback.fulltablescan.enable",),
    parser=parse_bool,
)
# Structured Streaming reads (Hudi's DataSourceReadOptions.START_OFFSET and INCREMENTAL_READ_HANDLE_HOLLOW_COMMIT;
# the two read limits are this library's: Hudi's Spark source has none)
STREAMING_START_OFFSET = ConfigProperty("hoodie.datasource.streaming.startOffset", "earliest", ("startOffset",))
STREAMING_MAX_INSTANTS = ConfigProperty("hoodie.datasource.streaming.max.instants.per.trigger", None,
                                        ("maxInstantsPerTrigger",), parser=parse_int)
STREAMING_MAX_ROWS = ConfigProperty("hoodie.datasource.streaming.max.rows.per.trigger", None,
                                    ("maxRowsPerTrigger",), parser=parse_int)
HOLLOW_COMMIT = ConfigProperty("hoodie.datasource.read.handle.hollow.commit", None, choices=HOLLOW_COMMIT_POLICIES,
                               value_aliases=(("USE_STATE_TRANSITION_TIME", "USE_TRANSITION_TIME"),))

# Structured Streaming sink (Hudi's DataSourceWriteOptions.STREAMING_*)
STREAMING_CHECKPOINT_IDENTIFIER = ConfigProperty(
    "hoodie.datasource.write.streaming.checkpoint.identifier", "default_single_writer",
    ("streaming.checkpoint.identifier",)
)
STREAMING_RETRY_COUNT = ConfigProperty(
    "hoodie.datasource.write.streaming.retry.count", 3, ("streaming.retry.count",), parser=parse_int
)
STREAMING_RETRY_INTERVAL_MS = ConfigProperty(
    "hoodie.datasource.write.streaming.retry.interval.ms", 2000, ("streaming.retry.interval.ms",), parser=parse_int
)
STREAMING_IGNORE_FAILED_BATCH = ConfigProperty(
    "hoodie.datasource.write.streaming.ignore.failed.batch", False, ("streaming.ignore.failed.batch",),
    parser=parse_bool,
)
STREAMING_PROPERTIES = (
    STREAMING_CHECKPOINT_IDENTIFIER, STREAMING_RETRY_COUNT, STREAMING_RETRY_INTERVAL_MS, STREAMING_IGNORE_FAILED_BATCH,
)

WRITE_PROPERTIES = (
    TABLE_NAME, RECORD_KEY, PARTITION_PATH, PRECOMBINE, OPERATION, TABLE_TYPE, HIVE_STYLE, URL_ENCODE,
    KEYGEN_CLASS, PAYLOAD_CLASS, INDEX_TYPE, BUCKET_NUM_BUCKETS, BUCKET_HASH_FIELD, BUCKET_ENGINE,
    GLOBAL_UPDATE_PARTITION_PATH, BLOOM_NUM_ENTRIES, BLOOM_FPP, BLOOM_FILTER_TYPE, BLOOM_MAX_ENTRIES, PRUNE_BY_RANGES,
    PARQUET_BLOOM_FILTER, MAX_FILE_SIZE,
    SMALL_FILE_LIMIT, SMALL_FILE_CANDIDATES, RECORD_SIZE_ESTIMATE, ALLOW_DUPLICATE_ON_INSERTS,
    COMPRESSION, COMBINE_BEFORE_UPSERT, COMBINE_BEFORE_INSERT, PARALLELISM, LOG_BLOCK_FORMAT, CDC_ENABLED,
    CDC_LOGGING_MODE, BULK_INSERT_SORT_MODE, BULK_INSERT_PARALLELISM, STATIC_OVERWRITE_PARTITIONS,
)
READ_PROPERTIES = (
    QUERY_TYPE, BEGIN_INSTANT, END_INSTANT, AS_OF_INSTANT, READ_SPLIT_SIZE, READ_PARALLELISM, INCR_FALLBACK_FULL_SCAN,
    STREAMING_START_OFFSET, STREAMING_MAX_INSTANTS, STREAMING_MAX_ROWS, HOLLOW_COMMIT, INCREMENTAL_FORMAT,
)

# Keys Spark itself adds to the options it hands a data source.
SPARK_PASSTHROUGH = ("path", "paths", "location", "provider", "owner", "external", "is_managed_location")

CATALOG = OptionCatalog(
    WRITE_PROPERTIES + SERVICE_PROPERTIES + READ_PROPERTIES + CONCURRENCY_PROPERTIES + STREAMING_PROPERTIES
)
