"""The data source writer for writes that bypass ``register()``'s DAG (SQL INSERT, insertInto).

Spark gives the writer its input as the user partitioned it and no SparkSession in ``commit()``,
so tasks only stage their rows (``.hoodie/.temp/staging-<id>/``, through the table's storage, so on
an object store too) and ``commit()`` runs the whole write with the local engine: correct for any
input partitioning, bounded by one process.

An INSERT OVERWRITE that names what it replaces (the table, or a static ``PARTITION (...)``) commits even
with no rows, replacing it with nothing, as Spark empties a parquet table or partition and Hudi writes the
replacecommit; one that replaces the partitions of its rows (dynamic) has nothing to do without rows.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark import TaskContext
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.client.write_client import create_table
from hoodie_datasource.config import keys as k
from hoodie_datasource.config.metadata_config import resolve_metadata_config
from hoodie_datasource.config.table_config import METAFOLDER, load_table_config, table_exists
from hoodie_datasource.config.write_config import resolve_write_config
from hoodie_datasource.config.write_operation import WriteOperation
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.metadata.reader import planning_from_metadata
from hoodie_datasource.spark.shim_options import STATIC_PARTITION_OPTION
from hoodie_datasource.spark.types import spark_arrow_schema
from hoodie_datasource.storage.parquet import read_parquet
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.storage.storage import Storage, join
from hoodie_datasource.table.fs_view import partitions_of
from hoodie_datasource.table.keygen import KeyGenerator
from hoodie_datasource.table.table import Table


@dataclass
class StagedFile(WriterCommitMessage):
    path: str  # relative to the table; "" when the task had no rows
    rows: int


class StagedWriter(DataSourceArrowWriter):
    def __init__(self, options: dict[str, str], staging: str, storage: Storage, schema: pa.Schema,
                 replaces_without_rows: bool = False):
        self.options = options
        self.staging = staging  # relative to the table
        self.storage = storage
        self.schema = schema
        self.replaces_without_rows = replaces_without_rows  # an overwrite of the table or of static partitions

    @staticmethod
    def create(options: dict[str, str], schema: StructType, overwrite: bool) -> StagedWriter:
        path = options.get("path") or options.get("location")
        if not path:
            raise HoodieConfigError("A table path is required: use .save(path) or option('path', ...)")
        options = dict(options)
        static = [options.pop(key) for key in list(options) if key.lower() == STATIC_PARTITION_OPTION]
        storage = open_storage(path, options)
        arrow_schema = spark_arrow_schema(schema)
        if overwrite:
            # INSERT OVERWRITE replaces the table, or with a static PARTITION clause or dynamic partition
            # overwrite (the shim asks for operation insert_overwrite) the partitions it names or its rows fall in
            dynamic = k.CATALOG.resolve(options, k.OPERATION) is WriteOperation.INSERT_OVERWRITE
            for name in k.OPERATION.names:
                options.pop(name.lower(), None)
            operation = WriteOperation.INSERT_OVERWRITE if dynamic else WriteOperation.INSERT_OVERWRITE_TABLE
            options[k.OPERATION.key] = operation.value
        # fail now, in the planning worker, rather than after every task ran
        config = resolve_write_config(options, load_table_config(storage) if table_exists(storage) else None)
        static_paths = _static_partition_paths(json.loads(static[0]), arrow_schema, config.keygen, storage,
                                               resolve_metadata_config(options).enabled) if static else []
        if static_paths:
            options[k.STATIC_OVERWRITE_PARTITIONS.key] = ",".join(static_paths)
        replaces_without_rows = overwrite and (config.operation.replaces_table or bool(static_paths))
        staging = join(METAFOLDER, ".temp", f"staging-{uuid.uuid4().hex}")
        return StagedWriter(options, staging, storage, arrow_schema, replaces_without_rows)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> StagedFile:
        task = TaskContext.get()
        name = f"part-{task.partitionId() if task else 0}-{task.attemptNumber() if task else 0}.parquet"
        rel = join(self.staging, name)
        sink = pa.BufferOutputStream()  # the file is stored whole: object stores have no append
        rows = 0
        writer = None
        try:
            for batch in iterator:
                if writer is None:
                    writer = pq.ParquetWriter(sink, batch.schema)
                writer.write_batch(batch)
                rows += batch.num_rows
        finally:
            if writer is not None:
                writer.close()
        if not rows:
            return StagedFile("", 0)
        self.storage.write(rel, sink.getvalue())
        return StagedFile(rel, rows)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        try:
            staged = [m.path for m in messages if isinstance(m, StagedFile) and m.path]
            tables = [read_parquet(self.storage, rel) for rel in staged]
            if not tables:
                if self.replaces_without_rows and table_exists(self.storage):
                    write_local(self.storage, self.schema.empty_table(), self.options)
                    return
                # no rows: a new table is created empty (SQL CREATE TABLE and CTAS of nothing), no commit
                create_table(self.storage, self.options, self.schema)
                return
            data = pa.concat_tables(tables, promote_options="default")
            write_local(self.storage, data, self.options)
        finally:
            self.storage.delete_tree(self.staging)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        self.storage.delete_tree(self.staging)


def _static_partition_paths(values: dict[str, str | None], schema: pa.Schema, keygen: KeyGenerator,
                            storage: Storage, metadata_enabled: bool) -> list[str]:
    """The partitions a static ``PARTITION (...)`` clause names: its values (as the shim passes them: Spark's
    internal value as a string, a date as days and a timestamp as microseconds since the epoch) spell a
    partition path as a row holding them would. A clause leaving partition columns dynamic names every stored
    partition whose path holds its values in their places (Hudi's ``ProvidesHoodieConfig.deduceOverwriteConfig``
    lists them with its file index; both take them from the metadata table when it is on)."""
    columns = {}
    for name, value in values.items():
        typ = schema.field(name).type
        if pa.types.is_date(typ):
            column = pa.array([None if value is None else int(value)], pa.int32()).cast(pa.date32())
        elif pa.types.is_timestamp(typ):
            column = pa.array([None if value is None else int(value)], pa.int64()).cast(pa.timestamp("us", typ.tz))
        else:
            column = pa.array([value], pa.string())
        columns[name] = column.cast(typ)
    row = pa.table(columns)
    fields = keygen.partition_fields
    if set(values) == set(fields):
        paths = [keygen.partition_paths(row)[0].as_py()]
    else:
        wanted = {fields.index(name): replace(keygen, partition_fields=(name,)).partition_paths(row)[0].as_py()
                  for name in values}
        paths = []
        stored = planning_from_metadata(Table.load(storage), metadata_enabled) if table_exists(storage) else None
        for path in partitions_of(stored.listed_files()) if stored is not None else ():
            parts = path.split("/")
            if len(parts) != len(fields):
                raise HoodieConfigError(
                    f"INSERT OVERWRITE ... PARTITION ({', '.join(values)}) cannot tell whether it names the stored "
                    f"partition {path!r}, whose values hold a '/'; nothing was written. Give every partition "
                    "column a value, or set spark.sql.sources.partitionOverwriteMode=dynamic")
            if all(parts[i] == part for i, part in wanted.items()):
                paths.append(path)
    for path in paths:
        if "," in path:  # the paths travel as hoodie.static.overwrite.partition.paths, comma separated
            raise HoodieConfigError(
                f"INSERT OVERWRITE ... PARTITION (...) names partition {path!r}, which holds a ',' (a partition "
                "value with a comma, not URL-encoded); nothing was written. Set "
                "spark.sql.sources.partitionOverwriteMode=dynamic to replace the partitions the rows fall in")
    return paths
