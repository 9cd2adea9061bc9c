"""Where the metadata table is and what it is: its storage inside the data table's, its ``hoodie.properties``
(what Hudi 0.15's ``HoodieBackedTableMetadataWriter.initializeMetaClient`` writes), and the latest file slice
of each of a partition's file groups.

A partition's file groups are fixed when it is built (``files``: one; the index partitions: as many as
their options say), so the slices are found by listing the partition's folder: a file group may have no
base file yet (Hudi opens each with an empty log file, and a partition built empty gets no base file), and
its slice is then its log files alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from hoodie_datasource.config.table_config import METADATA_PAYLOAD, TableConfig, write_table_config
from hoodie_datasource.storage.prefixed import PrefixedStorage
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.file_group import BaseFile, FileSlice, LogFile
from hoodie_datasource.table.file_names import BaseFileName, LogFileName
from hoodie_datasource.table.metadata_table import METADATA_TABLE
from hoodie_datasource.table.table import Table

KEY_FIELD = "key"  # HoodieMetadataPayload.KEY_FIELD_NAME: the record key of every metadata record
KEY_GENERATOR = "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator"
NAME_SUFFIX = "_metadata"  # HoodieTableMetadata.METADATA_TABLE_NAME_SUFFIX
BASE_FORMAT = "HFILE"


def metadata_storage(storage: Storage) -> Storage:
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
    """The latest slice of each file group of one metadata-table partition, in file-group order."""

    partition: str
    slices: tuple[FileSlice, ...]

    def __len__(self) -> int:
        return len(self.slices)


def latest_slices(mdt: Table, partition: str) -> PartitionSlices:
    """One listing of ``partition``'s folder: each file group's newest committed base file and the log files
    written on it; a group without one keeps the log files of its first slice (its opening empty log file and
    what was appended since), as Hudi's file-system view shows a slice of logs alone."""
    committed = mdt.timeline.committed_upto(None)
    bases: dict[str, BaseFile] = {}
    logs: dict[str, list[LogFile]] = {}
    for info in mdt.storage.list_dir(partition).files:
        base = BaseFileName.parse(info.name)
        if base is not None:
            if committed(base.instant_time) and (base.file_id not in bases
                                                 or base.instant_time > bases[base.file_id].instant_time):
                bases[base.file_id] = BaseFile(info.name, base.file_id, base.instant_time, info.size)
            continue
        log = LogFileName.parse(info.name)
        if log is not None:
            logs.setdefault(log.file_id, []).append(
                LogFile(info.name, log.file_id, log.instant_time, log.version, log.write_token, info.size))
    slices = []
    for file_id in sorted(set(bases) | set(logs)):
        base = bases.get(file_id)
        group_logs = logs.get(file_id, [])
        base_instant = base.instant_time if base else min(log.instant_time for log in group_logs)
        in_slice = sorted((log for log in group_logs if log.instant_time == base_instant),
                          key=lambda log: (log.version, log.write_token))
        slices.append(FileSlice(partition, file_id, base_instant, base, tuple(in_slice)))
    return PartitionSlices(partition, tuple(slices))


def latest_compaction(mdt: Table) -> str | None:
    """The time of the metadata table's latest completed compaction (Hudi's ``getLatestCompactionTime``): every
    data instant up to it is in its base files."""
    compactions = [i.timestamp for i in mdt.timeline.completed() if mdt.timeline.is_compaction(i)]
    return compactions[-1] if compactions else None
