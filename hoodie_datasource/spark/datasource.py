"""``format("hoodie")``: the PySpark Python data source.

Reads go straight through it. Writes made with ``df.write.format("hoodie").save()`` after
``hoodie_datasource.register(spark)`` never reach it: they run the distributed write DAG
(``spark.write_dag``). Writes that do reach it (SQL ``INSERT``, ``insertInto``, or a session
without ``register``) are staged by the tasks and written in ``commit()`` by the local engine,
so they are correct whatever their input partitioning; except when the jvm-shim had Spark cluster
the input by the table's partition columns: then each task writes its partitions itself.

A read is planned once per data source: PySpark calls ``schema()`` and hands the same instance, pickled,
to ``reader()``, so the table and the plan made for the schema travel with it (planning lists the timeline
and the table, and reads instant files: on an object store each of those is a request), and so do its
options, resolved once. A DataFrame is read again on every action, so an unpinned plan is checked against
one listing of the timeline first. Nothing is kept between data sources in Python: the jvm-shim, which calls
into Python several times for one query, hands each call the plan its file listing made
(``shim_options.PLAN_OPTION``).
"""

from __future__ import annotations

import base64
import dataclasses
import pickle

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import StructType

from hoodie_datasource.config.read_config import ReadConfig, resolve_read_config
from hoodie_datasource.config.table_config import load_table_config, table_exists
from hoodie_datasource.config.write_config import resolve_write_config
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.metadata.reader import MetadataTableReader
from hoodie_datasource.read.cdc_reader import CDCPlan, plan_cdc
from hoodie_datasource.read.data_skipping import skipped
from hoodie_datasource.read.incremental_range import range_time
from hoodie_datasource.read.planned_files import planned_files
from hoodie_datasource.read.planner import ReadPlan, plan_read
from hoodie_datasource.read.table_reader import table_for
from hoodie_datasource.spark.alter_table import alter_table
from hoodie_datasource.spark.cdc_reader import CDC_SPARK_SCHEMA, CDCReader, cdc_listing
from hoodie_datasource.spark.file_listing import carried_plan, carry_plan, listing_schema, properties_schema
from hoodie_datasource.spark.filters import query_predicate
from hoodie_datasource.spark.partition_writer import PartitionWriter, clustered_input
from hoodie_datasource.spark.procedures import ProcedureReader, procedure_schema
from hoodie_datasource.spark.reader import FilteringReader, HoodieReader
from hoodie_datasource.spark.shim_options import (
    ALTER_SCHEMA_OPTION,
    FILE_GROUPS_OPTION,
    LOG_CHANGES_OPTION,
    PLAN_FILES_OPTION,
    PLAN_INSTANT_OPTION,
    PLAN_OPTION,
    PLANNED_SOURCE_OPTION,
    PROCEDURE_OPTION,
    PUSHDOWN_OPTION,
    QUERY_FILTERS_OPTION,
    TABLE_PROPERTIES_OPTION,
    is_set,
)
from hoodie_datasource.spark.staged_writer import StagedWriter
from hoodie_datasource.spark.stream_reader import HoodieStreamReader, stream_view
from hoodie_datasource.spark.types import spark_arrow_schema, spark_schema
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.table import Table


def table_path(options: dict[str, str]) -> str:
    """The table path of a read or write: ``load(path)`` / ``save(path)`` or option ``path``."""
    path = options.get("path") or options.get("location")
    if not path:
        raise HoodieConfigError("A table path is required: use .load(path) / .save(path) or option('path', ...)")
    return path


def _with_later_columns(table: Table, plan: ReadPlan, unknown: list[str]) -> tuple[ReadPlan, list[str]]:
    """A time travel's plan with the columns the table gained after its instant that ``.schema(...)`` asks for
    (a catalog table's schema is the latest), read as nulls; and the columns the table never had."""
    latest = table.as_of(None).schema
    added = [latest.field(name) for name in unknown if name in latest.names]
    schema = pa.schema(list(plan.schema) + added)
    return dataclasses.replace(plan, schema=schema), [name for name in unknown if name not in latest.names]


