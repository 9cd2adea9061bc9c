"""The Spark session's Hadoop object-store keys, carried into a hoodie read's or write's options.

Why: a job that already reads s3a:// or abfs:// with Spark sets its endpoint and credentials as
``spark.hadoop.fs.s3a.*`` / ``spark.hadoop.fs.azure.*`` session settings. The Python data source runs
in a worker that has no SparkSession, so ``storage.options.resolve_storage_options`` only sees those
keys when they travel in the options; the entry points that hold the session (the save handler,
the ``DataFrameReader.load`` check) copy them in, a key the user gave as an option winning.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import SparkSession

HADOOP_STORAGE_PREFIXES = ("spark.hadoop.fs.s3a.", "spark.hadoop.fs.azure.")


def session_storage_keys(spark: SparkSession, options: Mapping[str, str]) -> dict[str, str]:
    """The session's Hadoop object-store keys that ``options`` (keys in any case) do not set already.

    ``spark.conf.getAll`` answers on classic Spark and on Spark Connect alike (PySpark 4)."""
    given = {key.lower() for key in options}
    return {key: value for key, value in spark.conf.getAll.items()
            if key.lower().startswith(HADOOP_STORAGE_PREFIXES) and key.lower() not in given and value is not None}
