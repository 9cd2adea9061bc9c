"""Reading a table's metadata table: its partitions and files, column statistics, bloom filters and record index.

``MetadataTableReader(table)`` lists the metadata table's timeline once (or takes the one a write opened the metadata
table with: ``MetadataListing``) and each of its partitions' folders once (when first asked), then answers from the
latest file slice of each file group (``HoodieBackedTableMetadata``, Hudi 0.15): the base HFile and the counted
HFILE_DATA and DELETE blocks of its logs (``metadata.timeline``), merged per key as ``HoodieMetadataPayload`` merges
them (``metadata.merge``).

Lookups read only what they need: a key goes to the file group ``mapRecordKeyToFileGroupIndex`` names among the
partition's file groups (sorted by id), and each HFile (base file, or a log block's, held in memory once its log
file is read) decompresses only the blocks that may hold the keys. Column statistics of whole columns are a prefix
scan of every file group. ``files`` and the answers are Arrow (no Python object per record, except the rare
column-statistics records of one key written several times).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.errors import MetadataTableNotReadyError, UnsupportedTableError
from hoodie_datasource.hfile.reader import HFileReader
from hoodie_datasource.log.avro_codec import empty_table
from hoodie_datasource.log.command_block import decode_command_block
from hoodie_datasource.log.delete_block import decode_delete_records
from hoodie_datasource.log.hfile_block import open_hfile_data_block
from hoodie_datasource.log.log_format import BlockType, LogBlock, read_logs_blocks
from hoodie_datasource.metadata.file_slices import latest_merged_slices
from hoodie_datasource.metadata.keys import (
    ALL_PARTITIONS_KEY,
    NON_PARTITIONED_NAME,
    bloom_filter_keys,
    column_stats_keys,
    column_stats_prefix,
    file_group_indexes,
    partition_identifier,
)
from hoodie_datasource.metadata.merge import merge_column_stats, merge_file_entries, merge_latest
from hoodie_datasource.metadata.records import (
    RECORDS_SCHEMA,
    WRAPPED_VALUE,
    MetadataPartition,
    bloom_filters,
    column_stats,
    decode_records,
    file_entries,
    record_locations,
    wrap_values,
)
from hoodie_datasource.metadata.timeline import MetadataTimeline, valid_instants
from hoodie_datasource.storage.storage import FileInfo
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.metadata_table import PARTITIONS_KEY
from hoodie_datasource.table.table import Table

logger = logging.getLogger(__name__)

TIMELINE_TIMEZONE_KEY = "hoodie.table.timeline.timezone"  # HoodieTableConfig.TIMELINE_TIMEZONE, LOCAL by default


@dataclass(frozen=True)
class _Query:
    """What to read of a file slice: every record, the records of ``keys`` (sorted), or of keys starting with one
    of ``prefixes``."""

    keys: pa.Array | None = None
    prefixes: Sequence[str] | None = None

    def cells(self, reader: HFileReader) -> pa.Table:
        if self.keys is not None:
            return reader.lookup(self.keys)
        if self.prefixes is not None:
            return reader.scan_prefixes(self.prefixes)
        return reader.scan()

    def deleted(self, keys: pa.Array) -> pa.Array:
        if self.keys is not None:
            return keys.filter(pc.is_in(keys, self.keys.cast(pa.string())))
        if self.prefixes is not None:
            mask = pc.starts_with(keys, self.prefixes[0]) if self.prefixes else pa.array([False] * len(keys))
            for prefix in self.prefixes[1:]:
                mask = pc.or_(mask, pc.starts_with(keys, prefix))
            return keys.filter(mask)
        return keys


@dataclass
class _SliceRecords:
    """The records a file slice gave for a query, each with its ``order`` (0: the base file's), and its deleted
    keys with theirs."""

    records: list[pa.Table]
    deletes: pa.Table


class MetadataTableReader:
    """The metadata table of ``table`` as of its timeline; ``partitions`` are the ones ``hoodie.properties`` lists
    as ready (``hoodie.table.metadata.partitions``)."""

    def __init__(self, table: Table, timeline: MetadataTimeline | None = None) -> None:
        """``timeline``: the metadata table's, as listed already (else listed here)."""
        self.storage = table.storage
        raw = dict(table.config.raw)
        self.timezone = raw.get(TIMELINE_TIMEZONE_KEY, "LOCAL")
        self.partitions = _ready_partitions(table)
        self.timeline = timeline if timeline is not None else MetadataTimeline.load(self.storage)
        self.valid = valid_instants(table.timeline, self.timeline)
        self._slices: dict[MetadataPartition, list[FileSlice]] = {}
        self._listing: pa.Table | None = None

    @classmethod
    def listing_of(cls, table: Table, timeline: MetadataTimeline | None = None) -> MetadataTableReader | None:
        """The reader of ``table``'s metadata table (of ``timeline``, when listed already) when its ``files``
        partition is ready (a ``FileListing`` for ``Table.load``), else None: the table is listed."""
        if table.config.timeline_layout_version != 1 or MetadataPartition.FILES.path not in _ready_partitions(table):
            return None  # a 1.x table's metadata table (timeline layout 2) is not read here: it is listed
        reader = cls(table, timeline)
        return reader if reader.is_ready(MetadataPartition.FILES) else None

    def is_ready(self, partition: MetadataPartition) -> bool:
        return partition.path in self.partitions and self.timeline.latest_completed is not None

    def _require(self, partition: MetadataPartition) -> list[FileSlice]:
        if not self.is_ready(partition):
            raise MetadataTableNotReadyError(f"The metadata table of {self.storage.uri} has no ready {partition.path!r} "
                                        f"partition (ready: {', '.join(sorted(self.partitions)) or 'none'})")
        if partition not in self._slices:
            self._slices[partition] = latest_merged_slices(self.storage, self.timeline, partition)
        return self._slices[partition]

    def file_slices(self, partition: MetadataPartition) -> list[FileSlice]:
        """The latest slice of each of ``partition``'s file groups, in the order keys map to them
        (``file_group_indexes``); listed here once, for every lookup after (in Spark tasks too: the reader travels
        with them)."""
        return self._require(partition)

    def file_group_ids(self, partition: MetadataPartition) -> list[str]:
        """The ids of ``partition``'s file groups, in the order keys map to them."""
        return [s.file_id for s in self.file_slices(partition)]

    # ---- reading file slices

    def _counted_blocks(self, file_slice: FileSlice) -> Iterator[LogBlock]:
        """The slice's data and delete blocks that count, in log order, less those a rollback command drops."""
        latest = self.timeline.latest_completed or ""
        blocks: list[LogBlock] = []
        for log_blocks in read_logs_blocks(self.storage, [file_slice.relative_path(log.name)
                                                          for log in file_slice.log_files]):
            for block in log_blocks:
                if block.block_type == BlockType.CORRUPT:
                    continue
                instant = block.instant_time or ""
                if instant > latest:
                    yield from blocks  # a block newer than the latest completed instant ends the scan
                    return
                if block.block_type == BlockType.COMMAND:
                    target = decode_command_block(block).target_instant_time
                    blocks = [b for b in blocks if b.instant_time != target]
                elif self.timeline.is_committed(instant) and instant in self.valid:
                    blocks.append(block)
        yield from blocks

    def _read_slice(self, file_slice: FileSlice, query: _Query) -> _SliceRecords:
        records: list[pa.Table] = []
        deletes = [pa.table({"key": pa.array([], pa.string()), "order": pa.array([], pa.int64())})]
        if file_slice.base_file is not None:
            rel = file_slice.base_relative_path
            with HFileReader(self.storage, rel, file_slice.base_file.size) as reader:
                cells = query.cells(reader)
                if cells.num_rows:
                    decoded = decode_records(cells.column("key"), cells.column("value"), reader.avro_schema(),
                                             reader.where)
                    records.append(decoded.append_column("order", pa.array(np.zeros(cells.num_rows, np.int64))))
        order = 0
        for block in self._counted_blocks(file_slice):
            order += 1
            if block.block_type == BlockType.HFILE_DATA:
                reader = open_hfile_data_block(block)
                cells = query.cells(reader)
                if cells.num_rows:
                    decoded = decode_records(cells.column("key"), cells.column("value"), block.schema, reader.where)
                    # a key written twice in one block: the later cell is the newer (HFileUtils)
                    sequence = order * (1 << 32) + np.arange(cells.num_rows, dtype=np.int64)
                    records.append(decoded.append_column("order", pa.array(sequence)))
            elif block.block_type == BlockType.DELETE:
                keys = query.deleted(pa.array([r.record_key for r in decode_delete_records(block)], pa.string()))
                deletes.append(pa.table({"key": keys, "order": pa.array(np.full(len(keys), order << 32, np.int64))}))
            else:
                logger.warning("Skipping a %s block in the metadata table's %s", block.block_type.name, block.where)
        return _SliceRecords(records, pa.concat_tables(deletes))

    def _read(self, partition: MetadataPartition, keys: pa.Array | None = None,
              prefixes: Sequence[str] | None = None) -> list[_SliceRecords]:
        """The records of ``keys`` (each read from the file group it maps to), of ``prefixes`` or all of them."""
        slices = self._require(partition)
        if not slices:
            return []
        if keys is None:
            return [self._read_slice(s, _Query(prefixes=prefixes)) for s in slices]
        keys = pc.unique(keys.cast(pa.string()))
        shard = file_group_indexes(keys, len(slices))
        found = []
        for index in np.unique(shard).tolist():
            wanted = keys.filter(pa.array(shard == index))
            found.append(self._read_slice(slices[index], _Query(keys=wanted.take(pc.sort_indices(wanted)))))
        return found

    def file_slice_records(self, file_slice: FileSlice) -> tuple[list[pa.Table], pa.Table]:
        """Every record of ``file_slice`` that counts, as read (each table with its ``order``, 0: the base
        file's), and its deleted keys with theirs: what a compaction of the slice merges (``metadata.merge``)."""
        read = self._read_slice(file_slice, _Query())
        return read.records, read.deletes

    # ---- the answers

    def all_partitions(self) -> list[str]:
        """Every partition path of the data table (``""`` for the non-partitioned table)."""
        names = self._file_listing(pa.array([ALL_PARTITIONS_KEY])).column("file_name").to_pylist()
        if names == [NON_PARTITIONED_NAME]:
            return [""]
        return sorted(names)

    def _file_listing(self, keys: pa.Array) -> pa.Table:
        """The merged entries of the files partition under ``keys``. A plan of the whole table asks for every
        partition's name (``ALL_PARTITIONS_KEY``), then for the files of those it keeps: the partition is then read
        whole, once per reader (each read of the slice is a GET of its base file and of every log file). Asked for
        some partitions first (a write planning the partitions of its batch), it looks their keys up in the base
        HFile, reading only the blocks that hold them, as ``HoodieBackedTableMetadata.getAllFilesInPartitions``
        does."""
        keys = keys.cast(pa.string())
        if self._listing is None and not pc.any(pc.equal(keys, ALL_PARTITIONS_KEY)).as_py():
            return self._merged_files(self._read(MetadataPartition.FILES, keys))
        if self._listing is None:
            self._listing = self._merged_files(self._read(MetadataPartition.FILES))
        return self._listing.filter(pc.is_in(self._listing.column("key"), keys))

    @staticmethod
    def _merged_files(parts: list[_SliceRecords]) -> pa.Table:
        """``key``, ``file_name`` and ``size`` of every file the files partition's records in ``parts`` list."""
        entries, deletes = [], []
        for part in parts:
            for records in part.records:
                files = file_entries(records)
                order = records.column("order").take(files.column("record").combine_chunks())
                entries.append(files.drop_columns(["record"]).append_column("order", order))
            deletes.append(part.deletes)
        if not entries:
            return pa.table({"key": pa.array([], pa.string()), "file_name": pa.array([], pa.string()),
                             "size": pa.array([], pa.int64())})
        return merge_file_entries(pa.concat_tables(entries), pa.concat_tables(deletes))

    def partition_paths(self) -> list[str]:
        """``all_partitions`` (the ``FileListing`` protocol)."""
        return self.all_partitions()

    def partition_file_infos(self, partitions: Iterable[str]) -> dict[str, list[FileInfo]]:
        """The files of ``partitions`` as a listing of storage gives them, by name (the ``FileListing`` protocol):
        one sort of the listing, then a ``FileInfo`` per file, nothing else per file."""
        wanted = {partition_identifier(p): p for p in partitions}
        listing = self._file_listing(pa.array(sorted(wanted), pa.string()))
        listing = listing.sort_by([("key", "ascending"), ("file_name", "ascending")])
        infos: dict[str, list[FileInfo]] = {p: [] for p in wanted.values()}
        current, prefix, out = None, "", []
        for key, name, size in zip(*(listing.column(c).to_pylist() for c in ("key", "file_name", "size"))):
            if key != current:
                current = key
                prefix = f"{wanted[key]}/" if wanted[key] else ""
                out = infos[wanted[key]]
            out.append(FileInfo(prefix + name, size))
        return infos

    def partition_files(self, partitions: Iterable[str]) -> dict[str, dict[str, int]]:
        """The files of each of ``partitions`` (``""``: the non-partitioned table's), name -> size."""
        return {p: {info.name: info.size for info in infos} for p, infos in self.partition_file_infos(partitions).items()}

    def stats(self) -> dict[str, int]:
        """The size of the metadata table (``HoodieMetadataMetrics.getStats``, detailed): per partition of it
        (``<partition>.totalBaseFileSizeInBytes``, ``.totalLogFileSizeInBytes``, ``.baseFileCount``,
        ``.logFileCount``, over the latest file slices; 0 for one not ready), and ``partitionCount``, the data
        table's partitions."""
        stats = {}
        for partition in MetadataPartition:
            slices = self.file_slices(partition) if self.is_ready(partition) else []
            bases = [s.base_file.size for s in slices if s.base_file is not None]
            logs = [log.size for s in slices for log in s.log_files]
            stats |= {f"{partition.path}.totalBaseFileSizeInBytes": sum(bases),
                      f"{partition.path}.totalLogFileSizeInBytes": sum(logs),
                      f"{partition.path}.baseFileCount": len(bases), f"{partition.path}.logFileCount": len(logs)}
        stats["partitionCount"] = len(self.all_partitions())
        return stats

    def column_stats(self, columns: Sequence[str], files: Sequence[tuple[str, str]] | None = None) -> pa.Table:
        """The statistics of ``columns`` in each of ``files`` ((partition, file name) pairs; every file when
        None): rows ``file_name``, ``column_name``, ``min_value`` and ``max_value`` (wrapped: ``unwrap_values``),
        ``value_count``, ``null_count``, ``total_size``, ``total_uncompressed_size``; deleted ones left out."""
        if files is None:
            parts = self._read(MetadataPartition.COLUMN_STATS, prefixes=[column_stats_prefix(c) for c in columns])
        else:
            pairs = [(p, f, c) for p, f in files for c in columns]
            keys = column_stats_keys(*(pa.array([t[i] for t in pairs], pa.string()) for i in range(3))) \
                if pairs else pa.array([], pa.string())
            parts = self._read(MetadataPartition.COLUMN_STATS, keys)
        stats, deletes = [], []
        for part in parts:
            for records in part.records:
                view = column_stats(records)
                view = view.set_column(view.column_names.index("min_value"), "min_value",
                                       conform_wrapped(view.column("min_value")))
                view = view.set_column(view.column_names.index("max_value"), "max_value",
                                       conform_wrapped(view.column("max_value")))
                stats.append(view.append_column("order", records.column("order")))
            deletes.append(part.deletes)
        if not stats:
            return _EMPTY_STATS
        merged = merge_column_stats(pa.concat_tables(stats), pa.concat_tables(deletes))
        return merged.filter(pc.invert(merged.column("is_deleted"))).drop_columns(["key", "is_deleted"])

    def bloom_filters(self, files: Sequence[tuple[str, str]]) -> dict[tuple[str, str], tuple[str, bytes]]:
        """The bloom filter of each of ``files`` ((partition, file name) pairs) that has one: its type code and
        serialized bytes, as the base file's footer holds them."""
        if not files:
            return {}
        keys = bloom_filter_keys(pa.array([p for p, _ in files], pa.string()), pa.array([f for _, f in files]))
        by_key = dict(zip(keys.to_pylist(), files))
        found = self._latest(MetadataPartition.BLOOM_FILTERS, keys, bloom_filters)
        found = found.filter(pc.invert(found.column("is_deleted")))
        return {by_key[k]: (t, b) for k, t, b in zip(*(found.column(c).to_pylist()
                                                       for c in ("key", "type", "bloom_filter")))}

    def record_locations(self, keys: pa.Array | pa.ChunkedArray) -> pa.Table:
        """Where the record index puts each of ``keys`` it knows: ``key``, ``partition``, ``file_id`` and
        ``instant_time`` (the commit that wrote it there)."""
        if isinstance(keys, pa.ChunkedArray):
            keys = keys.combine_chunks()
        return self._latest(MetadataPartition.RECORD_INDEX, keys,
                            lambda records: record_locations(records, self.timezone))

    def _latest(self, partition: MetadataPartition, keys: pa.Array, view) -> pa.Table:
        rows, deletes = [], []
        for part in self._read(partition, keys):
            rows += [view(r).append_column("order", r.column("order")) for r in part.records]
            deletes.append(part.deletes)
        if not rows:
            return view_empty(view)
        return merge_latest(pa.concat_tables(rows), pa.concat_tables(deletes))


def _opened_state(table: Table) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What a metadata table opened for ``table`` stands for: the data table's completed instants (a commit, a
    rollback, a restore each add one and change the metadata table) and its ready metadata partitions."""
    completed = tuple(i.timestamp for i in table.timeline.instants if i.is_completed)
    return completed, tuple(_ready_partitions(table))


@dataclass(frozen=True)
class MetadataListing:
    """Where a table that plans from its metadata table takes its files (its ``Table.listing``): the reader of its
    metadata table (``MetadataTableReader.listing_of``), and what opened that metadata table.

    ``metadata_table``: the metadata table as a write opened it under the table lock, its ``hoodie.properties``
    read and its timeline listed once for the trust check, the metadata table's services and every read of the
    write (its tagging, its file listing, in its Spark tasks too), as Hudi's write client opens it once per write
    (``HoodieTable.getMetadataTable``). It stands for the tables whose data timeline has the completed instants and
    ready metadata partitions of the one it was opened with (``opened_with``: the write's table, with its own
    requested instant too); a table refreshed after another writer's commit, or the table a commit left, is read
    from the metadata table listed again."""

    metadata_table: Table | None = None
    opened_with: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())

    @staticmethod
    def opened(table: Table, metadata_table: Table) -> MetadataListing:
        """The listing of ``table``, whose metadata table was just opened as ``metadata_table``."""
        return MetadataListing(metadata_table, _opened_state(table))

    def metadata_table_of(self, table: Table) -> Table | None:
        """The opened metadata table, when it stands for ``table``."""
        if self.metadata_table is None or _opened_state(table) != self.opened_with:
            return None
        return self.metadata_table

    def __call__(self, table: Table) -> MetadataTableReader | None:
        return MetadataTableReader.listing_of(table, _timeline_of(self.metadata_table_of(table)))


def _timeline_of(metadata_table: Table | None) -> MetadataTimeline | None:
    return None if metadata_table is None else MetadataTimeline(metadata_table.timeline.instants)


def opened_metadata_table(table: Table) -> Table | None:
    """The metadata table the write ``table`` is of opened (``MetadataListing``), when it stands for ``table``."""
    listing = table.listing
    return listing.metadata_table_of(table) if isinstance(listing, MetadataListing) else None


def metadata_reader(table: Table) -> MetadataTableReader:
    """A reader of ``table``'s metadata table, of the timeline its write opened it with when there is one."""
    return MetadataTableReader(table, _timeline_of(opened_metadata_table(table)))


