"""The cluster tests' fixtures: the standalone cluster (tests/spark_cluster.py), one per process."""

from tests.spark_cluster import spark_cluster  # noqa: F401
