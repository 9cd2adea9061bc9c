"""Java Hudi's own HFile readers and HBase's writer against ours (``hoodie_datasource.hfile``), on the
shared tables' HFiles and on files each side writes:

- Hudi's native reader (``HFileReaderImpl``: the metadata table's reader in 0.15 and 1.1) reads every HFile
  in the shared tables with the same cells, file info and bloom filter block as ours;
- it reads the files we write (GZ and NONE, one and many blocks, empty): every cell, Hudi's file info entries,
  ``seekTo`` of each key finds its value and of a missing one does not, and its bloom filter holds every key;
- HBase 2.4 (in Hudi 0.15's bundle, the writer of its metadata table) reads them too with no checksum failure,
  and reports one when a checksum is damaged (so its check is real);
- we read what HBase writes, a multi-level index included, as Hudi's reader does."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from hoodie_datasource.errors import CorruptFileError
from hoodie_datasource.hfile.checksum import ChecksumType
from hoodie_datasource.hfile.compression import Compression
from hoodie_datasource.hfile.reader import HFileReader
from hoodie_datasource.hfile.writer import HFileWriterConfig, HudiBloomFilter, write_hfile
from hoodie_datasource.index.bloom_filter import new_bloom_filter
from hoodie_datasource.storage.local import LocalStorage
from tests.hfiles import shared_hfiles
from tests.hudi_oracle import HUDI_0_15, HUDI_1
from tests.hudi_oracle.hfile_oracle import INFO_NAMES, JavaHFiles

pytestmark = pytest.mark.hudi_oracle
SCHEMA = '{"type":"record","name":"HoodieMetadataRecord","fields":[{"name":"key","type":"string"}]}'


@pytest.fixture(scope="module", params=[HUDI_0_15, HUDI_1])
def hudi_reader(request, tmp_path_factory):
    java = JavaHFiles("HFileDump", request.param, tmp_path_factory.mktemp("hfile-dump") / "java.log")
    yield java
    java.close()


@pytest.fixture(scope="module")
def hbase(tmp_path_factory):
    java = JavaHFiles("HBaseHFile", HUDI_0_15, tmp_path_factory.mktemp("hbase-hfile") / "java.log")
    yield java
    java.close()


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory) -> list[Path]:
    return shared_hfiles(tmp_path_factory.mktemp("shared-hfiles"))


def ours(path: Path) -> HFileReader:
    return HFileReader(LocalStorage(str(path.parent)), path.name)


def our_cells(path: Path) -> list[tuple[bytes, bytes]]:
    with ours(path) as reader:
        table = reader.scan()
    return list(zip(table["key"].to_pylist(), table["value"].to_pylist()))


def sample_cells(count: int, seed: int = 7) -> list[tuple[bytes, bytes]]:
    """Record-key-like keys of varying length (some not ASCII) and values of random bytes, zeros included."""
    rng = random.Random(seed)
    keys = {f"{rng.getrandbits(64):016x}-{'é' * rng.randrange(3)}{i}".encode() for i in range(count)}
    return [(key, bytes(rng.randrange(4) for _ in range(rng.randrange(40)))) for key in sorted(keys)]


def write(path: Path, cells, config: HFileWriterConfig, bloom: bool = True) -> Path:
    keys = [k for k, _ in cells]
    bloom_filter = None
    if bloom:
        filter_ = new_bloom_filter()
        filter_.add_keys([k.decode() for k in keys])
        bloom_filter = HudiBloomFilter("DYNAMIC_V0", filter_.serialize())
    path.write_bytes(write_hfile(keys, [v for _, v in cells], config, avro_schema=SCHEMA, bloom_filter=bloom_filter))
    return path


def test_hudi_reads_the_shared_hfiles_as_we_do(hudi_reader, fixtures):
    names = [n for n in INFO_NAMES if n != b"hfile.LASTKEY"]  # Hudi 1.1 leaves it empty where there are no cells
    for path in fixtures:
        assert hudi_reader.cells(path) == our_cells(path), path
        with ours(path) as reader:
            assert hudi_reader.info(path, names) == {n: v for n, v in reader.file_info.items() if n in names}, path
            assert hudi_reader.meta(path, "bloomFilter") == reader.meta_block("bloomFilter"), path


WRITES = {
    "gz-one-block": (2_000, HFileWriterConfig()),
    "gz-many-blocks": (3_000, HFileWriterConfig(block_size=4096)),
    "none-many-blocks": (3_000, HFileWriterConfig(block_size=4096, compression=Compression.NONE)),
    "one-cell": (1, HFileWriterConfig()),
    "no-cells": (0, HFileWriterConfig()),
}


@pytest.mark.parametrize("case", WRITES)
def test_hudi_reads_what_we_write(hudi_reader, tmp_path, case):
    count, config = WRITES[case]
    cells = sample_cells(count)
    path = write(tmp_path / "ours.hfile", cells, config)
    assert hudi_reader.cells(path) == cells
    with ours(path) as reader:
        assert hudi_reader.info(path) == {n: v for n, v in reader.file_info.items() if n in INFO_NAMES}
        assert hudi_reader.meta(path, "bloomFilter") == reader.meta_block("bloomFilter")
    keys = [k for k, _ in cells]
    if keys:
        missing = [keys[0][:-1] + b"\x00", keys[-1] + b"~"]  # before the first key's block end; past the last
        probes = sorted(keys[:: max(1, count // 200)] + missing)
        found = dict(cells)
        expected = [(0, found[k]) if k in found else None for k in probes]
        answers = hudi_reader.seek(path, probes)
        assert [a if a[0] == 0 else None for a in answers] == expected
        assert all(hudi_reader.bloom(path, keys[:500]))


def test_hbase_reads_what_we_write_and_checks_our_checksums(hbase, tmp_path):
    cells = sample_cells(3_000)
    for codec in (Compression.GZ, Compression.NONE):
        path = write(tmp_path / f"{codec.name}.hfile", cells, HFileWriterConfig(block_size=8192, compression=codec))
        assert hbase.cells(path) == cells
        info, failures = hbase.hbase_details(path)
        assert failures == 0
        with ours(path) as reader:
            assert info == reader.file_info  # HBase adds nothing it would not have written itself
    damaged = bytearray(path.read_bytes())
    with ours(path) as reader:
        first_block = int(reader.index.sizes[0])
    damaged[first_block - 1] ^= 0xFF  # the last checksum byte of the first data block
    (tmp_path / "damaged.hfile").write_bytes(bytes(damaged))
    assert hbase.hbase_details(tmp_path / "damaged.hfile")[1] >= 1
    with pytest.raises(CorruptFileError, match="CRC32C checksum mismatch"), ours(tmp_path / "damaged.hfile") as reader:
        reader.scan()


def test_unchecked_files_are_read_by_both(hudi_reader, tmp_path):
    """Checksum type NULL (Hudi 1.1's own writer's choice) is read by Hudi's reader and ours alike."""
    cells = sample_cells(500)
    path = write(tmp_path / "plain.hfile", cells, HFileWriterConfig(block_size=2048, checksum=ChecksumType.NULL))
    assert hudi_reader.cells(path) == cells == our_cells(path)