def _shows_the_same_writes(table: Table, plan: ReadPlan, cfg: ReadConfig) -> bool:
    """Whether ``table``'s completed writes are those the plan shows (up to the read's end, when it has one, in
    the time an incremental read ranges by: ``read.incremental_range``)."""
    incremental = cfg.query_type == "incremental"
    upto = cfg.end_instant if incremental else cfg.as_of_instant
    by_completion = incremental and table.timeline.ranges_by_completion_time
    shown = (i.timestamp for i in table.timeline.completed() if upto is None or range_time(i, by_completion) <= upto)
    return frozenset(shown) == plan.visible_instants


def _planned_by(pickled: str, path: str, cfg: ReadConfig) -> tuple[Table, ReadPlan] | None:
    """The table and plan of a data source PySpark made and pickled (``PLANNED_SOURCE_OPTION``), when it read
    the table at ``path`` with options that resolve to ``cfg``; else None."""
    source = pickle.loads(base64.b64decode(pickled))  # noqa: S301 - as trusted as a UDF (file_listing.carried_plan)
    made = getattr(source, "_made", None)
    if made is None or table_path(source.options) != path or source._read_config() != cfg:
        return None
    return made


class HoodieDataSource(DataSource):
    """Hudi tables as ``format("hoodie")``."""

    def _read_config(self) -> ReadConfig:
        """The read's options, resolved once (the result travels with this instance to ``reader()``), pinned as
        the jvm-shim asks (see ``spark.shim_options``)."""
        cfg: ReadConfig | None = getattr(self, "_resolved", None)
        if cfg is None:
            cfg = resolve_read_config(self.options)
            pinned = self.options.get(PLAN_INSTANT_OPTION) or None
            self._resolved = cfg = cfg.pinned_to(pinned) if pinned else cfg
        return cfg

    def _planned(self) -> tuple[Table, ReadPlan]:
        """The table and the read plan made from it (or handed over by the jvm-shim: ``PLAN_OPTION``), the plan
        restricted to the file groups the shim asks for. Both travel with this instance from ``schema()`` to
        ``reader()`` (PySpark pickles it, maybe into another worker); a DataFrame is read again on every action,
        so an unpinned plan is made again when one listing of the timeline shows other completed writes than
        it does."""
        cfg = self._read_config()
        made: tuple[Table, ReadPlan] | None = getattr(self, "_made", None)
        if made is None and self.options.get(PLAN_OPTION):
            made = carried_plan(self.options[PLAN_OPTION])
        if made is None and self.options.get(PLANNED_SOURCE_OPTION):
            made = _planned_by(self.options[PLANNED_SOURCE_OPTION], table_path(self.options), cfg)
        if made is None:
            table = table_for(table_path(self.options), cfg, self.options)
            made = table, plan_read(table, cfg)
        elif not self.options.get(PLAN_INSTANT_OPTION):  # a pinned plan shows the same files whenever it is made
            table = made[0].refresh()
            if not _shows_the_same_writes(table, made[1], cfg):
                made = table, plan_read(table, cfg)
        self._made = made
        table, plan = made
        if self.options.get(FILE_GROUPS_OPTION):
            plan = plan.only(frozenset(self.options[FILE_GROUPS_OPTION].split("\n")))
        return table, plan

    def _column_ranges(self, table: Table) -> MetadataTableReader | None:
        """The metadata table whose column ranges a read's filters skip file slices by (``read.data_skipping``):
        None with data skipping off, without a metadata table to plan from, and for the Python reads of a
        jvm-shim's native read (pinned to its listing's instant), whose listing left the skipped slices out."""
        if not self._read_config().data_skipping or self.options.get(PLAN_INSTANT_OPTION):
            return None
        listing = table.file_listing
        return listing if isinstance(listing, MetadataTableReader) else None

    def _cdc(self) -> CDCPlan | None:
        """A CDC query's plan (made once: it travels with this instance to ``reader()``); None for other reads."""
        cfg = self._read_config()
        if not cfg.is_cdc:
            return None
        made: CDCPlan | None = getattr(self, "_made_cdc_plan", None)
        if made is None or made.end != (cfg.end_instant or made.end):
            made = plan_cdc(table_for(table_path(self.options), cfg, self.options), cfg)
            self._made_cdc_plan = made
        return made

    @classmethod
    def name(cls) -> str:
        return "hoodie"

    def schema(self) -> StructType:
        if self.options.get(PROCEDURE_OPTION):
            return procedure_schema(self.options)
        if is_set(self.options, TABLE_PROPERTIES_OPTION):
            return properties_schema(open_storage(table_path(self.options), self.options))
        if self.options.get(ALTER_SCHEMA_OPTION):
            alter_table(Table.load(table_path(self.options), self.options), self.options[ALTER_SCHEMA_OPTION])
        view = stream_view(self.options)
        if view is not None:  # a stream's columns (a batch read of these options fails in reader())
            if view.incremental_format == "cdc":
                return CDC_SPARK_SCHEMA
            as_of = resolve_read_config(view.options).as_of_instant
            return spark_schema(Table.load(table_path(view.options), view.options).as_of(as_of).schema)
        cdc = self._cdc()
        if cdc is not None:
            return listing_schema(cdc_listing(cdc)) if is_set(self.options, PLAN_FILES_OPTION) else CDC_SPARK_SCHEMA
        table, plan = self._planned()
        if is_set(self.options, PLAN_FILES_OPTION):
            filters = self.options.get(QUERY_FILTERS_OPTION)
            read = skipped(plan, query_predicate(filters), self._column_ranges(table)) if filters else plan
            return listing_schema(planned_files(read), plan.storage, table_path(self.options), carry_plan(table, plan),
                                  skipped=len(plan.slices) - len(read.slices))
        return spark_schema(plan.schema)

    def reader(self, schema: StructType) -> DataSourceReader:
        if self.options.get(PROCEDURE_OPTION):
            return ProcedureReader(self.options)
        cdc = self._cdc()
        if cdc is not None:
            return CDCReader(cdc, self._read_config().parallelism, spark_arrow_schema(schema))
        if stream_view(self.options) is not None:
            raise HoodieConfigError(
                "hoodie.datasource.query.incremental.format=cdc applies to incremental queries: set "
                "query.type=incremental and begin.instant, or read the changes as a stream (readStream)")
        table, plan = self._planned()
        cfg = self._read_config()
        changes = self.options.get(LOG_CHANGES_OPTION) or None
        unknown = [name for name in schema.names if name not in plan.schema.names]
        if unknown and cfg.as_of_instant:
            plan, unknown = _with_later_columns(table, plan, unknown)
        if unknown and changes != "replaced":  # the shim's replaced rows: base file ordinal and row index
            raise HoodieConfigError(
                f"Column(s) {', '.join(unknown)} given in .schema(...) are not in the table; "
                f"its columns are: {', '.join(plan.schema.names)}")
        groups = self.options.get(FILE_GROUPS_OPTION, "").split("\n") if changes == "replaced" else ()
        if is_set(self.options, PUSHDOWN_OPTION):
            return FilteringReader(plan, cfg, spark_arrow_schema(schema), changes, groups, self._column_ranges(table))
        return HoodieReader(plan, cfg, spark_arrow_schema(schema), changes, groups)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """``readStream``: the table's commits, as they complete (``spark.stream_reader``)."""
        return HoodieStreamReader(table_path(self.options), self.options, spark_arrow_schema(schema))

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        # a query started with start() after register() runs the sink through foreachBatch and never gets here
        raise HoodieConfigError(
            "writeStream.format('hoodie') writes with .start(path) after hoodie_datasource.register(spark) in the "
            "process that starts the query (each micro-batch is then one commit of the distributed write, exactly "
            "once); toTable() and sessions without register() cannot write a hoodie stream")

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        options = dict(self.options)
        if not overwrite:
            storage = open_storage(table_path(options), options)
            config = resolve_write_config(options, load_table_config(storage) if table_exists(storage) else None)
            if clustered_input(options, config):
                return PartitionWriter.create(storage, options, schema)
        return StagedWriter.create(options, schema, overwrite)
