"""Reading base files as Arrow batches in the table's schema, with an optional row filter.

A filter is handed to pyarrow's dataset scanner, which skips row groups by their min/max
statistics and filters rows; without one the file's columns are decoded directly (``ParquetFile``,
about a quarter cheaper than a scanner). A file written before a column existed reads it as nulls.
A filter on a floating-point column is applied to the decoded rows instead: pyarrow's writer leaves
NaN out of min/max (our base files of earlier versions hold such statistics), and the scanner decides
whole row groups by them, even ``is_nan(d)`` (a row group whose min and max are 3.5 is taken for
``d == 3.5`` throughout), so it would skip NaN rows.
The file is fetched through the table's storage (a memory map locally, one GET on an object store) and
read from memory, ``BATCH_ROWS`` rows at a time.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.storage.parquet import parquet_errors, parquet_file, parquet_fragment
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.meta_columns import conform

BATCH_ROWS = 262144


def read_base_file(
    storage: Storage,
    relative: str,
    schema: pa.Schema,
    row_filter: pc.Expression | None = None,
    filter_columns: frozenset[str] = frozenset(),
) -> Iterator[pa.RecordBatch]:
    if row_filter is None:
        yield from _read_columns(storage, relative, schema)
        return
    fragment = parquet_fragment(storage, relative)
    file_columns = set(fragment.physical_schema.names)
    pushable = filter_columns <= file_columns and not any(
        pa.types.is_floating(fragment.physical_schema.field(name).type) for name in filter_columns)
    columns = [name for name in schema.names if name in file_columns]
    scanner = fragment.scanner(
        columns=columns, filter=row_filter if pushable else None, batch_size=BATCH_ROWS, use_threads=False
    )
    batches = scanner.to_batches()
    while True:
        with parquet_errors(storage, relative):  # a damaged page surfaces while decoding
            batch = next(batches, None)
        if batch is None:
            return
        table = conform(pa.Table.from_batches([batch]), schema)
        if not pushable:
            table = table.filter(row_filter)
        if table.num_rows:
            yield from table.to_batches()


def _read_columns(storage: Storage, relative: str, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    parquet = parquet_file(storage, relative)
    file_columns = set(parquet.schema_arrow.names)
    columns = [name for name in schema.names if name in file_columns]
    batches = parquet.iter_batches(batch_size=BATCH_ROWS, columns=columns, use_threads=False)
    while True:
        with parquet_errors(storage, relative):  # a damaged page surfaces while decoding
            batch = next(batches, None)
        if batch is None:
            return
        yield from conform(pa.Table.from_batches([batch]), schema).to_batches()
