"""``format("hoodie")``: the PySpark Python data source.

Reads go straight through it. Writes made with ``df.write.format("hoodie").save()`` after
``hoodie_datasource.register(spark)`` never reach it: they run the distributed write DAG
(``spark.write_dag``). Writes that do reach it (SQL ``INSERT``, ``insertInto``, or a session
without ``register``) are staged by the tasks and written in ``commit()`` by the local engine,
so they are correct whatever their input partitioning; except when the jvm-shim had Spark cluster
the input by the table's partition columns: then each task writes its partitions itself.
"""

from __future__ import annotations

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceWriter
from pyspark.sql.types import StructType

from hoodie_datasource.config.read_config import ReadConfig, resolve_read_config
from hoodie_datasource.config.write_config import resolve_write_config
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.read.planned_files import planned_files
from hoodie_datasource.read.planner import ReadPlan, plan_read
from hoodie_datasource.spark.alter_table import alter_table
from hoodie_datasource.spark.file_listing import listing_schema, properties_schema
from hoodie_datasource.spark.partition_writer import PartitionWriter, clustered_input
from hoodie_datasource.spark.procedures import ProcedureReader, procedure_schema
from hoodie_datasource.spark.reader import FilteringReader, HoodieReader
from hoodie_datasource.spark.shim_options import (
    ALTER_SCHEMA_OPTION,
    FILE_GROUPS_OPTION,
    PLAN_FILES_OPTION,
    PLAN_INSTANT_OPTION,
    PROCEDURE_OPTION,
    PUSHDOWN_OPTION,
    TABLE_PROPERTIES_OPTION,
    is_set,
)
from hoodie_datasource.spark.staged_writer import StagedWriter
from hoodie_datasource.spark.types import spark_arrow_schema, spark_schema
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.table_config import load_table_config, table_exists


def table_path(options: dict[str, str]) -> str:
    """The table path of a read or write: ``load(path)`` / ``save(path)`` or option ``path``."""
    path = options.get("path") or options.get("location")
    if not path:
        raise HoodieConfigError("A table path is required: use .load(path) / .save(path) or option('path', ...)")
    return path


def _plan(options: dict[str, str]) -> tuple[ReadPlan, ReadConfig]:
    """The read plan of the options, pinned and restricted as the jvm-shim asks (see ``spark.shim_options``)."""
    cfg = resolve_read_config(options)
    if options.get(PLAN_INSTANT_OPTION):
        cfg = cfg.pinned_to(options[PLAN_INSTANT_OPTION])
    plan = plan_read(open_storage(table_path(options), options), cfg)
    if options.get(FILE_GROUPS_OPTION):
        plan = plan.only(frozenset(options[FILE_GROUPS_OPTION].split("\n")))
    return plan, cfg


class HoodieDataSource(DataSource):
    """Hudi tables as ``format("hoodie")``."""

    @classmethod
    def name(cls) -> str:
        return "hoodie"

    def schema(self) -> StructType:
        if self.options.get(PROCEDURE_OPTION):
            return procedure_schema(self.options)
        if is_set(self.options, TABLE_PROPERTIES_OPTION):
            return properties_schema(open_storage(table_path(self.options), self.options))
        if self.options.get(ALTER_SCHEMA_OPTION):
            alter_table(open_storage(table_path(self.options), self.options), self.options[ALTER_SCHEMA_OPTION])
        plan, _ = _plan(self.options)
        if is_set(self.options, PLAN_FILES_OPTION):
            return listing_schema(planned_files(plan))
        return spark_schema(plan.schema)

    def reader(self, schema: StructType) -> DataSourceReader:
        if self.options.get(PROCEDURE_OPTION):
            return ProcedureReader(self.options)
        plan, cfg = _plan(self.options)
        unknown = [name for name in schema.names if name not in plan.schema.names]
        if unknown:
            raise HoodieConfigError(
                f"Column(s) {', '.join(unknown)} given in .schema(...) are not in the table; "
                f"its columns are: {', '.join(plan.schema.names)}")
        reader = FilteringReader if is_set(self.options, PUSHDOWN_OPTION) else HoodieReader
        return reader(plan, cfg, spark_arrow_schema(schema))

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        options = dict(self.options)
        if not overwrite:
            storage = open_storage(table_path(options), options)
            config = resolve_write_config(options, load_table_config(storage) if table_exists(storage) else None)
            if clustered_input(options, config):
                return PartitionWriter.create(storage, options, schema)
        return StagedWriter.create(options, schema, overwrite)
