"""Reading a whole query result into one Arrow table, without Spark (tests, small tables, tools)."""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.metadata.reader import planning_from_metadata
from hoodie_datasource.read.cdc_reader import read_cdc
from hoodie_datasource.read.file_reader import read_file_slice
from hoodie_datasource.read.planner import plan_read
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.table import Table


def read_table(path: str, cfg: ReadConfig | None = None, storage_options: Mapping[str, str] | None = None) -> pa.Table:
    """The query ``cfg`` on the table at ``path`` (a local path or a table URI); ``storage_options`` are
    ``hoodie.storage.*`` keys (credentials, endpoints). A CDC query (incremental, format ``cdc``) returns
    Hudi's CDC schema (``read.cdc_reader``). With ``metadata_enable`` the partitions and files come from the
    table's metadata table when its ``files`` partition is ready: no data partition is listed."""
    cfg = cfg or ReadConfig()
    return read_query(table_for(path, cfg, storage_options), cfg)


def table_for(path: str | Storage, cfg: ReadConfig, storage_options: Mapping[str, str] | None = None) -> Table:
    """The table a read of ``cfg`` plans from: with ``metadata_enable``, a handle that takes its partitions and files
    from the metadata table when its ``files`` partition is ready (made when first asked for: reading only the
    timeline lists nothing more)."""
    return planning_from_metadata(Table.load(path, storage_options), cfg.metadata_enable)


def read_query(table: Table, cfg: ReadConfig) -> pa.Table:
    """The query ``cfg`` on ``table``, read in this process."""
    if cfg.is_cdc:
        return read_cdc(table, cfg)
    plan = plan_read(table, cfg)
    row_filter = plan.commit_filter()
    batches = [b for s in plan.slices for b in read_file_slice(plan, s, row_filter)]
    return pa.Table.from_batches(batches, schema=plan.schema) if batches else plan.schema.empty_table()
