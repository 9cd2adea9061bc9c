"""Where the metadata table is and what it is: its storage inside the data table's, its ``hoodie.properties``
(what Hudi 0.15's ``HoodieBackedTableMetadataWriter.initializeMetaClient`` writes), the latest file slice of
each of a partition's file groups (fixed when the partition is built: ``files`` has one, an index partition as
many as its options say), and its latest compaction.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from hoodie_datasource.config.table_config import METADATA_PAYLOAD, TableConfig, write_table_config
from hoodie_datasource.metadata.file_slices import latest_merged_slices
from hoodie_datasource.metadata.records import MetadataPartition
from hoodie_datasource.metadata.timeline import MetadataTimeline
from hoodie_datasource.storage.prefixed import PrefixedStorage
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.metadata_table import METADATA_TABLE
from hoodie_datasource.table.table import Table

KEY_FIELD = "key"  # HoodieMetadataPayload.KEY_FIELD_NAME: the record key of every metadata record
KEY_GENERATOR = "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator"
NAME_SUFFIX = "_metadata"  # HoodieTableMetadata.METADATA_TABLE_NAME_SUFFIX
BASE_FORMAT = "HFILE"


def metadata_storage(storage: Storage) -> PrefixedStorage:
    """The metadata table's storage: ``.hoodie/metadata`` of the data table's."""
    return PrefixedStorage(storage, METADATA_TABLE)


def metadata_table_config(data: TableConfig) -> TableConfig:
    """A new metadata table's config: merge-on-read, HFile base files, records keyed by ``key`` with no meta
    fields, merged by ``HoodieMetadataPayload``."""
    return TableConfig(
        name=data.name + NAME_SUFFIX, table_type="MERGE_ON_READ", version=data.version, timeline_layout_version=1,
        record_key_fields=(KEY_FIELD,), partition_fields=(), precombine_field=None, keygen_class=KEY_GENERATOR,
        hive_style_partitioning=False, url_encode_partitions=False, populate_meta_fields=False,
        base_file_format=BASE_FORMAT, payload_class=METADATA_PAYLOAD, database=data.database,
    )


def create_metadata_table(storage: Storage, data: TableConfig) -> Table:
    """Write the metadata table's ``hoodie.properties`` (into an empty folder); the new table."""
    mdt_storage = metadata_storage(storage)
    config = metadata_table_config(data)
    write_table_config(mdt_storage, config)
    return Table.load(mdt_storage, config=config)


@dataclass(frozen=True)
class PartitionSlices:
    """The latest slice of each file group of one metadata-table partition, in file-group order (paths relative
    to the metadata table)."""

    partition: str
    slices: tuple[FileSlice, ...]

    def __len__(self) -> int:
        return len(self.slices)


def latest_slices(mdt: Table, partition: MetadataPartition) -> PartitionSlices:
    """``metadata.file_slices.latest_merged_slices`` of ``partition``, as the metadata table ``mdt`` (of a
    ``metadata_storage``) names its files."""
    slices = latest_merged_slices(mdt.storage.parent, MetadataTimeline(mdt.timeline.instants), partition)
    return PartitionSlices(partition.path, tuple(dataclasses.replace(s, partition_path=partition.path)
                                                 for s in slices))


def latest_compaction(mdt: Table) -> str | None:
    """The time of the metadata table's latest completed compaction (Hudi's ``getLatestCompactionTime``): every
    data instant up to it is in its base files."""
    compactions = [i.timestamp for i in mdt.timeline.completed() if mdt.timeline.is_compaction(i)]
    return compactions[-1] if compactions else None
