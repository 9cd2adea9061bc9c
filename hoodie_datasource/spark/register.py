"""``hoodie_datasource.register(spark)``: the one call that makes ``format("hoodie")`` complete.

It registers the data source and routes
``df.write.format("hoodie")...save()`` (with the Hudi operation as the save mode, or
``mode("append")`` plus ``hoodie.datasource.write.operation``) to the distributed write DAG, and the
micro-batches of ``df.writeStream.format("hoodie")...start(path)`` to it too (``spark.stream_start``), and
checks ``spark.read.format("hoodie")...load(path)`` before Spark does (``spark.read_check``), so a
bad path or read option raises the ``HoodieError`` itself.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from pyspark.sql import DataFrame, SparkSession

from hoodie_datasource.config import keys as k
from hoodie_datasource.config.table_config import table_exists
from hoodie_datasource.config.write_operation import WriteOperation
from hoodie_datasource.errors import HoodieConfigError, HoodieError
from hoodie_datasource.spark import read_check, save_modes, stream_start
from hoodie_datasource.spark.datasource import HoodieDataSource
from hoodie_datasource.spark.storage_keys import session_storage_keys
from hoodie_datasource.spark.worker_python import preload_in_daemon, use_driver_python_locally
from hoodie_datasource.spark.write_dag import write_dataframe
from hoodie_datasource.storage.registry import open_storage

logger = logging.getLogger(__name__)

_ERROR_MODES = (None, "error", "errorifexists", "default")


def _operation(options: dict[str, str], mode: str | None) -> WriteOperation:
    """The Hudi operation a save mode asks for."""
    given: WriteOperation | None = k.CATALOG.resolve(options, k.OPERATION) if any(
        n.lower() in options for n in k.OPERATION.names) else None
    if mode in save_modes.HOODIE_WRITE_OPERATIONS:
        if given and given != mode:
            raise HoodieConfigError(
                f"mode({mode!r}) conflicts with option hoodie.datasource.write.operation={given.value!r}")
        return WriteOperation(mode)
    if mode == "overwrite":
        if given and given not in (WriteOperation.INSERT_OVERWRITE, WriteOperation.INSERT_OVERWRITE_TABLE):
            raise HoodieConfigError(
                f"mode('overwrite') replaces the table; it cannot run operation {given.value!r} "
                "(use mode('append') with that operation, or insert_overwrite / insert_overwrite_table)"
            )
        return given or WriteOperation.INSERT_OVERWRITE_TABLE
    if mode == "append":
        return given or WriteOperation.UPSERT
    if mode in _ERROR_MODES or mode == "ignore":
        return given or WriteOperation.UPSERT
    raise save_modes.unknown_mode_error(mode)


def save_dataframe(df: DataFrame, options: Mapping[str, str], mode: str | None, path: str | None) -> None:
    """The save handler: validate the mode, then run the write DAG."""
    opts = {key.lower(): value for key, value in options.items()}
    path = path or opts.pop("path", None)
    if not path:
        raise HoodieConfigError("A table path is required: .save(path) or option('path', ...)")
    opts.update(session_storage_keys(df.sparkSession, opts))
    operation = _operation(opts, mode)
    if mode in _ERROR_MODES or mode == "ignore":
        if table_exists(open_storage(path, opts)):
            if mode == "ignore":
                logger.info("Table at %s exists; mode('ignore') writes nothing", path)
                return
            raise HoodieError(
                f"A hoodie table already exists at {path}; use mode('append') (with an operation), "
                "mode('upsert') / mode('insert') / ..., or mode('overwrite')"
            )
    opts[k.OPERATION.key] = operation.value
    for alias in k.OPERATION.aliases:
        opts.pop(alias, None)
    write_dataframe(df, path, opts)


def register(spark: SparkSession) -> None:
    """Register ``format("hoodie")``, the Hudi save modes and the streaming sink on ``spark``, and check the
    path and options of hoodie reads in this process (idempotent)."""
    use_driver_python_locally(spark)
    preload_in_daemon(spark)
    spark.dataSource.register(HoodieDataSource)
    save_modes.install(save_dataframe)
    stream_start.install()
    read_check.install()
