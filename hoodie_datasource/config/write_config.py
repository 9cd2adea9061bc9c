"""WriteConfig: every write option resolved and validated once, before any file is touched."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from hoodie_datasource.config import keys as k
from hoodie_datasource.config.hbase_index_config import HBaseIndexConfig, thrift_address
from hoodie_datasource.config.index_type import IndexType
from hoodie_datasource.config.key_generator import partition_specs, resolve_key_generator
from hoodie_datasource.config.table_config import (
    CDC_DEFAULT_MODE,
    PAYLOAD_OVERWRITE_LATEST,
    TableConfig,
    orders_by_event_time,
)
from hoodie_datasource.config.write_operation import WriteOperation
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.table.keygen import KeyGenerator

_TABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# the option giving each operation's tasks (the overwrites take the insert's, as in Hudi's executors)
_OPERATION_PARALLELISM = {
    WriteOperation.UPSERT: k.UPSERT_PARALLELISM,
    WriteOperation.BULK_INSERT: k.BULK_INSERT_PARALLELISM,
    WriteOperation.DELETE: k.DELETE_PARALLELISM,
    WriteOperation.DELETE_PARTITION: k.DELETE_PARALLELISM,
}


# a global index's option saying whether a key written with another partition moves there
_UPDATE_PARTITION_PATH = {IndexType.GLOBAL_BLOOM: k.BLOOM_UPDATE_PARTITION_PATH,
                          IndexType.GLOBAL_SIMPLE: k.SIMPLE_UPDATE_PARTITION_PATH,
                          IndexType.RECORD_INDEX: k.RECORD_INDEX_UPDATE_PARTITION_PATH,
                          IndexType.HBASE: k.HBASE_UPDATE_PARTITION_PATH}
# the index tagging falls back to while the table has no ready record index (Hudi's
# SparkMetadataTableRecordIndex.getFallbackIndexType)
RECORD_INDEX_FALLBACK = IndexType.GLOBAL_SIMPLE


@dataclass(frozen=True)
class IndexConfig:
    """The index options of a write; ``index.registry.index_for`` makes the index they describe."""

    index_type: IndexType = IndexType.BLOOM
    bloom_num_entries: int = 60000
    bloom_fpp: float = 1e-9
    bloom_filter_type: str = "DYNAMIC_V0"
    bloom_max_entries: int = 100000
    prune_by_ranges: bool = True
    num_buckets: int = 256
    bucket_hash_fields: tuple[str, ...] = ()  # resolved: the record key fields unless given
    bloom_filter_enabled: bool = True  # hoodie.parquet.bloom.filter.enabled
    # a global index: a key written with another partition moves there (else it is updated where it is stored)
    update_partition_path: bool = True
    use_metadata: bool = False  # a bloom index: filters and key ranges from the metadata table
    # RECORD_INDEX: the index that tags while the table has no ready record index, made from the same options
    fallback: IndexConfig | None = None
    hbase: HBaseIndexConfig | None = None  # HBASE: the cluster and table holding the index

    @property
    def writes_bloom_filter(self) -> bool:
        """Base files carry a bloom filter: always under an index whose type names BLOOM, else unless turned off
        (Hudi's ``HoodieFileWriterFactory.enableBloomFilter`` asks ``hoodie.index.type`` whether it contains
        "BLOOM"; the other indexes never read it)."""
        return self.bloom_filter_enabled or "BLOOM" in self.index_type


@dataclass(frozen=True)
class FileSizing:
    max_file_size: int = 120 * k.MB
    small_file_limit: int = 100 * k.MB
    small_file_candidates: int = 1  # merge-on-read: small files a partition's inserts may fill
    record_size_estimate: int | None = None  # None: measured on the first write's input, else Hudi's 1024
    compression: str = "snappy"


@dataclass(frozen=True)
class WriteConfig:
    table_name: str
    table_type: str
    operation: WriteOperation
    keygen: KeyGenerator
    precombine_field: str | None
    payload_class: str
    index: IndexConfig
    sizing: FileSizing
    combine_before_upsert: bool = True
    combine_before_insert: bool = False
    allow_duplicate_on_inserts: bool = True
    parallelism: int = 0  # the operation's hoodie.*.shuffle.parallelism; 0: inferred from the input
    log_block_format: str = "parquet"
    cdc_enabled: bool = False
    cdc_logging_mode: str = CDC_DEFAULT_MODE
    bulk_insert_sort_mode: str | None = None  # None (unset): the size-balanced layout (write.bulk_insert_layout)
    static_overwrite_partitions: tuple[str, ...] = ()  # insert_overwrite: replaced even when no record is written there
    keygen_options: tuple[tuple[str, str], ...] = ()  # what a new table records of the key generator's options
    # hoodie.clustering.updates.strategy: SparkRejectUpdateStrategy (updates to a pending clustering fail the write)
    clustering_rejects_updates: bool = True

    @property
    def is_mor(self) -> bool:
        return self.table_type == "MERGE_ON_READ"

    @property
    def event_time_ordering(self) -> bool:
        """DefaultHoodieRecordPayload: a stored record wins over an incoming one with a lower ordering value."""
        return orders_by_event_time(self.payload_class)

    @property
    def dedupes(self) -> bool:
        if self.operation in (WriteOperation.UPSERT, WriteOperation.DELETE):
            return self.combine_before_upsert
        return self.combine_before_insert

    @property
    def concats_inserts(self) -> bool:
        """An insert packed into a small file keeps every stored record and appends its own, keys it brings
        again included (Hudi's ``HoodieMergeHandleFactory``: ``HoodieConcatHandle`` for an operation that
        changes no records when duplicates are allowed)."""
        return self.operation is WriteOperation.INSERT and self.allow_duplicate_on_inserts

    @property
    def combine_field(self) -> str | None:
        """The ordering field every incoming record must have a value of: the write combines records by it."""
        if self.operation.is_delete or not self.dedupes:
            return None
        return self.precombine_field

    def table_config(self, create_schema: str | None) -> TableConfig:
        return TableConfig(
            name=self.table_name,
            table_type=self.table_type,
            version=6,
            timeline_layout_version=1,
            record_key_fields=self.keygen.record_key_fields,
            partition_fields=self.keygen.partition_fields,
            precombine_field=self.precombine_field,
            keygen_class=self.keygen.class_name,
            hive_style_partitioning=self.keygen.hive_style,
            url_encode_partitions=self.keygen.url_encode,
            populate_meta_fields=True,
            base_file_format="PARQUET",
            payload_class=self.payload_class,
            create_schema=create_schema,
            cdc_enabled=self.cdc_enabled,
            cdc_logging_mode=self.cdc_logging_mode,
            keygen_options=self.keygen_options,
        )


def _merge_with_table(name: str, given, stored, label: str):
    """Use the table's stored value; a different explicit one is an error, not a silent override."""
    if stored is None:
        return given
    if given not in (None, (), "") and given != stored:
        raise HoodieConfigError(
            f"Option {label} is {given!r} but the table was created with {stored!r}; "
            f"a table's {name} cannot change"
        )
    return stored


