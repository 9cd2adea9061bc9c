"""The HBase index's tests share one HBase (tests/hbase_server.py), started once per process."""

from tests.hbase_server import hbase  # noqa: F401
