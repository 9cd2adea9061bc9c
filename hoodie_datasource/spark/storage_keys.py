"""The Spark session's Hadoop object-store keys, carried into a hoodie read's or write's options.

Why: a job that already reads s3a:// or abfs:// with Spark sets its endpoint and credentials as
``spark.hadoop.fs.s3a.*`` / ``spark.hadoop.fs.azure.*`` session settings. The Python data source runs
in a worker that has no SparkSession, so ``storage.options.resolve_storage_options`` only sees those
keys when they travel in the options; the entry points that hold the session (the save handler,
the ``DataFrameReader.load`` check) copy them in, a key the user gave as an option winning. The same
holds for the driver's ``AWS_*`` / ``AZURE_STORAGE_*`` environment variables: the workers inherit the
environment the JVM started with, so credentials exported later in the driver travel as options too.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import SparkSession

from hoodie_datasource.storage.options import environment_options

HADOOP_STORAGE_PREFIXES = ("spark.hadoop.fs.s3a.", "spark.hadoop.fs.azure.")


def session_storage_keys(spark: SparkSession, options: Mapping[str, str]) -> dict[str, str]:
    """The session's Hadoop object-store keys and the driver's storage environment variables
    (``environment_options``) that ``options`` (keys in any case) do not set already."""
    given = {key.lower() for key in options}
    found = {key: value for key, value in _hadoop_storage_settings(spark).items() if value is not None}
    found.update(environment_options())
    return {key: value for key, value in found.items() if key.lower() not in given}


def _hadoop_storage_settings(spark: SparkSession) -> dict[str, str | None]:
    """The session's settings named with ``HADOOP_STORAGE_PREFIXES``. Spark Connect answers ``spark.conf.getAll``
    in one request; on classic Spark it takes two calls into the JVM a setting (137 for a local session, 25 ms
    of every write on a busy machine), so there the names come in one call, joined by NUL, and only the values
    of the named ones are asked for."""
    settings = getattr(spark.conf, "_jconf", None)
    if settings is None:  # Spark Connect
        return {k: v for k, v in spark.conf.getAll.items() if k.lower().startswith(HADOOP_STORAGE_PREFIXES)}
    every = settings.getAllAsJava()
    names = spark._jvm.java.lang.String.join("\x00", every.keySet())
    return {k: every.get(k) for k in names.split("\x00") if k.lower().startswith(HADOOP_STORAGE_PREFIXES)}
