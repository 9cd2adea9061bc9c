"""``spark.readStream.format("hoodie")``: a Structured Streaming source of a table's commits.

Offsets are completed write instants (``{"instant": "<time>"}``, see ``read.stream_offsets``); a
micro-batch from ``s`` to ``e`` is the incremental read of ``(s, e]``, planned from the commits' metadata
(never a table scan) on the driver and read by the tasks, as a batch incremental read is. A restarted
query resumes from Spark's checkpoint: it reads only commits after the last one it processed. When those
were cleaned or archived meanwhile the read fails with ``ReadWindowError`` naming the instant, or, with
``hoodie.datasource.read.incr.fallback.fulltablescan.enable=true``, reads the current snapshot instead.

Read limits (PySpark 4.2+'s ``latestOffset(start, limit)``): ``max.instants.per.trigger`` is offered to
Spark as ``ReadMaxFiles`` (a commit counts as one), ``max.rows.per.trigger`` as ``ReadMaxRows``; Spark
passes ``ReadAllAvailable`` when a trigger asks for everything. ``Trigger.AvailableNow`` reads up to the
latest commit readable when the query started, in as many micro-batches as the limits make.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxFiles,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from hoodie_datasource.config import keys as k
from hoodie_datasource.config.read_config import resolve_read_config
from hoodie_datasource.config.stream_config import resolve_stream_read_config
from hoodie_datasource.errors import StreamingCheckpointError
from hoodie_datasource.read.cdc_reader import CDCPlan, plan_cdc
from hoodie_datasource.read.planner import ReadPlan, plan_read
from hoodie_datasource.read.splits import split_slices
from hoodie_datasource.read.stream_offsets import end_offset, initial_offset
from hoodie_datasource.read.table_reader import table_for
from hoodie_datasource.spark.cdc_reader import CDCReader
from hoodie_datasource.spark.reader import HoodieReader
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.timeline import Timeline


@dataclasses.dataclass(frozen=True)
class StreamView:
    options: dict[str, str]  # the read's options as a stream uses them: without a query type
    incremental_format: str


def stream_view(options: Mapping[str, str]) -> StreamView | None:
    """How a stream reads these options, when they are a stream's and not a batch read's: a CDC format
    without an incremental query, or an incremental query without a begin instant (as Hudi's streams are
    given). None for the options of a batch read."""
    get = lambda prop: k.CATALOG.resolve(options, prop)  # noqa: E731
    incremental = get(k.QUERY_TYPE) == "incremental"
    if (incremental and get(k.BEGIN_INSTANT)) or (not incremental and get(k.INCREMENTAL_FORMAT) != "cdc"):
        return None
    names = {n.lower() for n in k.QUERY_TYPE.names}
    return StreamView({key: v for key, v in options.items() if key.lower() not in names}, get(k.INCREMENTAL_FORMAT))


class _Split(InputPartition):
    """The file slices of one task, with the micro-batch's plan (state kept on the reader in
    ``partitions()`` does not reach ``read()``)."""

    def __init__(self, plan: ReadPlan, slices: tuple[FileSlice, ...]):
        super().__init__(slices)
        self.plan = plan


class _CDCSplit(InputPartition):
    """The file groups of one task of a CDC micro-batch, with the micro-batch's CDC plan."""

    def __init__(self, plan: CDCPlan, groups: tuple):
        super().__init__(groups)
        self.plan = plan


class HoodieStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, path: str, options: Mapping[str, str], arrow_schema: pa.Schema):
        self.path = path
        view = stream_view(options)
        self.options = dict(options) if view is None else view.options
        self.cfg = resolve_stream_read_config(self.options)
        self.read_cfg = resolve_read_config(self.options)
        self.arrow_schema = arrow_schema
        self.target: str | None = None  # Trigger.AvailableNow: the last commit to read

    def _storage(self) -> Storage:
        return open_storage(self.path, self.options)

    def _timeline(self) -> Timeline:
        return self._table().timeline

    def _table(self) -> Table:
        return table_for(self._storage(), self.read_cfg)

    def _offset(self, instant: str) -> dict:
        """An offset names its table too, so a checkpoint taken on another table is refused, not misread."""
        return {"instant": instant, "table": self._storage().uri}

    def _check(self, offset: dict) -> str:
        table = self._storage().uri
        if offset.get("table", table) != table:
            raise StreamingCheckpointError(
                f"The query's checkpoint was taken reading {offset['table']}, not {table}: a checkpoint belongs to "
                "one table; give this query a checkpointLocation of its own")
        return offset["instant"]

    def initialOffset(self) -> dict:
        return self._offset(initial_offset(self._timeline(), self.cfg))

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.cfg.max_instants is not None:
            return ReadMaxFiles(self.cfg.max_instants)
        if self.cfg.max_rows is not None:
            return ReadMaxRows(self.cfg.max_rows)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self.target = end_offset(self._timeline(), self.cfg, "")

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        max_instants = limit.max_files if isinstance(limit, ReadMaxFiles) else None
        max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        return self._offset(end_offset(self._timeline(), self.cfg, self._check(start), max_instants, max_rows,
                                       self.target))

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        begin, end_instant = self._check(start), self._check(end)
        if begin >= end_instant:
            return []
        cfg = dataclasses.replace(self.read_cfg, query_type="incremental", begin_instant=begin,
                                  end_instant=end_instant, as_of_instant=None)
        if cfg.is_cdc:  # changes with before and after images, file group by file group
            changes = plan_cdc(self._table(), cfg)
            return [_CDCSplit(changes, p.value) for p in CDCReader(changes, cfg.parallelism, self.arrow_schema).partitions()]
        plan = plan_read(self._table(), cfg)
        return [_Split(plan, files) for files in split_slices(plan.slices, cfg.split_size, cfg.parallelism)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if isinstance(partition, _CDCSplit):
            yield from CDCReader(partition.plan, 1, self.arrow_schema).read(InputPartition(partition.value))
            return
        cfg = dataclasses.replace(self.read_cfg, query_type="incremental")
        yield from HoodieReader(partition.plan, cfg, self.arrow_schema).read(InputPartition(partition.value))