def _index_config(get, index_type: IndexType, record_keys: tuple[str, ...]) -> IndexConfig:
    """The options of an index of ``index_type`` (a record index's fallback too, as Hudi makes it from the same
    options with the fallback's type: its own update-partition-path option applies)."""
    moves = _UPDATE_PARTITION_PATH.get(index_type)
    return IndexConfig(
        index_type=index_type,
        bloom_num_entries=get(k.BLOOM_NUM_ENTRIES),
        bloom_fpp=get(k.BLOOM_FPP),
        bloom_filter_type=get(k.BLOOM_FILTER_TYPE),
        bloom_max_entries=get(k.BLOOM_MAX_ENTRIES),
        prune_by_ranges=get(k.PRUNE_BY_RANGES),
        num_buckets=get(k.BUCKET_NUM_BUCKETS),
        bucket_hash_fields=get(k.BUCKET_HASH_FIELD) or record_keys,
        bloom_filter_enabled=get(k.PARQUET_BLOOM_FILTER),
        update_partition_path=True if moves is None else get(moves),
        use_metadata=get(k.BLOOM_INDEX_USE_METADATA),
        fallback=_index_config(get, RECORD_INDEX_FALLBACK, record_keys) if index_type is IndexType.RECORD_INDEX
        else None,
        hbase=_hbase_index_config(get) if index_type is IndexType.HBASE else None,
    )


