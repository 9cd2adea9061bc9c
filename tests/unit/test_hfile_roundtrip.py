"""Our HFile writer read back by our reader (``hoodie_datasource.hfile``): the cells, the layout HBase's
writer gives them (blocks, index, trailer, file info), lookups, prefix scans and full scans, what a damaged or
unsupported file raises, and what each read costs in requests and bytes on local disk and on S3 (moto). Java
Hudi reading the same files is tests/hudi_oracle/test_hfile_oracle.py."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pyarrow as pa
import pytest

from hoodie_datasource.errors import CorruptFileError, HoodieConfigError, InvalidRecordError, UnsupportedTableError
from hoodie_datasource.hfile import file_info as info
from hoodie_datasource.hfile.block_index import decode_vlong, encode_vlong
from hoodie_datasource.hfile.compression import Compression, compression_named
from hoodie_datasource.hfile.key_value import full_key
from hoodie_datasource.hfile.reader import MAX_READ, HFileReader
from hoodie_datasource.hfile.trailer import TRAILER_SIZE
from hoodie_datasource.hfile.writer import HFileWriterConfig, HudiBloomFilter, write_hfile
from hoodie_datasource.storage.local import LocalStorage
from hoodie_datasource.storage.registry import open_storage

KEYS = [f"{i:08d}-{'x' * (i % 7)}".encode() for i in range(5_000)]
VALUES = [bytes([i % 251]) * (i % 50) for i in range(5_000)]


class CountingFile(io.FileIO):
    """A real file whose reads are counted: the requests and bytes a reader asks the storage for."""

    def __init__(self, path: str, counts: dict) -> None:
        super().__init__(path, "rb")
        self.counts = counts

    def read(self, size: int = -1) -> bytes:
        data = super().read(size)
        self.counts["reads"] += 1
        self.counts["bytes"] += len(data)
        return data


class CountingStorage(LocalStorage):
    def __init__(self, uri: str) -> None:
        super().__init__(uri)
        self.counts = {"reads": 0, "bytes": 0}

    def open_input(self, rel: str, size: int | None = None) -> pa.NativeFile:
        return pa.PythonFile(CountingFile(self.path(rel), self.counts), mode="r")


def written(tmp_path: Path, config: HFileWriterConfig | None = None, keys=KEYS, values=VALUES, **extra) -> HFileReader:
    (tmp_path / "f.hfile").write_bytes(write_hfile(keys, values, config or HFileWriterConfig(), **extra))
    return HFileReader(CountingStorage(str(tmp_path)), "f.hfile")


@pytest.mark.parametrize("codec", [Compression.GZ, Compression.NONE])
@pytest.mark.parametrize("block_size", [1 << 20, 2048])
def test_cells_come_back_in_blocks_laid_out_as_hbase_does(tmp_path, codec, block_size):
    with written(tmp_path, HFileWriterConfig(block_size=block_size, compression=codec)) as reader:
        cells = reader.scan()
        assert cells["key"].to_pylist() == KEYS and cells["value"].to_pylist() == VALUES
        trailer = reader.trailer
        sizes = [8 + 12 + len(k) + len(v) + 1 for k, v in zip(KEYS, VALUES)]
        blocks, filled = 0, 0
        for size in sizes:  # a block takes cells until it holds block_size bytes (HBase's checkBlockBoundary)
            if filled == 0:
                blocks += 1
            filled += size
            if filled >= block_size:
                filled = 0
        assert (trailer.entry_count, trailer.data_index_count, len(reader.index)) == (len(KEYS), blocks, blocks)
        assert (trailer.first_data_block_offset, trailer.last_data_block_offset) == (0, int(reader.index.offsets[-1]))
        assert (trailer.major_version, trailer.minor_version, trailer.num_data_index_levels) == (3, 3, 1)
        assert trailer.compression == codec
        assert reader.file_info[info.LAST_KEY] == full_key(KEYS[-1])
        avg_key = struct.unpack(">i", reader.file_info[info.AVG_KEY_LEN])[0]
        assert avg_key == sum(len(k) + 12 for k in KEYS) // len(KEYS)
        assert reader.index.rows.to_pylist()[0] == KEYS[0]
    assert write_hfile(KEYS, VALUES) == write_hfile(KEYS, VALUES)  # the same cells, the same bytes


def test_lookups_find_every_present_key_and_nothing_else(tmp_path):
    with written(tmp_path, HFileWriterConfig(block_size=1024)) as reader:
        probes = [KEYS[4_000], b"", KEYS[17], KEYS[17], b"zzz", KEYS[0][:-1], KEYS[-1] + b"\x00", KEYS[-1]]
        found = reader.lookup(probes)
        assert found["key"].to_pylist() == [KEYS[17], KEYS[4_000], KEYS[-1]]
        assert found["value"].to_pylist() == [VALUES[17], VALUES[4_000], VALUES[-1]]
        assert reader.get(KEYS[2_500].decode()) == VALUES[2_500]
        assert reader.get(b"00002500") is None
        assert reader.lookup([]).num_rows == 0
        everything = reader.lookup(pa.array(KEYS[::-1], pa.binary()))
        assert everything["key"].to_pylist() == KEYS


def test_prefix_scans_return_each_matching_cell_once(tmp_path):
    with written(tmp_path, HFileWriterConfig(block_size=700)) as reader:
        scanned = reader.scan_prefixes(["00001", "000012", "00004999", "0000499"])["key"].to_pylist()
        assert scanned == [k for k in KEYS if k.startswith((b"00001", b"0000499"))]
        assert reader.scan_prefixes([""])["key"].to_pylist() == KEYS
        assert reader.scan_prefixes(["1", "\xff"]).num_rows == 0
    keys = [b"a", b"a\xff", b"a\xff\xff", b"a\xff\xff\x00", b"b"]
    with written(tmp_path, keys=keys, values=[b"v"] * 5) as reader:
        assert reader.scan_prefixes([b"a\xff"])["key"].to_pylist() == keys[1:4]
        assert reader.scan_prefixes([b"\xff"]).num_rows == 0


def test_keys_ending_with_nul_bytes_are_told_apart(tmp_path):
    """numpy's fixed-width byte strings cannot tell ``a`` from ``a\\x00``; such keys are searched exactly."""
    keys = [b"", b"\x00", b"a", b"a\x00", b"a\x00\x00", b"a\x00b", b"b"]
    with written(tmp_path, HFileWriterConfig(block_size=40), keys=keys, values=[bytes([i]) for i in range(7)]) as reader:
        assert reader.lookup([b"a\x00", b"a\x00\x00\x00", b"\x00"])["value"].to_pylist() == [b"\x01", b"\x03"]
        assert reader.scan_prefixes([b"a\x00"])["key"].to_pylist() == [b"a\x00", b"a\x00\x00", b"a\x00b"]
        assert reader.get(b"") == b"\x00"


