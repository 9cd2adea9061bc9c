"""Every ``hoodie.parquet.compression.codec`` Hudi allows writes base files and parquet log blocks in it, read
back whole by us and by hudi-rs; ``uncompressed`` (parquet-mr's name, which pyarrow calls ``none``) included."""

from __future__ import annotations

import glob
import io
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi import HudiTableBuilder

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.keys import COMPRESSION_CODECS
from hoodie_datasource.log.log_format import BlockType, read_log_blocks
from hoodie_datasource.storage.registry import open_storage
from tests.unit.small_tables import batch
from tests.unit.small_tables import read_pairs as read

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}


@pytest.mark.parametrize("codec", COMPRESSION_CODECS)
def test_base_files_and_parquet_log_blocks_are_written_in_the_codec(tmp_path, codec):
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.parquet.compression.codec": codec, "storage.type": "MERGE_ON_READ",
            "hoodie.logfile.data.block.format": "parquet"}
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "x", 2)]), opts)
    write_local(path, batch([("a", 2, "x", 10)]), opts)
    assert read(path) == [("a", 10), ("b", 2)]
    merged = pa.Table.from_batches(HudiTableBuilder.from_base_uri(path).build().read())  # hudi-rs merges the log
    assert sorted(zip(merged.column("id").to_pylist(), merged.column("v").to_pylist())) == [("a", 10), ("b", 2)]
    expected = "UNCOMPRESSED" if codec == "uncompressed" else codec.upper()
    (base,) = glob.glob(f"{path}/x/*.parquet")
    assert {pq.ParquetFile(base).metadata.row_group(0).column(i).compression
            for i in range(pq.ParquetFile(base).metadata.num_columns)} == {expected}
    (log,) = glob.glob(f"{path}/x/.*.log.*")
    blocks = [b for b in read_log_blocks(open_storage(path), os.path.relpath(log, path))
              if b.block_type is BlockType.PARQUET_DATA]
    assert blocks and pq.ParquetFile(io.BytesIO(blocks[0].content)).metadata.row_group(0).column(0).compression \
        == expected
