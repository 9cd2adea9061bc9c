"""Reading a file slice as Arrow batches in the table's schema: its base file alone
(``file_group.base_reader``) or merged with its log blocks (``file_group.merged_reader``)."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.file_group.base_reader import BATCH_ROWS, read_base_file
from hoodie_datasource.file_group.merged_reader import iter_merged_slice, merge_schema
from hoodie_datasource.read.planner import ReadPlan
from hoodie_datasource.table.file_group import FileSlice


def read_file_slice(plan: ReadPlan, file_slice: FileSlice, row_filter: pc.Expression | None = None,
                    filter_columns: frozenset[str] = frozenset(),
                    columns: frozenset[str] | None = None) -> Iterator[pa.RecordBatch]:
    """A file slice in the table schema: the base file alone (copy-on-write, read-optimized), or
    merged with its log blocks (merge-on-read snapshot and incremental). With ``columns``, the slice is
    read for those columns only (plus the filter's, and for a merge the record key and ordering field)."""
    schema = plan.schema
    if columns is not None:
        wanted = columns | filter_columns
        schema = pa.schema([f for f in plan.schema if f.name in wanted])
    if plan.needs_merge(file_slice):
        read_schema = merge_schema(plan.schema, None if columns is None else schema.names, plan.ordering_field)
        for part in iter_merged_slice(plan.storage, file_slice, read_schema, plan.visible_instants, plan.merge_rule):
            if row_filter is not None:
                part = part.filter(row_filter)
            if part.num_rows:
                yield from part.select(schema.names).to_batches(max_chunksize=BATCH_ROWS)
    elif file_slice.base_relative_path is not None:
        yield from read_base_file(plan.storage, file_slice.base_relative_path, schema, row_filter,
                                  filter_columns)
