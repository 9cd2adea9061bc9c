"""Every HFile inside the shared Hudi tables, read by our reader (``hoodie_datasource.hfile``): the metadata
tables' base files and the HFILE_DATA blocks of their log files, as Hudi 1.0 writes them through HBase 2.4
(CRC32C checksums, full KeyValue keys: the layout of Hudi 0.14/0.15) and as Hudi 1.1's own writer does (no
checksums, short index keys). What Java Hudi reads from the same files is compared in
tests/hudi_oracle/test_hfile_oracle.py; here each file must agree with itself: a full scan, batched and
single lookups and prefix scans give the same cells, and Hudi's file info and bloom filter match the keys."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from hoodie_datasource.hfile.reader import HFileReader
from hoodie_datasource.index.bloom_filter import bloom_filter_from_footer
from hoodie_datasource.storage.local import LocalStorage
from tests.hfiles import shared_hfiles


@pytest.fixture(scope="module")
def hfiles(tmp_path_factory) -> list[Path]:
    return shared_hfiles(tmp_path_factory.mktemp("hfiles"))


def open_reader(path: Path) -> HFileReader:
    return HFileReader(LocalStorage(str(path.parent)), path.name)


def test_the_shared_tables_hold_both_writers_files(hfiles):
    """169 base files and 474 log blocks: HBase's (Hudi 1.0) and Hudi 1.1's own; none in a version-6 table."""
    comparators, blocks = set(), 0
    for path in hfiles:
        with open_reader(path) as reader:
            comparators.add((reader.trailer.comparator_class_name, reader.trailer.minor_version))
        blocks += ".block" in path.name
    assert (len(hfiles) - blocks, blocks) == (169, 474)
    assert comparators == {("org.apache.hudi.io.storage.HoodieHBaseKVComparator", 3),
                           ("org.apache.hudi.io.storage.HoodieHBaseKVComparator", 0)}
    assert not [p for p in hfiles if "/v6_" in str(p)]


def test_every_hfile_scans_whole_and_its_lookups_agree(hfiles):
    for path in hfiles:
        with open_reader(path) as reader:
            cells = reader.scan()
            keys = cells["key"].to_pylist()
            assert len(keys) == reader.entry_count, path
            assert keys == sorted(set(keys)), path  # Hudi's files have unique keys, in order
            assert reader.lookup(list(reversed(keys)) + [b"\xff" * 3, b""]).equals(cells), path
            for key, value in zip(keys[:: max(1, len(keys) // 5)], cells["value"].to_pylist()[:: max(1, len(keys) // 5)]):
                assert reader.get(key) == value, path
            for prefix in {k[:n] for k in keys[:3] for n in (0, 1, len(k) // 2)}:
                expected = [k for k in keys if k.startswith(prefix)]
                assert reader.scan_prefixes([prefix])["key"].to_pylist() == expected, (path, prefix)


def test_hudis_file_info_and_bloom_filter_describe_the_keys(hfiles):
    bloom_filters = 0
    for path in hfiles:
        with open_reader(path) as reader:
            keys = reader.scan()["key"].to_pylist()
            assert json.loads(reader.avro_schema())["name"] == "HoodieMetadataRecord", path
            bloom = reader.bloom_filter()
            if bloom is None:
                continue
            bloom_filters += 1
            low, high = reader.min_max_record_keys()
            assert (low.encode(), high.encode()) == ((keys[0], keys[-1]) if keys else (b"", b"")), path
            kind, serialized = bloom
            assert kind == "DYNAMIC_V0"
            if keys:
                assert bloom_filter_from_footer(serialized, kind).might_contain(pa.array(keys)).all(), path
    assert bloom_filters == 169  # every base file has one, no log block does


def test_the_files_partition_lists_the_tables_partitions(hfiles):
    """v8_trips_8i3u1d (Hudi 1.0): its latest ``files`` base file keys the partitions of the three cities."""
    base_files = sorted(p for p in hfiles if "v8_trips_8i3u1d/.hoodie/metadata/files/files-" in str(p))
    with open_reader(base_files[-1]) as reader:
        assert reader.scan()["key"].to_pylist() == [b"__all_partitions__", b"city=chennai", b"city=san_francisco",
                                                    b"city=sao_paulo"]
        assert reader.trailer.compression.name == "GZ" and reader.trailer.num_data_index_levels == 1


def test_a_lookup_reads_the_open_section_and_only_the_block_it_needs(hfiles):
    """Opening reads the trailer and the load-on-open section (two reads); a lookup then one block."""
    path = max(hfiles, key=lambda p: p.stat().st_size)
    with open_reader(path) as reader:
        assert (reader.requests, reader.bytes_read) == (2, path.stat().st_size - reader.trailer.load_on_open_data_offset)
        keys = reader.scan()["key"].to_pylist()
        opened = reader.bytes_read
        assert reader.get(keys[len(keys) // 2]) is not None
        block = int(np.searchsorted(reader.index.offsets, reader.trailer.last_data_block_offset, "right"))
        assert reader.requests == 4 and reader.bytes_read - opened <= int(reader.index.sizes[:block].max())