def planning_from_metadata(table: Table, enabled: bool = True, metadata_table: Table | None = None) -> Table:
    """``table`` taking its partitions and files from its metadata table when ``enabled``
    (``hoodie.metadata.enable``) and the table's ``files`` partition is ready (``MetadataTableReader.listing_of``),
    else from a listing of storage: what every read, write and table service plans from, as Hudi's
    ``HoodieTable.getFileSystemView`` is backed by ``HoodieBackedTableMetadata`` when the metadata table is on.
    ``metadata_table``: the metadata table as just opened for ``table`` (``MetadataListing``); else the one
    ``table`` already plans from, when it stands for it."""
    if not enabled:
        return dataclasses.replace(table, listing=None)
    opened = metadata_table if metadata_table is not None else opened_metadata_table(table)
    listing = MetadataListing() if opened is None else MetadataListing.opened(table, opened)
    return dataclasses.replace(table, listing=listing)


def _ready_partitions(table: Table) -> frozenset[str]:
    return frozenset(p for p in dict(table.config.raw).get(PARTITIONS_KEY, "").split(",") if p)


def conform_wrapped(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Wrapped values (a dense union of wrapper records) in ``WRAPPED_VALUE``'s form, whatever union the file's
    schema had (a later Hudi's has more wrappers): each branch by its name. A value in a wrapper this library does
    not know is refused."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if values.type == WRAPPED_VALUE:
        return values
    n = len(values)
    ours = [f.name for f in WRAPPED_VALUE]
    theirs = [f.name for f in values.type]
    types = np.frombuffer(values.buffers()[1], np.int8)[values.offset:values.offset + n]
    offsets = np.frombuffer(values.buffers()[2], np.int32)[values.offset:values.offset + n]
    remap = np.full(128, -1, np.int8)
    for position, code in enumerate(values.type.type_codes):
        if theirs[position] in ours:
            remap[code] = ours.index(theirs[position])
    new_types = remap[types]
    if (new_types < 0).any():
        unknown = {theirs[list(values.type.type_codes).index(c)] for c in types[new_types < 0].tolist()}
        raise UnsupportedTableError(f"Column statistics wrapped in {sorted(unknown)} are not supported; the wrappers "
                                    f"read are {', '.join(ours[1:])}")
    children = []
    for field in WRAPPED_VALUE:
        if field.name in theirs:
            child = values.field(theirs.index(field.name))
            children.append(child if child.type == field.type else child.cast(field.type))
        else:
            children.append(pa.array([], field.type))
    return pa.UnionArray.from_dense(pa.array(new_types, pa.int8()), pa.array(offsets, pa.int32()), children, ours)


_EMPTY_STATS = pa.table({"file_name": pa.array([], pa.string()), "column_name": pa.array([], pa.string()),
                         "min_value": wrap_values(pa.array([], pa.null())),
                         "max_value": wrap_values(pa.array([], pa.null())),
                         "value_count": pa.array([], pa.int64()), "null_count": pa.array([], pa.int64()),
                         "total_size": pa.array([], pa.int64()), "total_uncompressed_size": pa.array([], pa.int64())})


def view_empty(view) -> pa.Table:
    """What ``view`` makes of no records."""
    return view(empty_table(RECORDS_SCHEMA))
