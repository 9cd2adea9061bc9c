"""The SQL tests' session: the jvm-shim's extension and catalog are static settings of a SparkSession,
and one process has one SparkSession at a time. ``make test`` runs them in a process of their own;
started any other way (``pytest`` from the root, ``pytest tests/spark tests/sql``), the root conftest
orders them after every other test and ``sql`` stops the classic session before starting its own."""

from __future__ import annotations

import itertools
import logging
from pathlib import Path

import pytest

from tests.conftest import local_builder

SHIM_EXTENSIONS = "org.apache.spark.sql.hoodie.HoodieSparkExtensions"
_names = itertools.count()
logger = logging.getLogger(__name__)


@pytest.fixture(scope="session")
def sql(tmp_path_factory):
    """A session with the shim and a Hive metastore in embedded Derby."""
    from pyspark.sql import SparkSession

    work = tmp_path_factory.mktemp("sql")
    active = SparkSession.getActiveSession()
    if active is not None and SHIM_EXTENSIONS not in active.conf.get("spark.sql.extensions", ""):
        logger.info("stopping the classic SparkSession: the SQL tests need the jvm-shim's static settings")
        jvm = active.sparkContext._jvm
        active.stop()
        jvm.java.lang.System.setProperty("derby.system.home", str(work))  # the JVM already runs
    import hoodie_datasource

    builder = local_builder("hoodie-sql-tests", java_options=f"-Dderby.system.home={work}")
    session = hoodie_datasource.session(builder, metastore=str(work / "metastore"), warehouse=str(work / "warehouse"))
    yield session
    session.stop()


@pytest.fixture(scope="session")
def spark(sql):
    """Inside tests/sql the one session is the shim's: a SQL test asking for ``spark`` gets it."""
    return sql


@pytest.fixture
def name(sql) -> str:
    """A fresh table name; the table is dropped after the test."""
    table = f"t{next(_names)}"
    yield table
    for suffix in ("", "_copy", "_src"):
        sql.sql(f"DROP TABLE IF EXISTS {table}{suffix}")


@pytest.fixture
def location(tmp_path: Path) -> str:
    return str(tmp_path / "table")


@pytest.fixture
def spark_free_write():
    """Write the trips rows with the core engine (no Spark), as another writer would."""
    import pyarrow as pa

    from hoodie_datasource.client.local_engine import write_local

    def write(path: str) -> None:
        rows = pa.table({"uuid": ["a", "b", "c"], "ts": [1, 1, 1], "fare": [10.0, 20.0, 30.0],
                         "city": ["sf", "sf", "nyc"]})
        write_local(path, rows, {"table.name": "trips", "recordkey.field": "uuid", "precombine.field": "ts",
                                 "partitionpath.field": "city", "hive_style_partitioning": "true"})

    return write
