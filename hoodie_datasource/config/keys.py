"""The options users may pass, with their Apache Hudi keys and short aliases."""

from __future__ import annotations

from hoodie_datasource.config.index_type import IndexType
from hoodie_datasource.config.property import (
    ConfigProperty,
    OptionCatalog,
    parse_bool,
    parse_field_list,
    parse_float,
    parse_int,
    parse_path_list,
)
from hoodie_datasource.config.table_config import KEYGEN_TYPES
from hoodie_datasource.config.write_operation import WriteOperation
from hoodie_datasource.table import timestamp_keygen as tk

MB = 1024 * 1024

TABLE_TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")
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
# Hudi's BulkInsertSortMode values we implement. Hudi's default is NONE (HoodieWriteConfig.BULK_INSERT_SORT_MODE);
# ours, the option unset, is the size-balanced layout of ``write.bulk_insert_layout``
BULK_INSERT_SORT_MODES = ("NONE", "GLOBAL_SORT", "PARTITION_SORT", "PARTITION_PATH_REPARTITION",
                          "PARTITION_PATH_REPARTITION_AND_SORT")

TABLE_NAME = ConfigProperty(
    "hoodie.table.name", None, ("table.name", "hoodie.datasource.write.table.name"),
    doc=("The table's name, recorded in `hoodie.properties`. Required to create a table; a later write may omit "
         "it."),
)
RECORD_KEY = ConfigProperty(
    "hoodie.datasource.write.recordkey.field", (), ("recordkey.field", "primaryKey"), parser=parse_field_list,
    doc=("The record key column(s), comma separated. Several columns make a complex key, stored as `f1:v1,f2:v2`. "
         "Required for every write but a bulk insert into a table that already records its key fields."),
)
PARTITION_PATH = ConfigProperty(
    "hoodie.datasource.write.partitionpath.field", (), ("partitionpath.field",), parser=parse_field_list,
    doc=("The partition column(s), comma separated (several are joined by `/`). None: the table is not "
         "partitioned. Null or empty values go to `__HIVE_DEFAULT_PARTITION__`."),
)
PRECOMBINE = ConfigProperty(
    "hoodie.datasource.write.precombine.field", None,
    ("precombine.field", "hoodie.table.ordering.fields", "preCombineField"),
    doc=("The ordering column: among records of one key in a batch the largest value wins, and with "
         "`DefaultHoodieRecordPayload` it also decides against the stored record. Null values fail a write that "
         "combines records by it."),
)
OPERATION = ConfigProperty(
    "hoodie.datasource.write.operation", WriteOperation.UPSERT, ("operation", "hoodie.operation"),
    choices=tuple(WriteOperation),
    doc='What `mode("append")` (and a streaming sink) runs. `mode("<operation>")` picks it directly.',
)
TABLE_TYPE = ConfigProperty(
    "hoodie.datasource.write.table.type",
    None,
    ("storage.type", "table.type", "hoodie.datasource.write.storage.type", "type"),
    choices=TABLE_TYPES,
    value_aliases=(("cow", "COPY_ON_WRITE"), ("mor", "MERGE_ON_READ")),  # Hudi SQL: TBLPROPERTIES (type = 'mor')
    doc=("COPY_ON_WRITE (a write rewrites the base files it touches) or MERGE_ON_READ (updates go to log files, "
         "compaction folds them in). Taken from the table once it exists; COPY_ON_WRITE for a new table when not "
         "given. `cow` and `mor` are accepted (Hudi SQL's `type`)."),
)
HIVE_STYLE = ConfigProperty(
    "hoodie.datasource.write.hive_style_partitioning",
    None,
    ("hive_style_partitioning",),
    parser=parse_bool,
    doc=("Partition folders named `city=sf` instead of `sf`. Taken from the table once it exists; false for a new "
         "DataFrame table, true for a SQL table."),
)
URL_ENCODE = ConfigProperty(
    "hoodie.datasource.write.partitionpath.urlencode", False, ("partitionpath.urlencode",), parser=parse_bool,
    doc=("Escape partition values as Hudi's `PartitionPathEncodeUtils.escapePathName` does (`/`, `%`, `=`, `:` and "
         "control characters become `%XX`)."),
)
KEYGEN_CLASS = ConfigProperty(
    "hoodie.datasource.write.keygenerator.class", None, ("keygenerator.class",),
    doc=("Hudi's key generator: `SimpleKeyGenerator`, `ComplexKeyGenerator`, `NonpartitionedKeyGenerator`, "
         "`TimestampBasedKeyGenerator` (the partition path is a time column formatted by the "
         "`hoodie.keygen.timebased.*` options) or `CustomKeyGenerator` (each partition field typed, "
         "`region:SIMPLE,ts:TIMESTAMP`), with or without the `org.apache.hudi.keygen.` package (the `...Avro...` "
         "variants too). Taken from the table once it exists; inferred from the key and partition fields when "
         "neither it nor `hoodie.datasource.write.keygenerator.type` is given."),
)
# KeyGeneratorType: the type names the class when the class is not given (HoodieSparkKeyGeneratorFactory)
KEYGEN_TYPE = ConfigProperty(
    "hoodie.datasource.write.keygenerator.type", None, ("keygenerator.type",), choices=tuple(KEYGEN_TYPES),
    value_aliases=(("SIMPLE_AVRO", "SIMPLE"), ("COMPLEX_AVRO", "COMPLEX"), ("NON_PARTITION_AVRO", "NON_PARTITION"),
                   ("TIMESTAMP_AVRO", "TIMESTAMP"), ("CUSTOM_AVRO", "CUSTOM")),
    doc=("The key generator by its type, when `hoodie.datasource.write.keygenerator.class` is not given. (Hudi "
         "0.15's Spark writer infers the class before it looks at the type, so there the type alone changes "
         "nothing.)"),
)
_DELTASTREAMER = "hoodie.deltastreamer.keygen.timebased."
TIMESTAMP_TYPE = ConfigProperty(
    tk.TIMESTAMP_TYPE, None, (_DELTASTREAMER + "timestamp.type",), choices=tk.TIMESTAMP_TYPES,
    doc=("Timestamp-based partitions: what the partition column holds. UNIX_TIMESTAMP: seconds since the epoch; "
         "EPOCHMILLISECONDS: milliseconds; SCALAR: units of `hoodie.keygen.timebased.timestamp.scalar.time.unit`; "
         "DATE_STRING and MIXED: strings read by `hoodie.keygen.timebased.input.dateformat`. A date column counts "
         "its epoch days and a timestamp column its epoch microseconds in that unit, as Hudi's Avro path reads "
         "them (SCALAR with DAYS or MICROSECONDS gives their dates). Required on every write."),
)
SCALAR_TIME_UNIT = ConfigProperty(
    tk.SCALAR_TIME_UNIT, None, (_DELTASTREAMER + "timestamp.scalar.time.unit",), choices=tuple(tk.TIME_UNITS),
    doc="Timestamp type SCALAR: the unit of the column's numbers (SECONDS when not given).",
)
INPUT_DATE_FORMAT = ConfigProperty(
    tk.INPUT_DATE_FORMAT, None, (_DELTASTREAMER + "input.dateformat",),
    doc=("Timestamp types DATE_STRING and MIXED: the Joda-Time pattern(s) of the strings (`yyyy-MM-dd HH:mm:ss`), "
         "several split by `hoodie.keygen.timebased.input.dateformat.list.delimiter.regex`; a value none parses "
         "fails the write."),
)
INPUT_DATE_FORMAT_DELIMITER = ConfigProperty(
    tk.INPUT_DATE_FORMAT_DELIMITER, ",", (_DELTASTREAMER + "input.dateformat.list.delimiter.regex",),
    doc="The regular expression between the patterns of `hoodie.keygen.timebased.input.dateformat`.",
)
INPUT_TIMEZONE = ConfigProperty(
    tk.INPUT_TIMEZONE, None, (_DELTASTREAMER + "input.timezone",),
    doc=("The zone of input strings without an offset (an IANA name, UTC, GMT or GMT+hh:mm); unset, the JVM's "
         "default zone, here the machine's (`TZ`, `/etc/localtime`)."),
)
OUTPUT_DATE_FORMAT = ConfigProperty(
    tk.OUTPUT_DATE_FORMAT, None, (_DELTASTREAMER + "output.dateformat",),
    doc=("Timestamp-based partitions: the Joda-Time pattern of the partition path, such as `yyyy/MM/dd` (a `/` "
         "makes nested folders) or `yyyy-MM-dd'T'HH`. Required. Letters: y M d D H k K h m s S E a Z."),
)
OUTPUT_TIMEZONE = ConfigProperty(
    tk.OUTPUT_TIMEZONE, None, (_DELTASTREAMER + "output.timezone",),
    doc=("The zone the partition path is printed in; unset, a string's own offset or input zone, else the "
         "default zone."),
)
TIMEZONE = ConfigProperty(
    tk.TIMEZONE, None, (_DELTASTREAMER + "timezone",),
    doc="Both the input and the output zone, over the two options above.",
)
DATE_TIME_PARSER = ConfigProperty(
    tk.DATE_TIME_PARSER, None, ("hoodie.deltastreamer.keygen.datetime.parser.class",),
    doc=f"The date parser class; only Hudi's `{tk.DEFAULT_PARSER}` is supported.",
)
TIMESTAMP_KEYGEN_PROPERTIES = (
    TIMESTAMP_TYPE, SCALAR_TIME_UNIT, INPUT_DATE_FORMAT, INPUT_DATE_FORMAT_DELIMITER, INPUT_TIMEZONE, OUTPUT_DATE_FORMAT,
    OUTPUT_TIMEZONE, TIMEZONE, DATE_TIME_PARSER,
)
PAYLOAD_CLASS = ConfigProperty(
    "hoodie.datasource.write.payload.class", None, ("payload.class",), choices=PAYLOAD_CLASSES,
    doc=("How an incoming record merges with the stored one. `OverwriteWithLatestAvroPayload` (the default): the "
         "incoming record wins. `DefaultHoodieRecordPayload`: a stored record whose ordering value is larger "
         "stays."),
)
INDEX_TYPE = ConfigProperty(
    "hoodie.index.type", IndexType.BLOOM, ("index.type",), choices=tuple(IndexType),
    doc=("How a write finds the file group of each incoming key. BLOOM: key ranges and bloom filters in the base "
         "files' footers, per partition. GLOBAL_BLOOM: the same across all partitions, keys unique in the table (a "
         "key that changes partition moves). SIMPLE: the incoming keys checked against the stored keys of their "
         "partitions' latest base files. GLOBAL_SIMPLE: the same against every partition's, keys unique in the "
         "table (a key that changes partition moves). BUCKET: the file group is the key's hash bucket (Hudi's simple "
         "bucket index). RECORD_INDEX: the keys looked up in the metadata table's record index (kept with "
         "hoodie.metadata.record.index.enable=true), keys unique in the table; while the table has no ready record "
         "index, tagging is GLOBAL_SIMPLE's, as Hudi's. HBASE: the keys looked up in an HBase table "
         "(hoodie.index.hbase.*), keys unique in the table, shared with Apache Hudi's HBase index."),
)
# HoodieIndexConfig: BUCKET_INDEX_NUM_BUCKETS (default 256 per partition for Spark writers; Flink's
# FlinkOptions default is 4), BUCKET_INDEX_HASH_FIELD (default: the record key fields),
# BUCKET_INDEX_ENGINE_TYPE (default SIMPLE)
BUCKET_NUM_BUCKETS = ConfigProperty(
    "hoodie.bucket.index.num.buckets", 256, ("bucket.index.num.buckets",),
    parser=parse_int,
    doc=("BUCKET index: file groups per partition. Fixed once the table has file groups; a different count fails "
         "before anything is written."),
)
BUCKET_HASH_FIELD = ConfigProperty(
    "hoodie.bucket.index.hash.field", (), ("bucket.index.hash.field",),
    parser=parse_field_list,
    doc="BUCKET index: the record key fields the bucket hashes. Default: all the record key fields.",
)
BUCKET_ENGINE = ConfigProperty(
    "hoodie.index.bucket.engine", "SIMPLE", ("index.bucket.engine",),
    choices=BUCKET_ENGINES,
    doc="BUCKET index engine. Only SIMPLE is supported; CONSISTENT_HASHING is refused with an error.",
)
# HoodieIndexConfig.BLOOM_INDEX_UPDATE_PARTITION_PATH_ENABLE and SIMPLE_INDEX_UPDATE_PARTITION_PATH_ENABLE (Hudi
# 0.15: both default to true)
BLOOM_UPDATE_PARTITION_PATH = ConfigProperty(
    "hoodie.bloom.index.update.partition.path", True, parser=parse_bool,
    doc=("GLOBAL_BLOOM index: true, Hudi's default, a key written with another partition moves there (deleted in its "
         "old partition); false, it is updated in its old partition (its record keeps the new partition field "
         "values, stored under the old partition path)."),
)
SIMPLE_UPDATE_PARTITION_PATH = ConfigProperty(
    "hoodie.simple.index.update.partition.path", True, parser=parse_bool,
    doc=("GLOBAL_SIMPLE index: true, Hudi's default, a key written with another partition moves there (deleted in its "
         "old partition); false, it is updated in its old partition (its record keeps the new partition field "
         "values, stored under the old partition path)."),
)
# HoodieIndexConfig.BLOOM_INDEX_USE_METADATA (Hudi 0.15: default false)
BLOOM_INDEX_USE_METADATA = ConfigProperty(
    "hoodie.bloom.index.use.metadata", False, parser=parse_bool,
    doc=("BLOOM and GLOBAL_BLOOM: take each base file's bloom filter from the metadata table's bloom_filters "
         "partition and its key range from the record key's column_stats, each when that partition is ready "
         "(hoodie.metadata.index.bloom.filter.enable, hoodie.metadata.index.column.stats.enable), instead of "
         "opening the base files' footers; a file the partition has nothing for is read from its footer."),
)
# HoodieIndexConfig.RECORD_INDEX_UPDATE_PARTITION_PATH_ENABLE (Hudi 0.15: default false, unlike the two above)
RECORD_INDEX_UPDATE_PARTITION_PATH = ConfigProperty(
    "hoodie.record.index.update.partition.path", False, parser=parse_bool,
    doc=("RECORD_INDEX: true, a key written with another partition moves there (deleted in its old partition); "
         "false, Hudi's default, it is updated in its old partition (its record keeps the new partition field "
         "values, stored under the old partition path)."),
)
# HoodieHBaseIndexConfig (Hudi 0.15): the HBase index's options, their names and defaults
HBASE_ZKQUORUM = ConfigProperty(
    "hoodie.index.hbase.zkquorum", None,
    doc=("HBASE index: the ZooKeeper quorum of the HBase cluster holding the index (Java Hudi's HBase client "
         "connects through it); errors name it. Required with hoodie.index.type=HBASE."),
)
HBASE_ZKPORT = ConfigProperty(
    "hoodie.index.hbase.zkport", None, parser=parse_int,
    doc="HBASE index: the ZooKeeper quorum's client port. Required with hoodie.index.type=HBASE.",
)
HBASE_TABLE = ConfigProperty(
    "hoodie.index.hbase.table", None,
    doc=("HBASE index: the HBase table holding record key -> (commit_ts, file_name, partition_path) in column "
         "family `_s`; it must exist (as Hudi, this library does not create it). Required with "
         "hoodie.index.type=HBASE."),
)
HBASE_ZKNODE_PATH = ConfigProperty(
    "hoodie.index.hbase.zknode.path", None,
    doc="HBASE index: the root znode of the HBase cluster (HBase's zookeeper.znode.parent) for Java Hudi's client.",
)
HBASE_THRIFT_ADDRESS = ConfigProperty(
    "hoodie.index.hbase.thrift.address", None, hudi=False,
    doc=("HBASE index: `host:port` of the HBase Thrift gateway this library talks to (Python has no client of "
         "HBase's own RPC). Default: the first host of hoodie.index.hbase.zkquorum, port 9090 (the gateway's "
         "default)."),
)
HBASE_GET_BATCH_SIZE = ConfigProperty(
    "hoodie.index.hbase.get.batch.size", 100, parser=parse_int,
    doc=("HBASE index: keys looked up in one multi-get while tagging; a tagging task sends at most ten batches "
         "a second (Hudi's rate limiter)."),
)
HBASE_PUT_BATCH_SIZE = ConfigProperty(
    "hoodie.index.hbase.put.batch.size", 100, parser=parse_int,
    doc=("HBASE index: mutations (puts of new keys, deletes of deleted ones) sent in one batch, and at most this "
         "many a second, as Hudi's rate limiter allows; see hoodie.index.hbase.put.batch.size.autocompute."),
)
HBASE_PUT_BATCH_SIZE_AUTOCOMPUTE = ConfigProperty(
    "hoodie.index.hbase.put.batch.size.autocompute", False, parser=parse_bool,
    doc=("HBASE index: compute the put batch size from hoodie.index.hbase.qps.fraction, "
         "hoodie.index.hbase.max.qps.per.region.server and the table's region servers (Hudi's "
         "HBasePutBatchSizeCalculator)."),
)
HBASE_QPS_FRACTION = ConfigProperty(
    "hoodie.index.hbase.qps.fraction", 0.5, parser=parse_float,
    doc="HBASE index: this job's share of the region servers' QPS when the put batch size is computed.",
)
HBASE_MAX_QPS_PER_REGION_SERVER = ConfigProperty(
    "hoodie.index.hbase.max.qps.per.region.server", 1000, parser=parse_int,
    doc="HBASE index: the most requests a second a region server takes, across jobs, when the put batch size is "
        "computed.",
)
HBASE_ROLLBACK_SYNC = ConfigProperty(
    "hoodie.index.hbase.rollback.sync", False, parser=parse_bool,
    doc=("HBASE index: a rollback restores the previous version of every entry written since the rolled-back "
         "instant started (deleting entries that had none). Off, Hudi's default: entries of an instant that is "
         "not completed are ignored when tagging. The HBase table needs VERSIONS >= 2 for it."),
)
HBASE_UPDATE_PARTITION_PATH = ConfigProperty(
    "hoodie.hbase.index.update.partition.path", False, parser=parse_bool,
    doc=("HBASE index: true, a key written with another partition moves there (deleted in its old partition); "
         "false, Hudi's default, it is updated in its old partition."),
)
HBASE_CONNECTION_TIMEOUT_MS = ConfigProperty(
    "hoodie.index.hbase.zk.connection_timeout_ms", 15_000, parser=parse_int,
    doc=("HBASE index: how long a connection to, or a request of, the HBase Thrift gateway may take before the "
         "write fails with HBaseIndexUnavailableError naming the quorum (the table is left as it was)."),
)
HBASE_PROPERTIES = (
    HBASE_ZKQUORUM, HBASE_ZKPORT, HBASE_TABLE, HBASE_ZKNODE_PATH, HBASE_THRIFT_ADDRESS, HBASE_GET_BATCH_SIZE,
    HBASE_PUT_BATCH_SIZE, HBASE_PUT_BATCH_SIZE_AUTOCOMPUTE, HBASE_QPS_FRACTION, HBASE_MAX_QPS_PER_REGION_SERVER,
    HBASE_ROLLBACK_SYNC, HBASE_UPDATE_PARTITION_PATH, HBASE_CONNECTION_TIMEOUT_MS,
)
BLOOM_NUM_ENTRIES = ConfigProperty(
    "hoodie.index.bloom.num_entries", 60000, parser=parse_int,
    doc="Keys a base file's bloom filter is sized for.",
)
BLOOM_FPP = ConfigProperty(
    "hoodie.index.bloom.fpp", 1e-9, parser=parse_float,
    doc="The bloom filter's false positive rate at `hoodie.index.bloom.num_entries` keys.",
)
BLOOM_FILTER_TYPE = ConfigProperty(
    "hoodie.bloom.index.filter.type", "DYNAMIC_V0", choices=BLOOM_FILTER_TYPES,
    doc=("The bloom filter's format: DYNAMIC_V0 (grows up to `hoodie.bloom.index.filter.dynamic.max.entries`) or "
         "SIMPLE."),
)
BLOOM_MAX_ENTRIES = ConfigProperty(
    "hoodie.bloom.index.filter.dynamic.max.entries", 100000, parser=parse_int,
    doc="DYNAMIC_V0 bloom filters: the most keys the filter grows to.",
)
PRUNE_BY_RANGES = ConfigProperty(
    "hoodie.bloom.index.prune.by.ranges", True, parser=parse_bool,
    doc="Skip base files whose min/max record key cannot hold a key before probing their bloom filters.",
)
# HoodieStorageConfig.PARQUET_WITH_BLOOM_FILTER_ENABLED: base files carry a bloom filter unless this is false
# and the index is no bloom index (HoodieFileWriterFactory.enableBloomFilter)
PARQUET_BLOOM_FILTER = ConfigProperty(
    "hoodie.parquet.bloom.filter.enabled", True, parser=parse_bool,
    doc=("false: base files carry no bloom filter unless the index is BLOOM or GLOBAL_BLOOM (BUCKET, SIMPLE and "
         "GLOBAL_SIMPLE never read it; filling it is about 40% of a bulk insert's CPU)."),
)
MAX_FILE_SIZE = ConfigProperty(
    "hoodie.parquet.max.file.size", 120 * MB, parser=parse_int,
    doc="Target size of a base file in bytes: writes roll over to a new file group past it.",
)
SMALL_FILE_LIMIT = ConfigProperty(
    "hoodie.parquet.small.file.limit", 100 * MB, parser=parse_int,
    doc="A base file smaller than this many bytes is a small file: inserts fill small files first.",
)
# merge-on-read under an index that cannot index log files: how many of a partition's small file slices
# (smallest first) inserts may be packed into (HoodieWriteConfig.MERGE_SMALL_FILE_GROUP_CANDIDATES_LIMIT)
SMALL_FILE_CANDIDATES = ConfigProperty(
    "hoodie.merge.small.file.group.candidates.limit", 1, parser=parse_int,
    doc=("MERGE_ON_READ: how many of a partition's small files (smallest first, without log files) inserts may "
         "fill; each is rewritten whole. 0 sends inserts to new file groups."),
)
RECORD_SIZE_ESTIMATE = ConfigProperty(
    "hoodie.copyonwrite.record.size.estimate", None, parser=parse_int,
    doc=("Bytes per record assumed for file sizing until a commit tells the real size. Unset (ours; Hudi's default "
         "is 1024): a new table's first upsert or insert encodes its first 20,000 rows to learn it, as Hudi's 1024 "
         "bytes cut a first insert of ~100-byte records into files of a tenth of the target."),
)
COMPRESSION = ConfigProperty(
    "hoodie.parquet.compression.codec", "snappy", ("compression",), choices=COMPRESSION_CODECS,
    doc="The parquet codec of base files and parquet log blocks.",
)
COMBINE_BEFORE_UPSERT = ConfigProperty(
    "hoodie.combine.before.upsert", True, parser=parse_bool,
    doc="Deduplicate an upsert's batch by record key (the precombine field decides) before writing.",
)
COMBINE_BEFORE_INSERT = ConfigProperty(
    "hoodie.combine.before.insert", False, parser=parse_bool,
    doc="Deduplicate an insert's or bulk insert's batch by record key before writing.",
)
# an insert packed into a small file appends its records to the stored ones (HoodieConcatHandle), a key it
# brings again stays twice; false: it is merged into every stored copy of its key (HoodieMergeHandle). True
# by default since Hudi 0.15 (HUDI-6089)
ALLOW_DUPLICATE_ON_INSERTS = ConfigProperty(
    "hoodie.merge.allow.duplicate.on.inserts", True, parser=parse_bool,
    doc=("An `insert` packed into a small file appends its records, so a key stored again is held twice (Hudi's "
         "`HoodieConcatHandle`). false: each is merged into every stored copy of its key."),
)
LOG_BLOCK_FORMAT = ConfigProperty(
    "hoodie.logfile.data.block.format", "parquet", ("log.block.format",), choices=("parquet", "avro"),
    doc="MERGE_ON_READ: the format of data blocks in log files, parquet (fast) or avro.",
)
CDC_ENABLED = ConfigProperty(
    "hoodie.table.cdc.enabled", None, ("cdc.enabled",), parser=parse_bool,
    doc=("At table creation: write CDC logs beside rewritten base files, so change data capture reads them instead "
         "of comparing file slices."),
)
CDC_LOGGING_MODE = ConfigProperty(
    "hoodie.table.cdc.supplemental.logging.mode", None, ("cdc.supplemental.logging.mode",),
    choices=CDC_LOGGING_MODES,
    value_aliases=(("cdc_op_key", "OP_KEY_ONLY"), ("cdc_data_before", "DATA_BEFORE"),
                   ("cdc_data_before_after", "DATA_BEFORE_AFTER")),
    doc=("At table creation: what CDC logs hold: DATA_BEFORE_AFTER (both images, the default), DATA_BEFORE (no "
         "after image) or OP_KEY_ONLY (the operation and key). Hudi 0.13's `cdc_*` spellings are accepted."),
)
# each operation's tasks (HoodieWriteConfig's *_PARALLELISM_VALUE, 0 by default): 0 infers them from the input
UPSERT_PARALLELISM = ConfigProperty(
    "hoodie.upsert.shuffle.parallelism", 0, ("parallelism",), parser=parse_int,
    doc=("upsert: tasks; 0: from the input's size, no more than the partitions the batch touches and the cores "
         "(Hudi's 0 keeps the input's partition count)."),
)
INSERT_PARALLELISM = ConfigProperty(
    "hoodie.insert.shuffle.parallelism", 0, parser=parse_int,
    doc="insert and the overwrites: tasks, as `hoodie.upsert.shuffle.parallelism` for an upsert.",
)
DELETE_PARALLELISM = ConfigProperty(
    "hoodie.delete.shuffle.parallelism", 0, parser=parse_int,
    doc="delete: tasks, as `hoodie.upsert.shuffle.parallelism` for an upsert.",
)
BULK_INSERT_SORT_MODE = ConfigProperty(
    "hoodie.bulkinsert.sort.mode", None, ("bulkinsert.sort.mode",), choices=BULK_INSERT_SORT_MODES,
    doc=("bulk_insert. Unset (ours; Hudi's default is NONE): size-balanced, the input is counted by partition and "
         "each partition's rows cut into `ceil(bytes / (0.9 * hoodie.parquet.max.file.size))` file units by key "
         "hash, spread over the tasks heaviest first, so any input partitioning writes files near the target size, "
         "with no sort. Hudi's modes by name: NONE (each task writes its input as it is: a file per input partition "
         "in each table partition), GLOBAL_SORT (sorted by partition path and key across tasks), PARTITION_SORT "
         "(shuffled by partition path, sorted by path and key in each task), PARTITION_PATH_REPARTITION (shuffled "
         "by partition path), PARTITION_PATH_REPARTITION_AND_SORT (shuffled and sorted by partition path)."),
)
BULK_INSERT_PARALLELISM = ConfigProperty(
    "hoodie.bulkinsert.shuffle.parallelism", 0, ("bulkinsert.shuffle.parallelism",), parser=parse_int,
    doc=("bulk_insert: tasks of every mode but NONE; 0: about a file's worth of bytes a task, a multiple of the cores "
         "(Hudi's 0 keeps the input's partition count, which says nothing of its size)."),
)
# HoodieInternalConfig.STATIC_OVERWRITE_PARTITION_PATHS: the partitions an insert_overwrite replaces besides those
# its records fall in (set by SQL INSERT OVERWRITE ... PARTITION (...) in static mode, so an empty source
# still empties them: SparkInsertOverwriteCommitActionExecutor.getPartitionToReplacedFileIds)
STATIC_OVERWRITE_PARTITIONS = ConfigProperty(
    "hoodie.static.overwrite.partition.paths", (), parser=parse_path_list,
    doc=("insert_overwrite: partition paths (comma separated) it replaces even when no record falls in them. SQL "
         "`INSERT OVERWRITE ... PARTITION (...)` sets it."),
)

