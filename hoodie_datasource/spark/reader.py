"""The Python data source reader: one input partition per file slice (small ones coalesced).

Everything ``read()`` needs travels in the reader (pickled to every task) or in the partition:
state set in ``partitions()`` is lost (see the PySpark data source facts).

No filter pushdown: PySpark 4.3 caches a DataFrame's planned reader, and a query *without*
filters reuses the reader (and the partitions) planned for an earlier query on the same
DataFrame *with* filters, without calling ``pushFilters`` again. A reader that pruned or
filtered on pushed filters would silently drop rows from that later query (measured: after
``df.filter("fare > 15").count()``, ``df.count()`` returned 1 of 2 rows). So Spark applies every
filter itself. A schema given with ``.schema(...)`` is per relation, not per query, so reading
only its columns is safe.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition

from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.file_reader import read_file_slice
from hoodie_datasource.read.planner import ReadPlan
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.write.records import COMMIT_TIME_COLUMN, conform

logger = logging.getLogger(__name__)


def coalesce(slices: Sequence[FileSlice], split_size: int) -> list[tuple[FileSlice, ...]]:
    """Group slices into input partitions of about ``split_size`` bytes, keeping order."""
    groups: list[tuple[FileSlice, ...]] = []
    current: list[FileSlice] = []
    size = 0
    for s in sorted(slices, key=lambda s: (s.partition_path, s.file_id)):
        if current and size + s.total_size > split_size:
            groups.append(tuple(current))
            current, size = [], 0
        current.append(s)
        size += s.total_size
    if current:
        groups.append(tuple(current))
    return groups


class HoodieReader(DataSourceReader):
    def __init__(self, plan: ReadPlan, cfg: ReadConfig, arrow_schema: pa.Schema):
        self.plan = plan
        self.cfg = cfg
        self.arrow_schema = arrow_schema  # what Spark expects, exactly
        # a schema given with .schema(...) may name fewer columns: base files are read for those only
        self.columns = frozenset(arrow_schema.names) if set(arrow_schema.names) < set(plan.schema.names) else None

    def partitions(self) -> list[InputPartition]:
        return [InputPartition(files) for files in coalesce(self.plan.slices, self.cfg.split_size)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if partition.value is None:
            return
        commit_filter = self.plan.commit_filter()
        filter_columns = frozenset([COMMIT_TIME_COLUMN]) if commit_filter is not None else frozenset()
        for file_slice in partition.value:
            for batch in read_file_slice(self.plan, file_slice, commit_filter, filter_columns, self.columns):
                yield from conform(pa.Table.from_batches([batch]), self.arrow_schema).to_batches()
