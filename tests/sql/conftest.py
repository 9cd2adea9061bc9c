"""The SQL tests run in their own process (``pytest tests/sql``, as ``make test`` does): the jvm-shim's
extension and catalog are static settings of a SparkSession, and one process has one SparkSession."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tests.conftest import local_builder

SHIM_EXTENSIONS = "org.apache.spark.sql.hoodie.HoodieSparkExtensions"
_names = itertools.count()


@pytest.fixture(scope="session")
def sql(tmp_path_factory):
    """A session with the shim and a Hive metastore in embedded Derby."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and SHIM_EXTENSIONS not in active.conf.get("spark.sql.extensions", ""):
        pytest.skip("the SQL tests need a session of their own: run them with `pytest tests/sql`")
    import hoodie_datasource

    work = tmp_path_factory.mktemp("sql")
    builder = local_builder("hoodie-sql-tests").config(
        "spark.driver.extraJavaOptions", f"-Dderby.system.home={work}")
    session = hoodie_datasource.session(builder, metastore=str(work / "metastore"), warehouse=str(work / "warehouse"))
    yield session
    session.stop()


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

    from hoodie_datasource.write.local_engine import write_local

    def write(path: str) -> None:
        rows = pa.table({"uuid": ["a", "b", "c"], "ts": [1, 1, 1], "fare": [10.0, 20.0, 30.0],
                         "city": ["sf", "sf", "nyc"]})
        write_local(path, rows, {"table.name": "trips", "recordkey.field": "uuid", "precombine.field": "ts",
                                 "partitionpath.field": "city", "hive_style_partitioning": "true"})

    return write