INLINE_COMPACT = ConfigProperty(
    "hoodie.compact.inline", False, ("compact.inline",), parser=parse_bool,
    doc=("MERGE_ON_READ: compact after every `hoodie.compact.inline.max.delta.commits` delta commits, in the "
         "writing job."),
)
MAX_DELTA_COMMITS = ConfigProperty(
    "hoodie.compact.inline.max.delta.commits", 5, parser=parse_int,
    doc="Delta commits between inline compactions.",
)
COMPACTION_STRATEGY = ConfigProperty(
    "hoodie.compaction.strategy", "LogFileSizeBasedCompactionStrategy",
    doc=("Which file slices a compaction plan takes: `LogFileSizeBasedCompactionStrategy` (largest logs first, up "
         "to `hoodie.compaction.target.io`), `DayBasedCompactionStrategy` (the latest "
         "`hoodie.compaction.daybased.target.partitions` partitions) or `UnBoundedCompactionStrategy` (every slice "
         "with logs)."),
)
DAYBASED_PARTITIONS = ConfigProperty(
    "hoodie.compaction.daybased.target.partitions", 10, parser=parse_int,
    doc="DayBasedCompactionStrategy: how many of the latest partitions a plan takes.",
)
TARGET_IO = ConfigProperty(
    "hoodie.compaction.target.io", 500 * 1024, parser=parse_int,
    doc="LogFileSizeBasedCompactionStrategy: the most megabytes of logs one plan reads.",
)
AUTO_CLEAN = ConfigProperty(
    "hoodie.clean.automatic", True, ("clean.automatic",), parser=parse_bool,
    doc="Clean after each commit (the cleaner policy below decides what goes).",
)
CLEANER_POLICY = ConfigProperty(
    "hoodie.cleaner.policy", "KEEP_LATEST_COMMITS",
    choices=("KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS", "KEEP_LATEST_BY_HOURS"),
    doc=("KEEP_LATEST_COMMITS: keep the file versions the last `hoodie.cleaner.commits.retained` commits need. "
         "KEEP_LATEST_FILE_VERSIONS: keep `hoodie.cleaner.fileversions.retained` versions of each file group. "
         "KEEP_LATEST_BY_HOURS: keep the file versions the commits of the last `hoodie.cleaner.hours.retained` "
         "hours need. Under every policy the files of a savepoint stay."),
)
COMMITS_RETAINED = ConfigProperty(
    "hoodie.cleaner.commits.retained", 10, parser=parse_int,
    doc="KEEP_LATEST_COMMITS: how many commits stay readable by time travel and incremental reads.",
)
FILE_VERSIONS_RETAINED = ConfigProperty(
    "hoodie.cleaner.fileversions.retained", 3, parser=parse_int,
    doc="KEEP_LATEST_FILE_VERSIONS: file versions kept per file group.",
)
HOURS_RETAINED = ConfigProperty(
    "hoodie.cleaner.hours.retained", 24, parser=parse_int,
    doc="KEEP_LATEST_BY_HOURS: how many hours of commits stay readable by time travel and incremental reads.",
)
AUTO_ARCHIVE = ConfigProperty(
    "hoodie.archive.automatic", True, parser=parse_bool,
    doc="Archive old instants after each commit.",
)
KEEP_MIN_COMMITS = ConfigProperty(
    "hoodie.keep.min.commits", 20, parser=parse_int,
    doc="Archival keeps at least this many commits on the active timeline.",
)
KEEP_MAX_COMMITS = ConfigProperty(
    "hoodie.keep.max.commits", 30, parser=parse_int,
    doc="Archival starts once the active timeline holds more commits than this.",
)
ARCHIVE_BEYOND_SAVEPOINT = ConfigProperty(
    "hoodie.archive.beyond.savepoint", False, parser=parse_bool,
    doc=("Archive commits older and newer than a savepoint, keeping the savepointed commits themselves; off, "
         "archival stops at the earliest savepoint. A table archived beyond a savepoint cannot be restored to it."),
)
# Clustering (Hudi's HoodieClusteringConfig, 0.15 names and defaults)
CLUSTERING_PLAN_STRATEGIES = (
    "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy",
    "org.apache.hudi.client.clustering.plan.strategy.JavaSizeBasedClusteringPlanStrategy",
)
CLUSTERING_EXECUTION_STRATEGIES = (
    "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy",
    "org.apache.hudi.client.clustering.run.strategy.JavaSortAndSizeExecutionStrategy",
)
CLUSTERING_UPDATE_STRATEGIES = (
    "org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy",
    "org.apache.hudi.client.clustering.update.strategy.SparkAllowUpdateStrategy",
)
CLUSTERING_PARTITION_FILTER_MODES = ("NONE", "RECENT_DAYS", "SELECTED_PARTITIONS", "DAY_ROLLING")
LAYOUT_OPTIMIZE_STRATEGIES = ("linear", "z-order", "hilbert")
CURVE_BUILD_METHODS = ("direct", "sample")


