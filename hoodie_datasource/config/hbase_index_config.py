"""The HBase index's options (``hoodie.index.hbase.*``, Apache Hudi's ``HoodieHBaseIndexConfig``), resolved once.

Java Hudi reaches HBase through its ZooKeeper quorum (``zkquorum``, ``zkport``, ``zknode_path``); this library,
in Python, through the cluster's Thrift gateway (``thrift_host``, ``thrift_port``), which talks to the same
region servers. Errors name both."""

from __future__ import annotations

import math
from dataclasses import dataclass

from hoodie_datasource.errors import HoodieConfigError

THRIFT_DEFAULT_PORT = 9090  # HBase's ThriftServer default (hbase.regionserver.thrift.port)


@dataclass(frozen=True)
class HBaseIndexConfig:
    zkquorum: str
    zkport: int
    table: str
    thrift_host: str
    thrift_port: int
    zknode_path: str | None = None
    get_batch_size: int = 100
    put_batch_size: int = 100
    put_batch_size_autocompute: bool = False
    qps_fraction: float = 0.5
    max_qps_per_region_server: int = 1000
    rollback_sync: bool = False
    timeout_ms: int = 15_000

    @property
    def where(self) -> str:
        """The cluster, as errors name it: the quorum Java Hudi connects to and the gateway this library uses."""
        return (f"HBase quorum {self.zkquorum}:{self.zkport} (table {self.table!r}, Thrift gateway "
                f"{self.thrift_host}:{self.thrift_port})")

    def put_rate(self, region_servers: int, tasks: int) -> int:
        """Mutations a second (and in one batch) each putting task may send: ``put.batch.size``, or with
        ``put.batch.size.autocompute`` Hudi's ``HBasePutBatchSizeCalculator.getBatchSize``: this job's share
        (``qps.fraction``) of the region servers' QPS, split among the tasks putting at once."""
        if not self.put_batch_size_autocompute:
            return self.put_batch_size
        max_per_second = int(self.qps_fraction * region_servers * self.max_qps_per_region_server)
        return max(1, math.ceil(max_per_second // max(1, tasks)))


def thrift_address(given: str | None, zkquorum: str) -> tuple[str, int]:
    """``host:port`` of ``hoodie.index.hbase.thrift.address``, or the quorum's first host on the gateway's
    default port."""
    if not given:
        return zkquorum.split(",")[0].split(":")[0].strip(), THRIFT_DEFAULT_PORT
    host, _, port = given.rpartition(":")
    if not host or not port.isdigit():
        raise HoodieConfigError(f"hoodie.index.hbase.thrift.address must be host:port, not {given!r}")
    return host, int(port)
