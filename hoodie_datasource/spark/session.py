"""``hoodie_datasource.session(builder)``: a SparkSession with hoodie's SQL (the jvm-shim) and ``register``.

The shim's extension and catalog are static settings, so they must be on the builder before the
session starts; this adds them, and optionally a persistent Hive metastore (embedded Derby).
"""

from __future__ import annotations

import os

from pyspark.sql import SparkSession

from hoodie_datasource.spark.register import register
from hoodie_datasource.spark.shim import CATALOG_CLASS, EXTENSIONS_CLASS, jar_path


def _append(builder: SparkSession.Builder, key: str, value: str) -> None:
    """Add ``value`` to a comma separated builder setting, keeping what the user already set."""
    current = builder._options.get(key, "")
    parts = [p for p in current.split(",") if p]
    if value not in parts:
        builder.config(key, ",".join([*parts, value]))


def session(builder: SparkSession.Builder | None = None, metastore: str | None = None,
            warehouse: str | None = None) -> SparkSession:
    """Start (or get) a SparkSession with SQL support for hoodie tables, then ``register`` it.

    ``metastore``: a directory for a Hive metastore in embedded Derby, so tables persist across sessions
    (the default is Spark's in-memory catalog). ``warehouse``: where managed tables (no LOCATION) go.
    """
    builder = builder or SparkSession.builder
    _append(builder, "spark.jars", str(jar_path()))
    _append(builder, "spark.sql.extensions", EXTENSIONS_CLASS)
    builder.config("spark.sql.catalog.spark_catalog", CATALOG_CLASS)
    # the shim's scans take pushed filters; format("hoodie") readers do not, so this changes nothing there
    builder.config("spark.sql.python.filterPushdown.enabled", "true")
    if warehouse:
        builder.config("spark.sql.warehouse.dir", os.path.abspath(warehouse))
    if metastore:
        url = f"jdbc:derby:;databaseName={os.path.abspath(metastore)};create=true"
        builder.config("spark.hadoop.javax.jdo.option.ConnectionURL", url)
        builder.config("spark.sql.catalogImplementation", "hive")
    spark = builder.getOrCreate()
    register(spark)
    return spark
