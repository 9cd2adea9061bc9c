"""Reading base files as Arrow batches in the table's schema, with an optional row filter.

A filter is handed to pyarrow's dataset scanner, which skips row groups by their min/max
statistics and filters rows; a file written before a column existed reads it as nulls. The file is
fetched through the table's storage (a memory map locally, one GET on an object store) and scanned
from memory.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.read.merged_reader import read_merged_slice
from hoodie_datasource.read.planner import ReadPlan
from hoodie_datasource.storage.parquet import parquet_errors, parquet_fragment
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.meta_columns import conform

BATCH_ROWS = 262144


def read_base_file(
    storage: Storage,
    relative: str,
    schema: pa.Schema,
    row_filter: pc.Expression | None = None,
    filter_columns: frozenset[str] = frozenset(),
) -> Iterator[pa.RecordBatch]:
    fragment = parquet_fragment(storage, relative)
    file_columns = set(fragment.physical_schema.names)
    pushable = row_filter is not None and filter_columns <= file_columns
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
        if row_filter is not None and not pushable:
            table = table.filter(row_filter)
        if table.num_rows:
            yield from table.to_batches()


def read_file_slice(plan: ReadPlan, file_slice: FileSlice, row_filter: pc.Expression | None = None,
                    filter_columns: frozenset[str] = frozenset(),
                    columns: frozenset[str] | None = None) -> Iterator[pa.RecordBatch]:
    """A file slice in the table schema: the base file alone (copy-on-write, read-optimized), or
    merged with its log blocks (merge-on-read snapshot and incremental). With ``columns``, a base
    file is read for those columns only (plus the filter's); a merge always reads whole records."""
    if plan.needs_merge(file_slice):
        merged = read_merged_slice(plan.storage, file_slice, plan.schema, plan.visible_instants,
                                   plan.ordering_field)
        if row_filter is not None:
            merged = merged.filter(row_filter)
        yield from merged.to_batches(max_chunksize=BATCH_ROWS)
    elif file_slice.base_relative_path is not None:
        schema = plan.schema
        if columns is not None:
            wanted = columns | filter_columns
            schema = pa.schema([f for f in plan.schema if f.name in wanted])
        yield from read_base_file(plan.storage, file_slice.base_relative_path, schema, row_filter,
                                  filter_columns)
