"""Spark's static registration hook: any top-level ``pyspark_*`` module with a ``DefaultSource``
is registered at first use, so ``pip install hoodie-datasource`` alone makes ``format("hoodie")``
readable. Call ``hoodie_datasource.register(spark)`` for the write modes."""

from hoodie_datasource.spark.datasource import HoodieDataSource as DefaultSource

__all__ = ["DefaultSource"]
