"""``hoodie.bloom.index.use.metadata=true`` (Apache Hudi's key): BLOOM and GLOBAL_BLOOM take each base file's bloom
filter from the metadata table's ``bloom_filters`` partition and its key range from the record key's
``column_stats``, so tagging opens no base file's footer (counted); upserts through it agree with a model; a file
the metadata table has nothing for is read from its footer."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.index import base_file_cache
from hoodie_datasource.index.metadata_file_index import MetadataFileIndex
from hoodie_datasource.read.key_lookup import KeyLookup
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.table.table import Table
from tests.unit.small_tables import batch

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
        "hoodie.metadata.index.bloom.filter.enable": "true", "hoodie.metadata.index.column.stats.enable": "true",
        "hoodie.parquet.small.file.limit": "0"}


@pytest.fixture
def footers(monkeypatch):
    """The base files whose footer tagging read (for a key range or a bloom filter)."""
    read = []
    real_range, real_bloom = base_file_cache.key_range, base_file_cache.bloom_filter

    def key_range(storage, rel, info=None):
        read.append(rel)
        return real_range(storage, rel, info)

    def bloom_filter(storage, rel, max_entries=None, info=None):
        read.append(rel)
        return real_bloom(storage, rel, max_entries, info)
    monkeypatch.setattr(base_file_cache, "key_range", key_range)
    monkeypatch.setattr(base_file_cache, "bloom_filter", bloom_filter)
    return read


def table_rows(path: str) -> dict[str, tuple[str, int]]:
    t = read_table(path, ReadConfig())
    ids = t.column("id").to_pylist()
    assert len(ids) == len(set(ids))
    return dict(zip(ids, zip(t.column("_hoodie_partition_path").to_pylist(), t.column("v").to_pylist())))


@pytest.mark.parametrize("index", ["BLOOM", "GLOBAL_BLOOM"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_bloom_tagging_reads_the_metadata_table_not_the_footers(tmp_path, footers, index, table_type):
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.index.type": index, "hoodie.datasource.write.table.type": table_type}
    model = {}
    for shift in range(3):  # three base files a partition
        rows = [(f"k{i:02d}", 1, "xy"[i % 2], i) for i in range(shift, 30, 3)]
        write_local(path, batch(rows), {**opts, "hoodie.datasource.write.operation": "insert"})
        model.update({k: (p, v) for k, _, p, v in rows})
    keys = pa.table({"id": ["k00", "k01", "k05", "k99"], "p": ["x", "y", "y", "x"]})
    for use_metadata, footers_read in ((False, 6), (True, 0)):
        footers.clear()
        base_file_cache.clear()
        lookup = KeyLookup.of(Table.load(path), {**opts, "hoodie.bloom.index.use.metadata": str(use_metadata)})
        assert isinstance(getattr(lookup.index, "metadata", None), MetadataFileIndex) == use_metadata
        found = lookup.read_keys(keys)
        assert sorted(found.column("id").to_pylist()) == ["k00", "k01", "k05"]
        assert len(set(footers)) == footers_read, footers
    footers.clear()
    base_file_cache.clear()
    write_local(path, batch([("k00", 2, "x", 100), ("k05", 2, "y", 105), ("n1", 2, "x", 1)]),
                {**opts, "hoodie.bloom.index.use.metadata": "true"})
    model.update({"k00": ("x", 100), "k05": ("y", 105), "n1": ("x", 1)})
    assert table_rows(path) == model


def test_a_file_the_metadata_table_has_no_filter_of_is_read_from_its_footer(tmp_path, footers):
    """A table written before its bloom_filters partition: the partition is built from the footers, then a file it
    lacks (not possible with a true partition) is simulated by asking for one it does not hold."""
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.index.type": "BLOOM"}
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "x", 2)]), opts)
    table = Table.load(path)
    metadata = MetadataFileIndex.of(table)
    base_file = table.fs_view.latest_file_slices()[0].base_relative_path
    stored = metadata.blooms(table.storage)([base_file])
    assert stored[0] is not None and stored[0].might_contain(["a"]).all() and not footers
    renamed = base_file.replace(".parquet", ".copy.parquet")
    table.storage.write(renamed, table.storage.read(base_file))
    assert metadata.blooms(table.storage)([renamed])[0] is not None and footers == [renamed]