def _short_class_names(classes: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    return tuple((c.rsplit(".", 1)[-1], c) for c in classes)


CLUSTERING_INLINE = ConfigProperty(
    "hoodie.clustering.inline", False, ("hoodie.datasource.clustering.inline.enable",), parser=parse_bool,
    doc=("Schedule and run a clustering in the writing job after every `hoodie.clustering.inline.max.commits` "
         "commits."),
)
CLUSTERING_INLINE_MAX_COMMITS = ConfigProperty(
    "hoodie.clustering.inline.max.commits", 4, parser=parse_int,
    doc="Commits since the last clustering before inline clustering schedules another.",
)
CLUSTERING_ASYNC = ConfigProperty(
    "hoodie.clustering.async.enabled", False, ("hoodie.datasource.clustering.async.enable",), parser=parse_bool,
    doc=("Clustering runs apart from the writers (another process calls `run_clustering`); scheduling then waits "
         "for `hoodie.clustering.async.max.commits` commits since the last clustering."),
)
CLUSTERING_ASYNC_MAX_COMMITS = ConfigProperty(
    "hoodie.clustering.async.max.commits", 4, parser=parse_int,
    doc="Async clustering: commits since the last clustering before another is scheduled.",
)
CLUSTERING_SCHEDULE_INLINE = ConfigProperty(
    "hoodie.clustering.schedule.inline", False, parser=parse_bool,
    doc=("Writers schedule clustering plans (as `hoodie.clustering.inline.max.commits` says) but do not run them: "
         "another process executes them (`run_clustering`)."),
)
CLUSTERING_PLAN_STRATEGY = ConfigProperty(
    "hoodie.clustering.plan.strategy.class", CLUSTERING_PLAN_STRATEGIES[0], choices=CLUSTERING_PLAN_STRATEGIES,
    value_aliases=_short_class_names(CLUSTERING_PLAN_STRATEGIES),
    doc="Which file slices a clustering plan takes: the size-based strategy (small base files, grouped by size).",
)
CLUSTERING_EXECUTION_STRATEGY = ConfigProperty(
    "hoodie.clustering.execution.strategy.class", CLUSTERING_EXECUTION_STRATEGIES[0],
    choices=CLUSTERING_EXECUTION_STRATEGIES, value_aliases=_short_class_names(CLUSTERING_EXECUTION_STRATEGIES),
    doc="How a plan runs: sort each group's records (the sort columns, the layout strategy) and write files of the "
        "target size.",
)
CLUSTERING_SMALL_FILE_LIMIT = ConfigProperty(
    "hoodie.clustering.plan.strategy.small.file.limit", 300 * MB, parser=parse_int,
    doc="Only file slices whose base file is smaller than this many bytes are clustered.",
)
CLUSTERING_TARGET_FILE_MAX_BYTES = ConfigProperty(
    "hoodie.clustering.plan.strategy.target.file.max.bytes", 1024 * MB, parser=parse_int,
    doc="The size of the files clustering writes.",
)
CLUSTERING_MAX_BYTES_PER_GROUP = ConfigProperty(
    "hoodie.clustering.plan.strategy.max.bytes.per.group", 2048 * MB, parser=parse_int,
    doc="The most bytes of base files one clustering group takes (a group is one task).",
)
CLUSTERING_MAX_NUM_GROUPS = ConfigProperty(
    "hoodie.clustering.plan.strategy.max.num.groups", 30, parser=parse_int,
    doc="The most clustering groups one plan holds.",
)
CLUSTERING_SORT_COLUMNS = ConfigProperty(
    "hoodie.clustering.plan.strategy.sort.columns", (), parser=parse_field_list,
    doc="The columns clustering sorts each group's records by (comma separated), in the layout strategy's order.",
)
CLUSTERING_SINGLE_GROUP = ConfigProperty(
    "hoodie.clustering.plan.strategy.single.group.clustering.enabled", True, parser=parse_bool,
    doc=("false: a partition's last group is left out of the plan when it holds a single file slice (unless sort "
         "columns are set)."),
)
CLUSTERING_PARTITION_FILTER_MODE = ConfigProperty(
    "hoodie.clustering.plan.partition.filter.mode", "NONE", choices=CLUSTERING_PARTITION_FILTER_MODES,
    doc=("Which partitions a plan looks at: NONE (all), RECENT_DAYS (the latest "
         "`hoodie.clustering.plan.strategy.daybased.lookback.partitions`, sorted by name, after skipping "
         "`...skipfromlatest.partitions`), SELECTED_PARTITIONS (between `...cluster.begin.partition` and "
         "`...cluster.end.partition`), DAY_ROLLING (every 24th partition, by the hour of the day)."),
)
CLUSTERING_LOOKBACK_PARTITIONS = ConfigProperty(
    "hoodie.clustering.plan.strategy.daybased.lookback.partitions", 2, parser=parse_int,
    doc="RECENT_DAYS: how many of the latest partitions a plan looks at.",
)
CLUSTERING_SKIP_LATEST_PARTITIONS = ConfigProperty(
    "hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions", 0, parser=parse_int,
    doc="RECENT_DAYS: how many of the latest partitions are skipped first.",
)
CLUSTERING_BEGIN_PARTITION = ConfigProperty(
    "hoodie.clustering.plan.strategy.cluster.begin.partition", None,
    doc="SELECTED_PARTITIONS: the first partition path (inclusive, by name).",
)
CLUSTERING_END_PARTITION = ConfigProperty(
    "hoodie.clustering.plan.strategy.cluster.end.partition", None,
    doc="SELECTED_PARTITIONS: the last partition path (inclusive, by name).",
)
CLUSTERING_PARTITIONS_SELECTED = ConfigProperty(
    "hoodie.clustering.plan.strategy.partition.selected", (), parser=parse_path_list,
    doc="The partition paths (comma separated) a plan looks at, instead of every partition.",
)
CLUSTERING_PARTITION_REGEX = ConfigProperty(
    "hoodie.clustering.plan.strategy.partition.regex.pattern", None,
    doc="Only partitions whose path matches this regular expression (whole) are clustered.",
)
CLUSTERING_UPDATES_STRATEGY = ConfigProperty(
    "hoodie.clustering.updates.strategy", CLUSTERING_UPDATE_STRATEGIES[0], choices=CLUSTERING_UPDATE_STRATEGIES,
    value_aliases=_short_class_names(CLUSTERING_UPDATE_STRATEGIES),
    doc=("What a write does with updates to file groups a pending clustering will rewrite: "
         "`SparkRejectUpdateStrategy` fails the write (`ClusteringUpdateError`), nothing written; "
         "`SparkAllowUpdateStrategy` writes them, and the clustering then fails its commit (or is rolled back first, "
         "with `hoodie.clustering.rollback.pending.replacecommit.on.conflict`)."),
)
CLUSTERING_ROLLBACK_PENDING_ON_CONFLICT = ConfigProperty(
    "hoodie.clustering.rollback.pending.replacecommit.on.conflict", False, parser=parse_bool,
    doc=("`SparkAllowUpdateStrategy`: a write updating file groups of a pending clustering rolls that clustering "
         "back before it commits."),
)
LAYOUT_OPTIMIZE_STRATEGY = ConfigProperty(
    "hoodie.layout.optimize.strategy", "linear", choices=LAYOUT_OPTIMIZE_STRATEGIES,
    value_aliases=(("zorder", "z-order"),),
    doc=("How clustering orders records by the sort columns: `linear` (lexicographic), `z-order` or `hilbert` "
         "(space-filling curves over all sort columns, so that a filter on any of them skips files)."),
)
LAYOUT_CURVE_BUILD_METHOD = ConfigProperty(
    "hoodie.layout.optimize.curve.build.method", "direct", choices=CURVE_BUILD_METHODS,
    doc=("`direct`: curve coordinates from the values themselves; `sample`: from their ranks among a sample of "
         "`hoodie.layout.optimize.build.curve.sample.size` values (columns of very different ranges)."),
)
LAYOUT_CURVE_SAMPLE_SIZE = ConfigProperty(
    "hoodie.layout.optimize.build.curve.sample.size", 200_000, parser=parse_int,
    doc="`sample`: the values sampled per column to rank the others by.",
)
CLUSTERING_PROPERTIES = (
    CLUSTERING_INLINE, CLUSTERING_INLINE_MAX_COMMITS, CLUSTERING_ASYNC, CLUSTERING_ASYNC_MAX_COMMITS,
    CLUSTERING_SCHEDULE_INLINE, CLUSTERING_PLAN_STRATEGY, CLUSTERING_EXECUTION_STRATEGY, CLUSTERING_SMALL_FILE_LIMIT,
    CLUSTERING_TARGET_FILE_MAX_BYTES, CLUSTERING_MAX_BYTES_PER_GROUP, CLUSTERING_MAX_NUM_GROUPS,
    CLUSTERING_SORT_COLUMNS, CLUSTERING_SINGLE_GROUP, CLUSTERING_PARTITION_FILTER_MODE, CLUSTERING_LOOKBACK_PARTITIONS,
    CLUSTERING_SKIP_LATEST_PARTITIONS, CLUSTERING_BEGIN_PARTITION, CLUSTERING_END_PARTITION,
    CLUSTERING_PARTITIONS_SELECTED, CLUSTERING_PARTITION_REGEX, CLUSTERING_UPDATES_STRATEGY,
    CLUSTERING_ROLLBACK_PENDING_ON_CONFLICT, LAYOUT_OPTIMIZE_STRATEGY, LAYOUT_CURVE_BUILD_METHOD,
    LAYOUT_CURVE_SAMPLE_SIZE,
)
SERVICE_PROPERTIES = (
    INLINE_COMPACT, MAX_DELTA_COMMITS, COMPACTION_STRATEGY, DAYBASED_PARTITIONS, TARGET_IO, AUTO_CLEAN,
    CLEANER_POLICY, COMMITS_RETAINED, FILE_VERSIONS_RETAINED, AUTO_ARCHIVE, KEEP_MIN_COMMITS, KEEP_MAX_COMMITS,
    HOURS_RETAINED, ARCHIVE_BEYOND_SAVEPOINT,
    *CLUSTERING_PROPERTIES,
)

# The metadata table (Hudi's HoodieMetadataConfig, 0.15 names and defaults)
METADATA_ENABLE = ConfigProperty(
    "hoodie.metadata.enable", True, parser=parse_bool,
    doc=("Keep Apache Hudi's metadata table (`.hoodie/metadata`): every commit, clean, rollback and compaction "
         "records its file changes there, in the same transaction, so readers list no data folder. False: a "
         "write deletes the metadata table, as Hudi does. On a read: false lists storage even when the table has a "
         "ready metadata table (Hudi's readers take it only when asked; ours whenever its `files` partition is "
         "ready)."),
)
METADATA_COLUMN_STATS = ConfigProperty(
    "hoodie.metadata.index.column.stats.enable", False, parser=parse_bool,
    doc="Keep the metadata table's `column_stats` partition: each file's column ranges, for data skipping.",
)
METADATA_COLUMN_STATS_COLUMNS = ConfigProperty(
    "hoodie.metadata.index.column.stats.column.list", (), parser=parse_field_list,
    doc="The columns `column_stats` indexes, comma separated; all columns (meta columns included) when unset.",
)
METADATA_COLUMN_STATS_FILE_GROUPS = ConfigProperty(
    "hoodie.metadata.index.column.stats.file.group.count", 2, parser=parse_int,
    doc="File groups of the `column_stats` partition, fixed when it is built.",
)
METADATA_BLOOM_FILTERS = ConfigProperty(
    "hoodie.metadata.index.bloom.filter.enable", False, parser=parse_bool,
    doc="Keep the metadata table's `bloom_filters` partition: each base file's bloom filter of record keys.",
)
METADATA_BLOOM_FILTER_FILE_GROUPS = ConfigProperty(
    "hoodie.metadata.index.bloom.filter.file.group.count", 4, parser=parse_int,
    doc="File groups of the `bloom_filters` partition, fixed when it is built.",
)
METADATA_RECORD_INDEX = ConfigProperty(
    "hoodie.metadata.record.index.enable", False, parser=parse_bool,
    doc="Keep the metadata table's `record_index` partition: the file group of every record key.",
)
METADATA_RECORD_INDEX_MIN_FILE_GROUPS = ConfigProperty(
    "hoodie.metadata.record.index.min.filegroup.count", 10, parser=parse_int,
    doc="`record_index`: the fewest file groups it is built with.",
)
METADATA_RECORD_INDEX_MAX_FILE_GROUPS = ConfigProperty(
    "hoodie.metadata.record.index.max.filegroup.count", 10000, parser=parse_int,
    doc="`record_index`: the most file groups it is built with.",
)
METADATA_RECORD_INDEX_MAX_FILE_GROUP_SIZE = ConfigProperty(
    "hoodie.metadata.record.index.max.filegroup.size", 1024 * MB, parser=parse_int,
    doc="`record_index`: the bytes a file group is sized for when the partition is built.",
)
METADATA_RECORD_INDEX_GROWTH_FACTOR = ConfigProperty(
    "hoodie.metadata.record.index.growth.factor", 2.0, parser=parse_float,
    doc="`record_index`: how many times the keys present when it is built its file groups are sized for.",
)
METADATA_COMPACT_DELTA_COMMITS = ConfigProperty(
    "hoodie.metadata.compact.max.delta.commits", 10, parser=parse_int,
    doc="Delta commits of the metadata table between its compactions.",
)
METADATA_MAX_DELTA_COMMITS_WHEN_PENDING = ConfigProperty(
    "hoodie.metadata.max.deltacommits.when_pending", 1000, parser=parse_int,
    doc=("Delta commits the metadata table may gather without a compaction while a data instant before them "
         "stays pending; past it, a write fails saying which instant to resolve."),
)
METADATA_PROPERTIES = (
    METADATA_ENABLE, METADATA_COLUMN_STATS, METADATA_COLUMN_STATS_COLUMNS, METADATA_COLUMN_STATS_FILE_GROUPS,
    METADATA_BLOOM_FILTERS, METADATA_BLOOM_FILTER_FILE_GROUPS, METADATA_RECORD_INDEX,
    METADATA_RECORD_INDEX_MIN_FILE_GROUPS, METADATA_RECORD_INDEX_MAX_FILE_GROUPS,
    METADATA_RECORD_INDEX_MAX_FILE_GROUP_SIZE, METADATA_RECORD_INDEX_GROWTH_FACTOR, METADATA_COMPACT_DELTA_COMMITS,
    METADATA_MAX_DELTA_COMMITS_WHEN_PENDING,
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
    doc=("single_writer, or optimistic_concurrency_control (`occ`): several writers (processes, machines) on one "
         "table, each committing under the table lock after a conflict check."),
)
FAILED_WRITES_POLICY = ConfigProperty(
    "hoodie.cleaner.policy.failed.writes", None, ("cleaner.policy.failed.writes",), choices=FAILED_WRITES_POLICIES,
    doc=("Who rolls back failed writes: the next writer (EAGER, the default for a single writer) or also the "
         "cleaner (LAZY, the default under optimistic concurrency control). A write whose heartbeat is alive is "
         "never rolled back."),
)
HEARTBEAT_INTERVAL_MS = ConfigProperty(
    "hoodie.client.heartbeat.interval_in_ms", 60_000, parser=parse_int,
    doc="How often a writer renews its heartbeat (`.hoodie/.heartbeat/<instant>`).",
)
HEARTBEAT_MISSES = ConfigProperty(
    "hoodie.client.heartbeat.tolerable.misses", 2, parser=parse_int,
    doc="A pending write whose heartbeat is older than interval x misses is a failed write.",
)
LOCK_PROVIDER = ConfigProperty(
    "hoodie.write.lock.provider", None, ("lock.provider",),
    choices=(IN_PROCESS_LOCK, STORAGE_LOCK, ZOOKEEPER_LOCK),
    value_aliases=(("in_process", IN_PROCESS_LOCK), ("storage", STORAGE_LOCK), (FILE_SYSTEM_LOCK, STORAGE_LOCK),
                   ("zookeeper", ZOOKEEPER_LOCK)),
    doc=("The table lock under optimistic concurrency control. `storage` (Hudi's `StorageBasedLockProvider`; "
         "`FileSystemBasedLockProvider` selects it too, the default): a lease under `.hoodie/.lock/`, no service "
         "needed. `in_process` (`InProcessLockProvider`): writers of one Python process. `zookeeper` "
         "(`ZookeeperBasedLockProvider`): a ZooKeeper mutex Hudi's Java writers share."),
)
LOCK_WAIT_MS = ConfigProperty(
    "hoodie.write.lock.wait_time_ms", 60_000, parser=parse_int,
    doc="Taking the lock: how long each attempt waits.",
)
LOCK_NUM_RETRIES = ConfigProperty(
    "hoodie.write.lock.num_retries", 15, parser=parse_int,
    doc="Taking the lock: attempts after the first; then `LockTimeoutError` naming the lock and its holder.",
)
LOCK_RETRY_WAIT_MS = ConfigProperty(
    "hoodie.write.lock.wait_time_ms_between_retry", 1_000, parser=parse_int,
    doc="Taking the lock: the pause between attempts.",
)
CONFLICT_RETRIES = ConfigProperty(
    "hoodie.write.num.retries.on.conflict", 0, parser=parse_int,
    doc="A write that loses a conflict (`HoodieWriteConflictError`) runs again from the start this many times.",
)
STORAGE_LOCK_VALIDITY_S = ConfigProperty(
    "hoodie.write.lock.storage.validity.timeout.secs", 300, parser=parse_int,
    doc="The storage lock's lease: a killed holder's lock is free after this many seconds.",
)
STORAGE_LOCK_RENEW_S = ConfigProperty(
    "hoodie.write.lock.storage.renew.interval.secs", 30, parser=parse_int,
    doc="The storage lock's holder renews its lease this often.",
)
ZK_URL = ConfigProperty(
    "hoodie.write.lock.zookeeper.url", None,
    doc=("The ZooKeeper lock: the server(s) to connect to (`pip install 'hoodie-datasource[zookeeper]'`). Required "
         "with the zookeeper lock provider."),
)
ZK_PORT = ConfigProperty(
    "hoodie.write.lock.zookeeper.port", None, parser=parse_int,
    doc="The ZooKeeper lock: the servers' port. Required with the zookeeper lock provider.",
)
ZK_BASE_PATH = ConfigProperty(
    "hoodie.write.lock.zookeeper.base_path", None,
    doc=("The ZooKeeper lock: the parent znode of the lock (created if absent). Required with the zookeeper lock "
         "provider."),
)
ZK_LOCK_KEY = ConfigProperty(
    "hoodie.write.lock.zookeeper.lock_key", None,
    doc="The ZooKeeper lock: the lock's znode under the base path. Default: the table name.",
)
ZK_SESSION_TIMEOUT_MS = ConfigProperty(
    "hoodie.write.lock.zookeeper.session_timeout_ms", 60_000, parser=parse_int,
    doc="The ZooKeeper lock: session timeout; the lock is released when its holder's session expires.",
)
ZK_CONNECTION_TIMEOUT_MS = ConfigProperty(
    "hoodie.write.lock.zookeeper.connection_timeout_ms", 15_000, parser=parse_int,
    doc="The ZooKeeper lock: how long to wait for a connection.",
)
CONCURRENCY_PROPERTIES = (
    CONCURRENCY_MODE, FAILED_WRITES_POLICY, HEARTBEAT_INTERVAL_MS, HEARTBEAT_MISSES, LOCK_PROVIDER, LOCK_WAIT_MS,
    LOCK_NUM_RETRIES, LOCK_RETRY_WAIT_MS, CONFLICT_RETRIES, STORAGE_LOCK_VALIDITY_S, STORAGE_LOCK_RENEW_S, ZK_URL,
    ZK_PORT, ZK_BASE_PATH, ZK_LOCK_KEY, ZK_SESSION_TIMEOUT_MS, ZK_CONNECTION_TIMEOUT_MS,
)

QUERY_TYPE = ConfigProperty(
    "hoodie.datasource.query.type", "snapshot", ("query", "query.type", "hoodie.datasource.view.type"),
    choices=QUERY_TYPES,
    doc=("snapshot (the latest state: base files merged with logs), read_optimized (base files only: on "
         "MERGE_ON_READ, misses what compaction has not folded in yet) or incremental (what changed after "
         "`begin.instant`)."),
)
BEGIN_INSTANT = ConfigProperty(
    "hoodie.datasource.read.begin.instanttime", None, ("begin.instant", "begin.instanttime"),
    doc=("Incremental reads: the range is (begin, end]. An instant in any form `as.of.instant` takes, or `000` for "
         "the start of the table; a begin after the end is an error. On a table of version 8 or 9 (Apache Hudi "
         "1.x) the bounds are completion times, as in Hudi 1.x: the writes that completed in the range."),
)
END_INSTANT = ConfigProperty(
    "hoodie.datasource.read.end.instanttime", None, ("end.instant", "end.instanttime"),
    doc=("Incremental reads: the end of the range (inclusive; a completion time on a table of version 8 or 9). "
         "Default: the latest commit."),
)
AS_OF_INSTANT = ConfigProperty(
    "as.of.instant", None, ("hoodie.datasource.read.as.of.instant", "timestampasof"),
    doc=("Time travel: read the table as of an instant: `yyyyMMddHHmmss`, `yyyyMMddHHmmssSSS`, `yyyy-MM-dd`, "
         "`yyyy-MM-dd HH:mm:ss[.SSS]` (`T` may replace the space). Before the table's first commit: no rows, with "
         "a warning."),
)
READ_SPLIT_SIZE = ConfigProperty(
    "hoodie.read.split.size", 128 * MB, ("split.size",), parser=parse_int,
    hudi=False,
    doc="Reads: file slices are coalesced into read partitions of at most this many bytes.",
)
READ_PARALLELISM = ConfigProperty(
    "hoodie.read.parallelism", 0, ("read.parallelism",), parser=parse_int,
    hudi=False,
    doc=("Reads: a smaller table is split so that this many tasks read. 0: Spark's default parallelism (in a shim "
         "session), else the driver's cores."),
)
INCREMENTAL_FORMAT = ConfigProperty(
    "hoodie.datasource.query.incremental.format", "latest_state", ("incremental.format",),
    choices=INCREMENTAL_FORMATS,
    doc=("Incremental reads: latest_state (the latest version of each record changed in the range) or cdc (every "
         "insert, update and delete, with before and after images)."),
)
INCR_FALLBACK_FULL_SCAN = ConfigProperty(
    "hoodie.datasource.read.incr.fallback.fulltablescan.enable", False, ("incr.fallback.fulltablescan.enable",),
    parser=parse_bool,
    doc=("An incremental range past the read window (files cleaned, instants archived) is answered from the "
         "current snapshot filtered on `_hoodie_commit_time`, with a warning, instead of failing with "
         "`ReadWindowError`."),
)
DATA_SKIPPING = ConfigProperty(
    "hoodie.enable.data.skipping", True, ("data.skipping",), parser=parse_bool,
    doc=("Spark reads (through the jvm-shim) leave out the file slices whose column ranges in the metadata table's "
         "`column_stats` partition no row of the query's filters can fall in; a file without statistics, or a filter "
         "the ranges cannot judge, is read. On by default, as in Hudi 1.x (Hudi 0.15 defaults to false): it never "
         "changes a result, and costs a lookup of the filtered columns' ranges only on tables whose metadata table "
         "has that partition."),
)
# Structured Streaming reads (Hudi's DataSourceReadOptions.START_OFFSET and INCREMENTAL_READ_HANDLE_HOLLOW_COMMIT;
# the two read limits are this library's: Hudi's Spark source has none)
STREAMING_START_OFFSET = ConfigProperty(
    "hoodie.datasource.streaming.startOffset", "earliest", ("startOffset",),
    doc=("Streaming reads: where a new query starts: earliest, latest or an instant (a completion time on a table "
         "of version 8 or 9). A restarted query resumes from its checkpoint."),
)
STREAMING_MAX_INSTANTS = ConfigProperty(
    "hoodie.datasource.streaming.max.instants.per.trigger", None, ("maxInstantsPerTrigger",), parser=parse_int,
    hudi=False,
    doc="Streaming reads: at most this many commits per micro-batch.",
)
STREAMING_MAX_ROWS = ConfigProperty(
    "hoodie.datasource.streaming.max.rows.per.trigger", None, ("maxRowsPerTrigger",), parser=parse_int,
    hudi=False,
    doc=("Streaming reads: about this many rows per micro-batch (whole commits, at least one, counted from their "
         "metadata)."),
)
HOLLOW_COMMIT = ConfigProperty(
    "hoodie.datasource.read.handle.hollow.commit", None, choices=HOLLOW_COMMIT_POLICIES,
    value_aliases=(("USE_STATE_TRANSITION_TIME", "USE_TRANSITION_TIME"),),
    doc=("Reads past a write still in flight whose instant is earlier than a completed one: BLOCK (streams: wait "
         "until it completes or is rolled back) or FAIL. USE_TRANSITION_TIME is refused (table version 6 records "
         "no completion times)."),
)

# Structured Streaming sink (Hudi's DataSourceWriteOptions.STREAMING_*)
STREAMING_CHECKPOINT_IDENTIFIER = ConfigProperty(
    "hoodie.datasource.write.streaming.checkpoint.identifier", "default_single_writer",
    ("streaming.checkpoint.identifier",),
    doc=("Streaming sink: this query's name in the commits' `_hudi_streaming_sink_checkpoint`; queries writing one "
         "table need one each."),
)
STREAMING_RETRY_COUNT = ConfigProperty(
    "hoodie.datasource.write.streaming.retry.count", 3, ("streaming.retry.count",), parser=parse_int,
    doc="Streaming sink: attempts at a failing micro-batch (a bad option, schema or record fails at once).",
)
STREAMING_RETRY_INTERVAL_MS = ConfigProperty(
    "hoodie.datasource.write.streaming.retry.interval.ms", 2000, ("streaming.retry.interval.ms",), parser=parse_int,
    doc="Streaming sink: wait before the second attempt, doubled before each later one.",
)
STREAMING_IGNORE_FAILED_BATCH = ConfigProperty(
    "hoodie.datasource.write.streaming.ignore.failed.batch", False, ("streaming.ignore.failed.batch",),
    parser=parse_bool,
    doc=("Streaming sink: log a micro-batch that still fails and go on without its rows, instead of failing the "
         "query."),
)
STREAMING_PROPERTIES = (
    STREAMING_CHECKPOINT_IDENTIFIER, STREAMING_RETRY_COUNT, STREAMING_RETRY_INTERVAL_MS, STREAMING_IGNORE_FAILED_BATCH,
)

WRITE_PROPERTIES = (
    TABLE_NAME, RECORD_KEY, PARTITION_PATH, PRECOMBINE, OPERATION, TABLE_TYPE, HIVE_STYLE, URL_ENCODE,
    KEYGEN_CLASS, KEYGEN_TYPE, *TIMESTAMP_KEYGEN_PROPERTIES, PAYLOAD_CLASS, INDEX_TYPE, BUCKET_NUM_BUCKETS,
    BUCKET_HASH_FIELD, BUCKET_ENGINE,
    BLOOM_UPDATE_PARTITION_PATH, SIMPLE_UPDATE_PARTITION_PATH, RECORD_INDEX_UPDATE_PARTITION_PATH, BLOOM_INDEX_USE_METADATA,
    *HBASE_PROPERTIES, BLOOM_NUM_ENTRIES, BLOOM_FPP, BLOOM_FILTER_TYPE,
    BLOOM_MAX_ENTRIES, PRUNE_BY_RANGES, PARQUET_BLOOM_FILTER, MAX_FILE_SIZE,
    SMALL_FILE_LIMIT, SMALL_FILE_CANDIDATES, RECORD_SIZE_ESTIMATE, ALLOW_DUPLICATE_ON_INSERTS,
    COMPRESSION, COMBINE_BEFORE_UPSERT, COMBINE_BEFORE_INSERT, UPSERT_PARALLELISM, INSERT_PARALLELISM,
    DELETE_PARALLELISM, LOG_BLOCK_FORMAT, CDC_ENABLED,
    CDC_LOGGING_MODE, BULK_INSERT_SORT_MODE, BULK_INSERT_PARALLELISM, STATIC_OVERWRITE_PARTITIONS,
)
READ_PROPERTIES = (
    QUERY_TYPE, BEGIN_INSTANT, END_INSTANT, AS_OF_INSTANT, READ_SPLIT_SIZE, READ_PARALLELISM, INCR_FALLBACK_FULL_SCAN,
    STREAMING_START_OFFSET, STREAMING_MAX_INSTANTS, STREAMING_MAX_ROWS, HOLLOW_COMMIT, INCREMENTAL_FORMAT, DATA_SKIPPING,
)

# Keys Spark itself adds to the options it hands a data source.
SPARK_PASSTHROUGH = ("path", "paths", "location", "provider", "owner", "external", "is_managed_location")

CATALOG = OptionCatalog(
    WRITE_PROPERTIES + SERVICE_PROPERTIES + READ_PROPERTIES + CONCURRENCY_PROPERTIES + STREAMING_PROPERTIES
    + METADATA_PROPERTIES
)