@pytest.mark.parametrize("codec", ["GZ", "NONE"])
def test_we_read_what_hbase_writes_with_a_multi_level_index(hbase, hudi_reader, tmp_path, codec):
    """Small data blocks and index chunks give HBase's writer a two- or three-level index, which Hudi's
    writers never produce. We read it; so does Hudi 1.1's reader, while 0.15's refuses it (its
    ``HFileBlock.parse`` knows no leaf index block; Hudi's own metadata-table files never have one)."""
    cells = sample_cells(4_000, seed=11)
    path = tmp_path / f"hbase-{codec}.hfile"
    hbase.write(path, cells, block_size=1024, codec=codec, index_chunk=512)
    with ours(path) as reader:
        assert reader.trailer.num_data_index_levels >= 2
        assert reader.trailer.comparator_class_name == "org.apache.hudi.io.storage.HoodieHBaseKVComparator"
        table = reader.scan()
        assert list(zip(table["key"].to_pylist(), table["value"].to_pylist())) == cells
        probes = [k for k, _ in cells[::37]]
        assert reader.lookup(probes)["value"].to_pylist() == [v for _, v in cells[::37]]
        prefix = cells[100][0][:3]
        assert reader.scan_prefixes([prefix])["key"].to_pylist() == [k for k, _ in cells if k.startswith(prefix)]
    if hudi_reader.version == HUDI_0_15:
        with pytest.raises(RuntimeError, match="block type LEAF_INDEX is not supported"):
            hudi_reader.cells(path)
    else:
        assert hudi_reader.cells(path) == cells


def test_we_return_every_cell_of_a_key_hbase_wrote_many_times(hbase, tmp_path):
    """HBase allows a key more than once (Hudi's writers do not): 200 keys, 21 cells each. It never ends a block
    inside a key's run of cells (its ``append`` checks the block boundary only at a new key), which is what
    lets a lookup read only the last block whose first key is not above it. A lookup returns every cell of
    the key, in file order."""
    cells = [(f"key-{k:04d}".encode(), f"value-{k}-{n}".encode()) for k in range(200) for n in range(21)]
    path = tmp_path / "repeated.hfile"
    hbase.write(path, cells, block_size=700, codec="GZ")
    with ours(path) as reader:
        blocks = [cells_of.rows for _, cells_of in reader._data_blocks(np.arange(len(reader.index)))]
        assert len(blocks) == 200 and not [a for a, b in zip(blocks, blocks[1:]) if a[-1] == b[0]]
        assert reader.lookup([b"key-0007", b"key-0150"])["value"].to_pylist() == \
            [v for k, v in cells if k in (b"key-0007", b"key-0150")]
        assert reader.scan_prefixes([b"key-019"]).num_rows == 210