def test_hudis_entries_and_bloom_filter_block(tmp_path):
    bloom = HudiBloomFilter("DYNAMIC_V0", "serialized-filter")
    with written(tmp_path, avro_schema='{"type":"string"}', bloom_filter=bloom) as reader:
        assert reader.avro_schema() == '{"type":"string"}'
        assert reader.min_max_record_keys() == (KEYS[0].decode(), KEYS[-1].decode())
        assert reader.bloom_filter() == ("DYNAMIC_V0", b"serialized-filter")
        assert reader.meta_block("nothing") is None
        assert (reader.file_info[info.KEY_VALUE_VERSION], reader.file_info[info.MAX_MEMSTORE_TS_KEY]) == \
            (b"\x00\x00\x00\x01", bytes(8))


def test_a_file_without_cells(tmp_path):
    with written(tmp_path, keys=[], values=[], bloom_filter=HudiBloomFilter("DYNAMIC_V0", "f")) as reader:
        assert (reader.entry_count, reader.scan().num_rows, reader.lookup([b"a"]).num_rows) == (0, 0, 0)
        assert (reader.trailer.first_data_block_offset, reader.trailer.last_data_block_offset) == (-1, -1)
        assert reader.min_max_record_keys() == ("", "") and info.LAST_KEY not in reader.file_info


def test_bad_input_is_refused_by_name():
    with pytest.raises(InvalidRecordError, match="unique and ascending; key b'a' follows b'b'"):
        write_hfile([b"b", b"a"], [b"", b""])
    with pytest.raises(InvalidRecordError, match="unique and ascending"):
        write_hfile([b"a", b"a"], [b"", b""])
    with pytest.raises(InvalidRecordError, match="null"):
        write_hfile(pa.array([b"a", None]), [b"", b""])
    with pytest.raises(InvalidRecordError, match="at most 32767"):
        write_hfile([b"k" * 40_000], [b""])
    with pytest.raises(HoodieConfigError, match="hoodie.hfile.compression.algorithm.*'snappy'.*GZ, NONE"):
        compression_named("snappy")
    assert compression_named(" gz ") == Compression.GZ


