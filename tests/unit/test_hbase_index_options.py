"""The HBase index's options (``hoodie.index.hbase.*``, Hudi's ``HoodieHBaseIndexConfig``): Hudi's names and
defaults, the required ones named when missing, the put rate Hudi's ``HBasePutBatchSizeCalculator`` computes, and
the rate limiter pacing the requests. No HBase here: tests/hbase runs the index on a real one."""

from __future__ import annotations

import time

import pytest

from hoodie_datasource.config.index_type import IndexType
from hoodie_datasource.config.write_config import resolve_write_config
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.index.hbase_index import HBaseIndex
from hoodie_datasource.index.rate_limiter import RateLimiter
from hoodie_datasource.index.registry import index_for

BASE = {"table.name": "t", "recordkey.field": "id", "hoodie.index.type": "HBASE"}
CLUSTER = {"hoodie.index.hbase.zkquorum": "zk1,zk2", "hoodie.index.hbase.zkport": "2181",
           "hoodie.index.hbase.table": "hudi_index"}


def test_hudis_names_and_defaults():
    index = resolve_write_config({**BASE, **CLUSTER}, None).index
    assert index.index_type is IndexType.HBASE and isinstance(index_for(index), HBaseIndex)
    hbase = index.hbase
    assert (hbase.zkquorum, hbase.zkport, hbase.table) == ("zk1,zk2", 2181, "hudi_index")
    assert (hbase.thrift_host, hbase.thrift_port) == ("zk1", 9090)  # the quorum's first host, the gateway's port
    assert (hbase.get_batch_size, hbase.put_batch_size, hbase.put_batch_size_autocompute, hbase.qps_fraction,
            hbase.max_qps_per_region_server, hbase.rollback_sync, hbase.timeout_ms) == (
        100, 100, False, 0.5, 1000, False, 15_000)
    assert not index.update_partition_path  # hoodie.hbase.index.update.partition.path: false by default
    moved = resolve_write_config({**BASE, **CLUSTER, "hoodie.hbase.index.update.partition.path": "true",
                                  "hoodie.index.hbase.thrift.address": "gw:9191"}, None).index
    assert moved.update_partition_path and (moved.hbase.thrift_host, moved.hbase.thrift_port) == ("gw", 9191)


@pytest.mark.parametrize("missing", sorted(CLUSTER))
def test_a_missing_cluster_option_is_named(missing):
    with pytest.raises(HoodieConfigError, match=missing.replace(".", r"\.")):
        resolve_write_config({**BASE, **{k: v for k, v in CLUSTER.items() if k != missing}}, None)


@pytest.mark.parametrize("bad", [{"hoodie.index.hbase.get.batch.size": "0"}, {"hoodie.index.hbase.qps.fraction": "2"},
                                 {"hoodie.index.hbase.thrift.address": "no-port"}])
def test_bad_values_are_refused(bad):
    with pytest.raises(HoodieConfigError, match=next(iter(bad)).replace(".", r"\.")):
        resolve_write_config({**BASE, **CLUSTER, **bad}, None)


def test_the_autocomputed_put_rate_is_hudis():
    """``getBatchSize``: this job's share of the region servers' QPS over the tasks putting at once."""
    hbase = resolve_write_config({**BASE, **CLUSTER, "hoodie.index.hbase.put.batch.size.autocompute": "true",
                                  "hoodie.index.hbase.qps.fraction": "0.1",
                                  "hoodie.index.hbase.max.qps.per.region.server": "16667"}, None).index.hbase
    assert hbase.put_rate(region_servers=10, tasks=200) == 83  # int(0.1 * 10 * 16667) // 200
    assert hbase.put_rate(region_servers=1, tasks=1) == 1666
    fixed = resolve_write_config({**BASE, **CLUSTER, "hoodie.index.hbase.put.batch.size": "7"}, None).index.hbase
    assert fixed.put_rate(region_servers=10, tasks=200) == 7


def test_the_rate_limiter_allows_its_permits_a_second():
    limiter = RateLimiter(100)
    started = time.monotonic()
    limiter.acquire(100)  # this second's permits
    assert time.monotonic() - started < 0.5
    limiter.acquire(150)  # the next second's, then half of the one after
    assert 1.9 < time.monotonic() - started < 3.0
