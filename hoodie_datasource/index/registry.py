"""A write's index, made once from its options: the one place that maps ``hoodie.index.type`` to what it does."""

from __future__ import annotations

from hoodie_datasource.config.index_type import IndexType
from hoodie_datasource.config.write_config import IndexConfig
from hoodie_datasource.index.bucket_index import BucketIndex
from hoodie_datasource.index.hbase_index import HBaseIndex
from hoodie_datasource.index.index import Index
from hoodie_datasource.index.lookup_index import BloomIndex, GlobalBloomIndex, GlobalSimpleIndex, SimpleIndex
from hoodie_datasource.index.record_index import RecordIndex

_INDEXES: dict[IndexType, type[Index]] = {
    IndexType.BLOOM: BloomIndex,
    IndexType.GLOBAL_BLOOM: GlobalBloomIndex,
    IndexType.SIMPLE: SimpleIndex,
    IndexType.GLOBAL_SIMPLE: GlobalSimpleIndex,
    IndexType.BUCKET: BucketIndex,
    IndexType.RECORD_INDEX: RecordIndex,
    IndexType.HBASE: HBaseIndex,
}


def index_for(config: IndexConfig) -> Index:
    """The index ``config`` describes (Hudi's ``SparkHoodieIndexFactory.createIndex``), not yet bound to a table
    (``Index.for_table``)."""
    return _INDEXES[config.index_type](config)