def test_damaged_and_unsupported_files_say_what_and_where(tmp_path):
    data = bytearray(write_hfile(KEYS, VALUES, HFileWriterConfig(block_size=4096)))
    damaged = bytearray(data)
    damaged[100] ^= 1  # inside the first data block's compressed bytes
    (tmp_path / "damaged.hfile").write_bytes(bytes(damaged))
    storage = LocalStorage(str(tmp_path))
    with HFileReader(storage, "damaged.hfile") as reader:
        with pytest.raises(CorruptFileError, match=r"damaged.hfile at byte 0 \(DATA block\): CRC32C checksum mismatch"):
            reader.get(KEYS[0])
    with HFileReader(storage, "damaged.hfile", verify_checksums=False) as reader:
        with pytest.raises(CorruptFileError, match="damaged.hfile at byte 0"):
            reader.get(KEYS[0])
    for name, content, error, message in [
        ("short", data[-100:], CorruptFileError, "too short for an HFile"),
        ("v2", data[:-4] + struct.pack(">I", 2), UnsupportedTableError, "version 2; Hudi's HFiles are version 3"),
        ("lz4", data[:-TRAILER_SIZE] + data[-TRAILER_SIZE:].replace(b"\x60\x01", b"\x60\x04"), UnsupportedTableError,
         "compressed with LZ4"),
    ]:
        (tmp_path / name).write_bytes(bytes(content))
        with pytest.raises(error, match=message):
            HFileReader(storage, name)


def test_vlongs_as_hadoop_writes_them():
    for value in (0, 1, -1, -112, -113, 127, 128, 255, 256, 1 << 20, -(1 << 40), (1 << 63) - 1, -(1 << 63)):
        encoded = encode_vlong(value)
        assert decode_vlong(encoded, 0, "") == (value, len(encoded))
    assert (encode_vlong(127), encode_vlong(128), encode_vlong(-113)) == (b"\x7f", b"\x8f\x80", b"\x87\x70")


def test_reads_fetch_the_open_section_then_only_the_blocks_needed(tmp_path):
    """Open: the trailer and the load-on-open section (two reads). A lookup: one read per run of adjacent
    blocks it needs. A full scan: the data section in reads of at most MAX_READ bytes. Counted where the
    storage is read, and by the reader itself."""
    (tmp_path / "f.hfile").write_bytes(write_hfile(KEYS, VALUES, HFileWriterConfig(block_size=4096)))
    storage = CountingStorage(str(tmp_path))
    counts = storage.counts

    def since(before: dict) -> dict:
        return {k: counts[k] - before[k] for k in counts}

    with HFileReader(storage, "f.hfile") as reader:
        assert counts == {"reads": 2, "bytes": (tmp_path / "f.hfile").stat().st_size
                          - reader.trailer.load_on_open_data_offset}
        blocks = reader.index
        before = dict(counts)
        assert reader.get(KEYS[2_000]) == VALUES[2_000]
        one = since(before)
        assert one["reads"] == 1 and one["bytes"] in set(blocks.sizes.tolist())
        before = dict(counts)
        assert reader.lookup([KEYS[i] for i in range(0, 5_000, 500)]).num_rows == 10  # ten keys, blocks apart
        ten = since(before)
        assert ten["reads"] == 10 and ten["bytes"] <= 10 * int(blocks.sizes.max())
        before = dict(counts)
        reader.scan()
        data_bytes = int(blocks.offsets[-1] + blocks.sizes[-1])
        assert since(before) == {"reads": -(-data_bytes // MAX_READ), "bytes": data_bytes}
        assert (reader.requests, reader.bytes_read) == (counts["reads"], counts["bytes"])


def test_a_lookup_on_s3_makes_one_get_to_open_and_one_per_block(moto, s3_bucket):
    storage = open_storage(s3_bucket.uri("mdt"), s3_bucket.options)
    data = write_hfile([f"{i:09d}".encode() for i in range(60_000)], [b"v" * 40] * 60_000,
                       HFileWriterConfig(block_size=64 * 1024, compression=Compression.NONE))
    assert len(data) > 2 << 20  # larger than what opening a file fetches from its end
    storage.write("f.hfile", data)
    mark = moto.mark()
    with HFileReader(storage, "f.hfile", size=len(data)) as reader:
        assert moto.requests_since(mark) == {"GET": 1}  # the tail it fetches holds the trailer and the index
        assert reader.get(b"000000007") == b"v" * 40
        assert moto.requests_since(mark) == {"GET": 2}  # one ranged GET of the block
        assert reader.lookup([b"000030000", b"000030001", b"000059999"]).num_rows == 3
        # one more for the two keys' block; the last key's block lies in the tail fetched on opening
        assert moto.requests_since(mark) == {"GET": 3}
