"""Where a write task's records go (a file group and how to write it) and what every task of
one instant shares."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from hoodie_datasource.config.write_config import IndexConfig
from hoodie_datasource.storage.storage import Storage

CREATE, MERGE, APPEND = "CREATE", "MERGE", "APPEND"


@dataclass(frozen=True)
class WriteTarget:
    """Where a group of records goes: a new file group (CREATE), a rewrite of the latest base
    file (MERGE, copy-on-write and small files), or a log append (APPEND, merge-on-read)."""

    partition: str
    file_id: str
    base_file: str | None = None  # path relative to the table, None for a new file group
    base_instant: str | None = None
    io_type: str = CREATE
    base_size: int | None = None  # bytes of the base file, from the listing
    log_version: int | None = None  # APPEND: the new log file's version, from the listing
    log_files: tuple[str, ...] = ()  # APPEND: the names of the slice's log files before this write


@dataclass(frozen=True)
class WriteContext:
    """What every write task of one instant shares (pickled into the tasks; the storage pickles as
    its URI and settings, so each task opens the store itself)."""

    storage: Storage
    instant: str
    data_schema: pa.Schema
    index: IndexConfig
    compression: str
    precombine_field: str | None
    dedupe: bool
    event_time_ordering: bool
    concat_inserts: bool = False  # ``WriteConfig.concats_inserts``
    log_block_format: str = "parquet"
    table_name: str = "hoodie"
    record_key_fields: tuple[str, ...] = ()
    cdc_logging_mode: str | None = None  # the table's CDC supplemental logging mode; None: CDC is off
    tracks_record_keys: bool = False  # the metadata table keeps a record index: write stats carry the keys
    # the metadata table keeps column statistics (of these columns; every one when empty), bloom filters:
    # write stats carry them
    column_stats_columns: tuple[str, ...] | None = None
    tracks_bloom_filters: bool = False
