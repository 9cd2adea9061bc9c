"""We read the metadata tables Java Hudi writes (0.15.0, and 1.1.1 writing table version 6): a merge-on-read
partitioned table and a copy-on-write non-partitioned one, each with every metadata partition on and a history
that leaves the metadata table compacted with logs on top, a clean and (0.15) a rollback, which makes Hudi
initialise the metadata table's partitions again (``metadata_tables.write_history``). Against what the data table
holds:

- the partitions and files ``MetadataTableReader`` lists are the files in storage, with their sizes;
- the column statistics of every base file are its parquet footer's (per column: min, max, nulls, values, sizes);
- the bloom filter of every base file is its footer's;
- the record index puts every key where a snapshot read finds it, and knows no deleted or rolled-back key;
- reads plan from it with no listing of a data partition, and read what a listing-based read reads.
"""

from __future__ import annotations

import dataclasses

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.metadata.reader import MetadataTableReader
from hoodie_datasource.metadata.records import MetadataPartition, unwrap_values
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.table.file_names import BaseFileName, LogFileName
from hoodie_datasource.table.table import Table
from tests.counting_storage import CountingStorage
from tests.hudi_oracle import HUDI_0_15, by_key
from tests.hudi_oracle.metadata_tables import write_history

pytestmark = pytest.mark.hudi_oracle
BLOOM_FILTER_KEY = "org.apache.hudi.bloomfilter"  # HoodieAvroWriteSupport.HOODIE_AVRO_BLOOM_FILTER_METADATA_KEY
BLOOM_TYPE_KEY = "hoodie_bloom_filter_type_code"


@pytest.fixture(scope="module")
def java_tables(hudi, tmp_path_factory):
    """The two tables Java writes, once per Hudi version: (path, table type) pairs."""
    base = tmp_path_factory.mktemp(f"metadata-{hudi.version}")
    tables = []
    for table_type, partitioned in (("MERGE_ON_READ", True), ("COPY_ON_WRITE", False)):
        path = str(base / f"{table_type.lower()}")
        write_history(hudi, path, table_type, partitioned)
        tables.append(path)
    return tables


def _storage_files(table: Table) -> dict[str, dict[str, int]]:
    """The data files in storage by partition (listed through our file-system view): base files of completed
    instants and every log file."""
    committed = table.timeline.committed_upto(None)
    files: dict[str, dict[str, int]] = {}
    for group in table.fs_view.file_groups():
        found = files.setdefault(group.partition_path, {})
        found.update({b.name: b.size for b in group.base_files if committed(b.instant_time)})
        found.update({log.name: log.size for log in group.log_files})
    return files


def _latest_base_files(table: Table) -> list[tuple[str, str]]:
    """(partition, name) of the base file of every latest file slice: what the column-stats and bloom-filter
    partitions index (when Hudi initialises them again, after a rollback, it indexes these alone)."""
    return [(s.partition_path, s.base_file.name) for s in table.fs_view.latest_file_slices() if s.base_file]


def _file_id(name: str) -> str:
    parsed = BaseFileName.parse(name) or LogFileName.parse(name)
    return parsed.file_id if parsed is not None else name


def test_the_file_listing_is_storages(java_tables):
    for path in java_tables:
        table = Table.load(path)
        reader = MetadataTableReader(table)
        assert all(reader.is_ready(p) for p in MetadataPartition)
        in_storage = _storage_files(table)
        assert reader.all_partitions() == sorted(in_storage)
        assert reader.partition_files(in_storage) == in_storage


