"""A bloom index's per-file metadata from the metadata table instead of the base files' footers (Hudi's
``hoodie.bloom.index.use.metadata``): each base file's bloom filter from the ``bloom_filters`` partition
(``HoodieMetadataBloomFilterProbingFunction``) and its key range from the ``column_stats`` of the record key
column (``HoodieBloomIndex.loadColumnRangesFromMetaIndex``), each when that partition is ready. A file the
partition has nothing for is read from its footer, as Hudi falls back to the files when the metadata table gives
no ranges.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import pyarrow as pa

from hoodie_datasource.index.bloom_filter import BloomFilter, bloom_filter_from_footer
from hoodie_datasource.index.key_ranges import FileKeyRange, load_key_ranges, unranged
from hoodie_datasource.index.lookup import BloomSource, footer_filters
from hoodie_datasource.metadata.reader import MetadataTableReader, metadata_reader
from hoodie_datasource.metadata.records import MetadataPartition, unwrap_values
from hoodie_datasource.storage.storage import FileInfo, Storage
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.meta_columns import RECORD_KEY_COLUMN
from hoodie_datasource.table.metadata_table import ready_partitions
from hoodie_datasource.table.table import Table

_PARTITIONS = (MetadataPartition.BLOOM_FILTERS, MetadataPartition.COLUMN_STATS)


def _file_pair(base_file: str) -> tuple[str, str]:
    """(partition, file name) of a base file's path relative to the table."""
    return posixpath.dirname(base_file), posixpath.basename(base_file)


@dataclass(frozen=True)
class MetadataFileIndex:
    """The table's metadata table, read for its bloom filters and key ranges (picklable: it travels to tasks)."""

    reader: MetadataTableReader

    @staticmethod
    def of(table: Table) -> MetadataFileIndex | None:
        """The metadata table of ``table`` when it has a ready ``bloom_filters`` or ``column_stats`` partition."""
        ready = set(ready_partitions(table.config))
        if table.config.timeline_layout_version != 1 or not any(p.path in ready for p in _PARTITIONS):
            return None
        reader = metadata_reader(table)
        return MetadataFileIndex(reader) if any(reader.is_ready(p) for p in _PARTITIONS) else None

    def key_ranges(self, storage: Storage, slices: Sequence[FileSlice]) -> list[FileKeyRange]:
        """The key range of every slice with a base file: the record key column's statistics, else the footer."""
        with_base = [s for s in slices if s.base_file is not None]
        if not self.reader.is_ready(MetadataPartition.COLUMN_STATS) or not with_base:
            return load_key_ranges(storage, with_base)
        stats = self.reader.column_stats([RECORD_KEY_COLUMN],
                                         [(s.partition_path, s.base_file.name) for s in with_base])
        found = {name: (low, high, count) for name, low, high, count in zip(
            stats.column("file_name").to_pylist(), unwrap_values(stats.column("min_value"), pa.string()).to_pylist(),
            unwrap_values(stats.column("max_value"), pa.string()).to_pylist(), stats.column("value_count").to_pylist())}
        ranged = {}
        for s in with_base:
            if s.base_file.name in found:
                low, high, count = found[s.base_file.name]
                ranged[s.file_id, s.partition_path] = replace(unranged(s), num_records=count or 0, min_key=low,
                                                              max_key=high)
        rest = [s for s in with_base if (s.file_id, s.partition_path) not in ranged]
        footers = {(f.file_id, f.partition): f for f in load_key_ranges(storage, rest)}
        return [ranged.get((s.file_id, s.partition_path)) or footers[s.file_id, s.partition_path] for s in with_base]

    def blooms(self, storage: Storage, listed: Mapping[str, FileInfo] | None = None) -> BloomSource:
        """Bloom filters from the ``bloom_filters`` partition, the footer's for a file it has none of."""
        footers = footer_filters(storage, listed)
        if not self.reader.is_ready(MetadataPartition.BLOOM_FILTERS):
            return footers

        def read(base_files: Sequence[str]) -> list[BloomFilter | None]:
            stored = self.reader.bloom_filters([_file_pair(f) for f in base_files])
            found = {f: stored.get(_file_pair(f)) for f in base_files}
            missing = [f for f, entry in found.items() if entry is None]
            from_footers = dict(zip(missing, footers(missing)))
            return [from_footers[f] if found[f] is None else bloom_filter_from_footer(found[f][1], found[f][0])
                    for f in base_files]
        return read