def _hbase_index_config(get) -> HBaseIndexConfig:
    """The HBase index's options; the quorum, its port and the table are required, as Hudi requires them."""
    missing = [p.key for p in (k.HBASE_ZKQUORUM, k.HBASE_ZKPORT, k.HBASE_TABLE) if get(p) in (None, "")]
    if missing:
        raise HoodieConfigError(f"hoodie.index.type=HBASE needs {', '.join(missing)} (the HBase cluster's ZooKeeper "
                                f"quorum, its client port, and the HBase table holding the index)")
    host, port = thrift_address(get(k.HBASE_THRIFT_ADDRESS), get(k.HBASE_ZKQUORUM))
    config = HBaseIndexConfig(
        zkquorum=get(k.HBASE_ZKQUORUM), zkport=get(k.HBASE_ZKPORT), table=get(k.HBASE_TABLE), thrift_host=host,
        thrift_port=port, zknode_path=get(k.HBASE_ZKNODE_PATH), get_batch_size=get(k.HBASE_GET_BATCH_SIZE),
        put_batch_size=get(k.HBASE_PUT_BATCH_SIZE), put_batch_size_autocompute=get(k.HBASE_PUT_BATCH_SIZE_AUTOCOMPUTE),
        qps_fraction=get(k.HBASE_QPS_FRACTION), max_qps_per_region_server=get(k.HBASE_MAX_QPS_PER_REGION_SERVER),
        rollback_sync=get(k.HBASE_ROLLBACK_SYNC), timeout_ms=get(k.HBASE_CONNECTION_TIMEOUT_MS),
    )
    for name, value in (("get.batch.size", config.get_batch_size), ("put.batch.size", config.put_batch_size),
                        ("max.qps.per.region.server", config.max_qps_per_region_server),
                        ("zk.connection_timeout_ms", config.timeout_ms)):
        if value <= 0:
            raise HoodieConfigError(f"hoodie.index.hbase.{name} must be positive, not {value}")
    if not 0 < config.qps_fraction <= 1:
        raise HoodieConfigError(f"hoodie.index.hbase.qps.fraction must be in (0, 1], not {config.qps_fraction}")
    return config