def _indexed(hudi, reader: MetadataTableReader, base_files: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The latest base files the bloom-filter index knows: all of them, but after Hudi 0.15 initialised the
    index again (the rollback) only some: its HFiles hold no entry for the rest (the files of the file groups the
    second write created)."""
    known = sorted(reader.bloom_filters(base_files))
    if hudi.version == HUDI_0_15:
        assert 0 < len(known) < len(base_files)
    else:
        assert known == sorted(base_files)
    return known


def test_column_stats_are_the_footers(hudi, java_tables):
    for path in java_tables:
        table = Table.load(path)
        reader = MetadataTableReader(table)
        base_files = _indexed(hudi, reader, _latest_base_files(table))
        columns = ["id", "ts", "fare", "rider", "day", "_hoodie_record_key"]
        stats = reader.column_stats(columns, base_files)
        assert stats.num_rows == len(base_files) * len(columns)
        by_file = {(r["file_name"], r["column_name"]): i for i, r in enumerate(
            stats.select(["file_name", "column_name"]).to_pylist())}
        checked = 0
        for partition, name in base_files:
            metadata = pq.ParquetFile(table.storage.uri_of(f"{partition}/{name}" if partition else name)).metadata
            schema = metadata.schema.to_arrow_schema()
            for column in columns:
                index = schema.get_field_index(column)
                chunks = [metadata.row_group(g).column(index) for g in range(metadata.num_row_groups)]
                row = by_file[(name, column)]
                typ = schema.field(column).type
                low = unwrap_values(stats.column("min_value").combine_chunks().slice(row, 1), typ)[0].as_py()
                high = unwrap_values(stats.column("max_value").combine_chunks().slice(row, 1), typ)[0].as_py()
                lows = [c.statistics.min for c in chunks if c.statistics.has_min_max]
                highs = [c.statistics.max for c in chunks if c.statistics.has_min_max]
                assert (low, high) == ((min(lows), max(highs)) if lows else (None, None)), (name, column)
                record = stats.slice(row, 1).to_pylist()[0]
                assert record["null_count"] == sum(c.statistics.null_count for c in chunks)
                assert record["value_count"] == sum(c.num_values for c in chunks)
                assert record["total_size"] == sum(c.total_compressed_size for c in chunks)
                assert record["total_uncompressed_size"] == sum(c.total_uncompressed_size for c in chunks)
                checked += 1
        assert checked == len(base_files) * len(columns) > 0
        # a whole column, from a prefix scan of every file group: the files listed and the log files of MOR
        everything = reader.column_stats(["fare"])
        assert set(everything.column("column_name").to_pylist()) == {"fare"}
        assert set(everything.column("file_name").to_pylist()) >= {name for _, name in base_files}


def test_bloom_filters_are_the_footers(hudi, java_tables):
    for path in java_tables:
        table = Table.load(path)
        reader = MetadataTableReader(table)
        base_files = _indexed(hudi, reader, _latest_base_files(table))
        filters = reader.bloom_filters(base_files)
        assert sorted(filters) == sorted(base_files)
        for (partition, name), (type_code, serialized) in filters.items():
            footer = pq.ParquetFile(table.storage.uri_of(f"{partition}/{name}" if partition else name)).metadata
            assert type_code == footer.metadata[BLOOM_TYPE_KEY.encode()].decode()
            assert serialized == footer.metadata[BLOOM_FILTER_KEY.encode()]
        assert reader.bloom_filters([("nowhere", "x.parquet")]) == {}


def test_the_record_index_is_where_each_key_lives(hudi, java_tables):
    for path in java_tables:
        table = Table.load(path)
        snapshot = read_table(path).select(["_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name",
                                            "_hoodie_commit_time"])
        live = {r["_hoodie_record_key"]: r for r in snapshot.to_pylist()}
        deleted = ["key-040", "key-044"]  # the third write deleted key-040 to key-044
        gone = ["nope"] + (["key-100"] if "key-100" not in live else [])  # 0.15 rolled key-100's write back
        reader = MetadataTableReader(table)
        keys = pa.array(sorted(live) + deleted + gone)
        located = {r["key"]: r for r in reader.record_locations(keys).to_pylist()}
        if hudi.version != HUDI_0_15 and table.config.is_mor:
            # Hudi 1.1.1 writing a version-6 merge-on-read table leaves deleted keys in its record index: its
            # compacted record-index HFiles still hold them, at their old file group
            assert sorted(located) == sorted([*live, *deleted])
        else:
            assert sorted(located) == sorted(live)
        completed = {i.timestamp for i in table.timeline.completed()}
        for key, row in live.items():
            where = located[key]
            assert (where["partition"], where["file_id"]) == (row["_hoodie_partition_path"],
                                                               _file_id(row["_hoodie_file_name"])), key
            # the write that put the key in the file group, or, after Hudi initialised the index again, the one that
            # wrote the file group's latest base file
            assert where["instant_time"] in completed
        # one key at a time reads the one file group it maps to
        one = reader.record_locations(pa.array([sorted(live)[0]])).to_pylist()
        assert one == [located[sorted(live)[0]]]


class _CountingTree(CountingStorage):
    """Counts whole-table listings too."""

    def list_tree(self, rel: str = ""):
        self.listed[f"tree:{rel}"] += 1
        return super().list_tree(rel)


def _data_listings(storage: CountingStorage) -> dict[str, int]:
    return {folder: n for folder, n in storage.listed.items() if n and not folder.startswith(".hoodie")}


def test_reads_take_their_files_from_it_and_list_no_data_partition(java_tables):
    for path in java_tables:
        instants = [i.timestamp for i in Table.load(path).timeline.completed()]
        queries = [ReadConfig(), ReadConfig(as_of_instant=instants[-3]),
                   ReadConfig(query_type="incremental", begin_instant=instants[1])]
        for query in queries:
            with_metadata, listed = _CountingTree(path), _CountingTree(path)
            ours = read_table(with_metadata, query)
            plain = read_table(listed, dataclasses.replace(query, metadata_enable=False))
            assert ours.num_rows > 0
            assert by_key(ours) == by_key(plain)
            assert _data_listings(with_metadata) == {}
            assert _data_listings(listed) != {}  # the same read without it lists storage

