"""Parquet files through a table's ``Storage``: the one place base files meet pyarrow.parquet.

Whole-file reads fetch the object once (one GET on an object store; a memory map locally) and parse
it from memory; footer reads (bloom filters, key ranges, schemas) open a random-access input, which
costs a HEAD and a ranged GET or two on an object store. (Writers encode a file into memory and store it
whole with ``Storage.write``, so a reader never sees a partial base file: ``write.base_file_writer``.)
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie_datasource.storage.storage import Storage


def read_parquet(storage: Storage, rel: str, columns: Sequence[str] | None = None, filters=None,
                 use_threads: bool = True) -> pa.Table:
    return pq.read_table(pa.BufferReader(storage.read_buffer(rel)), columns=columns, filters=filters,
                         use_threads=use_threads)


def read_parquet_metadata(storage: Storage, rel: str) -> pq.FileMetaData:
    with storage.open_input(rel) as source:
        return pq.read_metadata(source)


def read_parquet_schema(storage: Storage, rel: str) -> pa.Schema:
    with storage.open_input(rel) as source:
        return pq.read_schema(source)
