"""hoodie-datasource: Apache Hudi tables (upserts, incremental pulls) for PySpark, in Python.

    import hoodie_datasource
    hoodie_datasource.register(spark)
    df.write.format("hoodie").option("recordkey.field", "uuid").mode("upsert").save(path)
    spark.read.format("hoodie").load(path)
    hoodie_datasource.HoodieReadClient(spark, path).read_keys(keys_df)   # records by key, through the index
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hoodie_datasource.dependencies import check_dependencies

check_dependencies()

from hoodie_datasource.errors import (  # noqa: E402
    CommitConflictError,
    ConditionalCreateUnsupportedError,
    CorruptFileError,
    HoodieConfigError,
    HoodieError,
    HoodieIndexError,
    HoodieWriteConflictError,
    InvalidRecordError,
    InvalidTablePathError,
    LockError,
    LockTimeoutError,
    PythonEnvironmentError,
    SchemaMismatchError,
    StorageAccessError,
    StorageError,
    StorageNotFoundError,
    StreamingCheckpointError,
    StreamingSinkError,
    TableNotFoundError,
    TimelineError,
    UnsupportedStorageError,
    UnsupportedTableError,
)
from hoodie_datasource.hoodie_table import HoodieTable  # noqa: E402

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from hoodie_datasource.spark.read_client import HoodieReadClient

__version__ = "0.1.0"


def register(spark: SparkSession) -> None:
    """Register ``format("hoodie")`` and the Hudi write modes on a SparkSession (classic or Connect)."""
    from hoodie_datasource.spark.register import register as _register

    _register(spark)


def session(builder: SparkSession.Builder | None = None, metastore: str | None = None,
            warehouse: str | None = None) -> SparkSession:
    """A SparkSession with hoodie's SQL: ``CREATE TABLE ... USING hoodie``, ``t_rt`` / ``t_ro``, UPDATE,
    DELETE, MERGE INTO, ``TIMESTAMP AS OF`` and ``hoodie_table_changes`` (see ``spark.session``)."""
    from hoodie_datasource.spark.session import session as _session

    return _session(builder, metastore, warehouse)


def __getattr__(name: str):
    """``HoodieReadClient``, imported when first asked for: the package imports no pyspark before Spark is used."""
    if name == "HoodieReadClient":
        from hoodie_datasource.spark.read_client import HoodieReadClient

        return HoodieReadClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CommitConflictError", "ConditionalCreateUnsupportedError", "CorruptFileError", "HoodieConfigError",
    "HoodieError", "HoodieIndexError", "HoodieReadClient", "HoodieTable", "HoodieWriteConflictError", "InvalidRecordError",
    "InvalidTablePathError", "LockError", "LockTimeoutError",
    "PythonEnvironmentError", "SchemaMismatchError", "StorageAccessError", "StorageError", "StorageNotFoundError",
    "StreamingCheckpointError", "StreamingSinkError", "TableNotFoundError", "TimelineError",
    "UnsupportedStorageError", "UnsupportedTableError",
    "register", "session",
]
