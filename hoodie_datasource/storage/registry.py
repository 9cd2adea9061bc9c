"""``open_storage(uri, options)``: the storage of a table URI, one per URI and settings per process.

Spark's Python workers call it too: a reader or writer ships the URI and the resolved
``StorageOptions`` (never an open connection), and each worker opens the store itself.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from hoodie_datasource.storage.local import LocalStorage, local_path
from hoodie_datasource.storage.options import StorageOptions, resolve_storage_options
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.storage.uri import parse_table_uri


def open_storage(uri: str, options: Mapping[str, str] | StorageOptions | None = None) -> Storage:
    """The storage of the table at ``uri``. ``options`` are the table's options (``hoodie.storage.*``
    and ``spark.hadoop.fs.*`` keys are read from them) or already resolved ``StorageOptions``."""
    table = parse_table_uri(uri)
    if table.backend == "local":
        return _local(local_path(uri))
    if not isinstance(options, StorageOptions):
        options = resolve_storage_options(table, options)
    if table.backend == "hdfs":
        from hoodie_datasource.storage.arrow_fs import open_hdfs_storage  # libhdfs only when needed

        return open_hdfs_storage(table.uri, options)
    from hoodie_datasource.storage.object_store import open_object_storage  # obstore only when needed

    return open_object_storage(table.uri, options)


@functools.lru_cache(maxsize=64)
def _local(path: str) -> Storage:
    return LocalStorage(path)