def resolve_write_config(options: Mapping[str, str], existing: TableConfig | None) -> WriteConfig:
    catalog = k.CATALOG
    catalog.check_unknown(options, k.SPARK_PASSTHROUGH)
    get = lambda prop: catalog.resolve(options, prop)  # noqa: E731

    table_name = _merge_with_table("name", get(k.TABLE_NAME), existing.name if existing else None, "table.name")
    if not table_name:
        raise HoodieConfigError("Option 'hoodie.table.name' (or 'table.name') is required to create a table")
    if not _TABLE_NAME.match(table_name):
        raise HoodieConfigError(
            f"Invalid table name {table_name!r}: use letters, digits and underscores, starting with a letter"
        )
    table_type = _merge_with_table(
        "type", get(k.TABLE_TYPE), existing.table_type if existing else None, "hoodie.datasource.write.table.type"
    ) or "COPY_ON_WRITE"
    record_keys = _merge_with_table(
        "record key fields",
        get(k.RECORD_KEY),
        existing.record_key_fields if existing and existing.record_key_fields else None,
        "hoodie.datasource.write.recordkey.field",
    )
    if not record_keys:
        raise HoodieConfigError("Option 'hoodie.datasource.write.recordkey.field' (or 'recordkey.field'; in SQL, "
                                "TBLPROPERTIES (primaryKey = '...')) is required")
    partitions, partition_types = partition_specs(get(k.PARTITION_PATH))
    partitions = _merge_with_table(
        "partition fields",
        partitions,
        existing.partition_fields if existing else None,
        "hoodie.datasource.write.partitionpath.field",
    )
    precombine = _merge_with_table(
        "precombine field",
        get(k.PRECOMBINE),
        existing.precombine_field if existing else None,
        "hoodie.datasource.write.precombine.field",
    )
    hive_style = get(k.HIVE_STYLE)
    if existing is not None:
        hive_style = _merge_with_table(
            "hive-style partitioning", hive_style, existing.hive_style_partitioning,
            "hoodie.datasource.write.hive_style_partitioning",
        )
    cdc_enabled = bool(_merge_with_table("CDC setting", get(k.CDC_ENABLED), existing.cdc_enabled if existing else None,
                                         k.CDC_ENABLED.key))
    cdc_mode = get(k.CDC_LOGGING_MODE)
    if existing is not None and existing.cdc_enabled:
        cdc_mode = _merge_with_table("CDC supplemental logging mode", cdc_mode, existing.cdc_logging_mode,
                                     k.CDC_LOGGING_MODE.key)
    url_encode = get(k.URL_ENCODE) if existing is None else existing.url_encode_partitions
    payload = get(k.PAYLOAD_CLASS) or (existing.payload_class if existing else PAYLOAD_OVERWRITE_LATEST)
    keygen, keygen_options = resolve_key_generator(get, options, existing, tuple(record_keys), tuple(partitions or ()),
                                                   partition_types, bool(hive_style), bool(url_encode))
    index = _index_config(get, get(k.INDEX_TYPE), tuple(record_keys))
    if index.index_type is IndexType.BUCKET:
        _check_bucket_index(index, get(k.BUCKET_ENGINE), tuple(record_keys))
    if not 0 < index.bloom_fpp < 1 or index.bloom_num_entries <= 0:
        raise HoodieConfigError("hoodie.index.bloom.fpp must be in (0, 1) and hoodie.index.bloom.num_entries > 0")
    sizing = FileSizing(
        max_file_size=get(k.MAX_FILE_SIZE),
        small_file_limit=get(k.SMALL_FILE_LIMIT),
        small_file_candidates=get(k.SMALL_FILE_CANDIDATES),
        record_size_estimate=get(k.RECORD_SIZE_ESTIMATE),
        compression=get(k.COMPRESSION),
    )
    if sizing.small_file_candidates < 0:
        raise HoodieConfigError(f"hoodie.merge.small.file.group.candidates.limit must be 0 or more, not "
                                f"{sizing.small_file_candidates}")
    estimate = sizing.record_size_estimate
    if sizing.max_file_size <= 0 or sizing.small_file_limit < 0 or (estimate is not None and estimate <= 0):
        raise HoodieConfigError("File sizes must be positive: check hoodie.parquet.max.file.size and friends")
    operation = get(k.OPERATION)
    static_partitions = get(k.STATIC_OVERWRITE_PARTITIONS)
    if static_partitions and operation is not WriteOperation.INSERT_OVERWRITE:
        raise HoodieConfigError(
            f"{k.STATIC_OVERWRITE_PARTITIONS.key} names the partitions an insert_overwrite replaces; "
            f"it does not apply to operation {operation.value!r}")
    return WriteConfig(
        table_name=table_name,
        table_type=table_type,
        operation=operation,
        keygen=keygen,
        keygen_options=keygen_options,
        precombine_field=precombine or None,
        payload_class=payload,
        index=index,
        sizing=sizing,
        combine_before_upsert=get(k.COMBINE_BEFORE_UPSERT),
        combine_before_insert=get(k.COMBINE_BEFORE_INSERT),
        allow_duplicate_on_inserts=get(k.ALLOW_DUPLICATE_ON_INSERTS),
        parallelism=get(_OPERATION_PARALLELISM.get(operation, k.INSERT_PARALLELISM)),
        log_block_format=get(k.LOG_BLOCK_FORMAT),
        cdc_enabled=cdc_enabled,
        cdc_logging_mode=cdc_mode or CDC_DEFAULT_MODE,
        bulk_insert_sort_mode=get(k.BULK_INSERT_SORT_MODE),
        static_overwrite_partitions=static_partitions,
        clustering_rejects_updates=get(k.CLUSTERING_UPDATES_STRATEGY) == k.CLUSTERING_UPDATE_STRATEGIES[0],
    )


def _check_bucket_index(index: IndexConfig, engine: str, record_keys: tuple[str, ...]) -> None:
    """Only Hudi's SIMPLE bucket engine is supported. Hash fields must be record key fields: Hudi
    computes the bucket from the record key string alone (BucketIdentifier.getHashKeys)."""
    if engine != "SIMPLE":
        raise HoodieConfigError(
            f"hoodie.index.bucket.engine={engine} is not supported; valid values: SIMPLE")
    if index.num_buckets <= 0:
        raise HoodieConfigError(f"hoodie.bucket.index.num.buckets must be positive, got {index.num_buckets}")
    extra = [f for f in index.bucket_hash_fields if f not in record_keys]
    if extra:
        raise HoodieConfigError(
            f"hoodie.bucket.index.hash.field {','.join(extra)} is not a record key field "
            f"(record key fields: {','.join(record_keys)})")
