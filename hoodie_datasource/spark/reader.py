"""The Python data source reader: one input partition per file slice (small ones coalesced).

Everything ``read()`` needs travels in the reader (pickled to every task) or in the partition:
state set in ``partitions()`` is lost (see the PySpark data source facts).
"""

from __future__ import annotations

import functools
import logging
import operator
from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSourceReader, Filter, InputPartition

from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.file_reader import read_file_slice
from hoodie_datasource.read.planner import ReadPlan
from hoodie_datasource.spark.filters import ConvertedFilter, convert
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.write.keygen import DEFAULT_PARTITION
from hoodie_datasource.write.records import COMMIT_TIME_COLUMN, conform

logger = logging.getLogger(__name__)


def partition_values(partition_path: str, fields: Sequence[str], hive_style: bool) -> dict[str, str | None]:
    parts = partition_path.split("/") if partition_path else []
    values: dict[str, str | None] = {}
    for position, name in enumerate(fields):
        if position >= len(parts):
            break
        raw = parts[position]
        if hive_style and "=" in raw:
            raw = raw.split("=", 1)[1]
        values[name] = None if raw == DEFAULT_PARTITION else raw
    return values


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
        self.filters: list[ConvertedFilter] = []

    def _row_filter(self) -> tuple[pc.Expression | None, frozenset[str]]:
        exprs = [f.expression for f in self.filters]
        columns: frozenset[str] = frozenset().union(*(f.columns for f in self.filters)) if self.filters else frozenset()
        commit_filter = self.plan.commit_filter()
        if commit_filter is not None:
            exprs.append(commit_filter)
            columns = columns | {COMMIT_TIME_COLUMN}
        if not exprs:
            return None, columns
        return functools.reduce(operator.and_, exprs), columns

    def _prune_partitions(self, slices: Sequence[FileSlice]) -> list[FileSlice]:
        table = self.plan.table
        fields = [f for f in table.partition_fields if f in self.plan.schema.names]
        usable = [f for f in self.filters if f.columns <= set(fields)]
        if not usable or not slices:
            return list(slices)
        paths = sorted({s.partition_path for s in slices})
        columns = {}
        for name in fields:
            raw = pa.array([partition_values(p, table.partition_fields, table.hive_style_partitioning).get(name)
                            for p in paths], pa.string())
            try:
                columns[name] = raw.cast(self.plan.schema.field(name).type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                return list(slices)  # partition path not parseable as the column type: no pruning
        keep_mask = pa.table(columns).filter(functools.reduce(operator.and_, [f.expression for f in usable]))
        kept_rows = set(zip(*[keep_mask.column(n).to_pylist() for n in fields])) if keep_mask.num_rows else set()
        wanted = {p for p, row in zip(paths, zip(*[columns[n].to_pylist() for n in fields])) if row in kept_rows}
        pruned = [s for s in slices if s.partition_path in wanted]
        logger.info("Partition pruning kept %d of %d partitions", len(wanted), len(paths))
        return pruned

    def partitions(self) -> list[InputPartition]:
        slices = self._prune_partitions(self.plan.slices)
        return [InputPartition(files) for files in coalesce(slices, self.cfg.split_size)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if partition.value is None:
            return
        row_filter, columns = self._row_filter()
        for file_slice in partition.value:
            for batch in read_file_slice(self.plan, file_slice, row_filter, columns):
                yield from conform(pa.Table.from_batches([batch]), self.arrow_schema).to_batches()


class HoodieFilteringReader(HoodieReader):
    """The reader with filter pushdown (needs spark.sql.python.filterPushdown.enabled=true)."""

    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:
        for f in filters:
            converted = convert(f, self.plan.schema)
            if converted is None:
                yield f
            else:
                self.filters.append(converted)
