"""Bulk insert (``write.bulk_insert``) through the local engine: new file groups of the target size,
Hudi's footers and meta columns, the sort modes; read back by our reader and by hudi-rs."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi import HudiTableBuilder

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.index.bloom_filter import read_bloom_filter
from hoodie_datasource.storage.registry import open_storage
from tests.unit.small_tables import batch
from tests.unit.small_tables import read_pairs as read

OPTS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": "bulk_insert"}
ROWS = [(f"k{(i * 7919) % 3000:04}", 1, f"p{i % 2}", i) for i in range(3000)]


def _base_files(path: str) -> dict[str, pa.Table]:
    return {f"{p}/{n}": pq.read_table(os.path.join(path, p, n)) for p in ("p0", "p1")
            for n in sorted(os.listdir(os.path.join(path, p))) if n.endswith(".parquet")}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_bulk_insert_rolls_over_to_new_file_groups_with_hudis_footers(tmp_path, table_type):
    path = str(tmp_path / "t")
    instant = write_local(path, batch(ROWS), {**OPTS, "hoodie.datasource.write.table.type": table_type,
                                              "hoodie.parquet.max.file.size": "8000"})
    files = _base_files(path)
    assert len(files) > 4  # several file groups per partition, rolled over at the target size
    prefixes = {name.split("/")[1].split("_")[0].rsplit("-", 1)[0] for name in files}
    assert len(prefixes) == 1  # one task: one uuid, files numbered -0, -1, ... as Hudi's getNextFileId
    storage = open_storage(path)
    for name, data in files.items():
        keys = data.column("_hoodie_record_key")
        footer = pq.read_metadata(os.path.join(path, name)).metadata
        assert footer[b"hoodie_min_record_key"].decode() == min(keys.to_pylist())
        assert footer[b"hoodie_max_record_key"].decode() == max(keys.to_pylist())
        assert read_bloom_filter(storage, name).might_contain(keys).all()
        assert data.column("_hoodie_commit_seqno").to_pylist() == [f"{instant}_0_{i}" for i in range(data.num_rows)]
        assert set(data.column("_hoodie_file_name").to_pylist()) == {name.split("/")[1]}
        # the per-commit and per-file columns are dictionary encoded and read back as the strings they are
        row_group = pq.read_metadata(os.path.join(path, name)).row_group(0)
        pages = {row_group.column(i).path_in_schema: row_group.column(i).has_dictionary_page
                 for i in range(row_group.num_columns)}
        for column in ("_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_file_name"):
            assert pages[column] and data.schema.field(column).type == pa.string(), column
    meta = HoodieTable(path).commit_metadata(instant)
    stats = [s for ss in meta["partitionToWriteStats"].values() for s in ss]
    assert meta["operationType"] == "BULK_INSERT" and len(stats) == len(files)
    assert all(s["numInserts"] == s["numWrites"] > 0 and s["prevCommit"] == "null" for s in stats)
    expected = sorted((k, v) for k, _, _, v in ROWS)
    assert read(path) == expected
    by_hudi_rs = pa.Table.from_batches(HudiTableBuilder.from_base_uri(path).build().read())
    assert sorted(zip(by_hudi_rs.column("id").to_pylist(), by_hudi_rs.column("v").to_pylist())) == expected


def test_sort_modes_and_a_mode_hudi_does_not_have(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch(ROWS), {**OPTS, "hoodie.bulkinsert.sort.mode": "global_sort"})
    files = _base_files(path)
    assert len(files) == 2  # sorted input: one file per partition
    for data in files.values():
        keys = data.column("_hoodie_record_key").to_pylist()
        assert keys == sorted(keys)
    with pytest.raises(HoodieConfigError, match="hoodie.bulkinsert.sort.mode.*NONE, GLOBAL_SORT, PARTITION_SORT, "
                                                "PARTITION_PATH_REPARTITION, PARTITION_PATH_REPARTITION_AND_SORT"):
        write_local(path, batch(ROWS), {**OPTS, "hoodie.bulkinsert.sort.mode": "SORTED"})


def test_combining_before_a_bulk_insert_keeps_one_record_per_key(tmp_path):
    path = str(tmp_path / "t")
    rows = [("a", 1, "p0", 1), ("a", 2, "p0", 2), ("b", 1, "p1", 3)]
    write_local(path, batch(rows), {**OPTS, "hoodie.combine.before.insert": "true"})
    assert read(path) == [("a", 2), ("b", 3)]
    write_local(path, batch([("c", 1, "p0", 4), ("c", 2, "p0", 5)]), OPTS)  # no combining: both stay
    assert read(path) == [("a", 2), ("b", 3), ("c", 4), ("c", 5)]


def test_a_task_over_its_memory_bound_encodes_early_then_closes_files(tmp_path, monkeypatch):
    from hoodie_datasource.write import bulk_insert

    monkeypatch.setattr(bulk_insert, "TASK_MEMORY_BYTES", 60_000)
    monkeypatch.setattr(bulk_insert, "INPUT_ROWS", 100)  # each batch of 100 rows on its own
    path = str(tmp_path / "t")
    # NONE: the partitions' rows interleaved, a file open for each
    write_local(path, pa.Table.from_batches(batch(ROWS).to_batches(max_chunksize=100)),
                {**OPTS, "hoodie.bulkinsert.sort.mode": "NONE"})  # 30 batches
    files = _base_files(path)
    assert len(files) > 2  # files closed early
    assert any(pq.ParquetFile(os.path.join(path, name)).num_row_groups > 1 for name in files)  # buffers encoded early
    assert read(path) == sorted((k, v) for k, _, _, v in ROWS)
