"""Clustering both ways with Apache Hudi itself (0.15.0 and 1.1.1 on Spark 3.5), COW and MOR, the metadata table on:

* Hudi reads our clustered table exactly (snapshot, read-optimized, time travel before the clustering,
  incremental pulls over it: no row at the clustering instant), its metadata table's listing too;
* Hudi clusters a table we wrote (``CALL run_clustering``) and we read the result as Hudi does;
* Hudi schedules a plan (``op => 'schedule'``), we execute it, and Hudi reads the result."""

from __future__ import annotations

import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.table_reader import read_table
from tests.hudi_oracle import assert_same_table
from tests.hudi_oracle.test_hudi_reads_our_services import TABLE_TYPES, assert_hudi_reads_as_we_do, options
from tests.hudi_oracle.test_hudi_reads_ours import rows

pytestmark = pytest.mark.hudi_oracle

SMALL = {"hoodie.parquet.small.file.limit": "0"}  # each write its own file group: small files to cluster
MDT_READ = {"hoodie.metadata.enable": "true"}


def _small_writes(path: str, opts: dict) -> list[str]:
    instants = [write_local(path, rows([f"k{i}{c}" for c in "abc"], [i] * 3, ["sf", "nyc", "sf"],
                                       [i + 0.5, i + 1.5, i + 2.5]), opts) for i in range(3)]
    instants.append(write_local(path, rows(["k0a"], [9], ["sf"], [99.0]), opts))  # an update (MOR: a log)
    return instants


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_hudi_reads_our_clustered_table(hudi, tmp_path, table_type):
    path = str(tmp_path / "trips")
    opts = options(table_type, **SMALL)
    written = _small_writes(path, opts)
    done = HoodieTable(path).cluster(**{"hoodie.clustering.plan.strategy.sort.columns": "fare,id",
                                        "hoodie.layout.optimize.strategy": "z-order"})
    assert len(done) == 1
    after = write_local(path, rows(["k1b"], [10], ["nyc"], [7.0]), opts)
    java = assert_hudi_reads_as_we_do(hudi, path, table_type, [written[-1], done[0]],
                                      [(written[-1], done[0]), (written[-1], None), (done[0], after)])
    assert len(java) == 9
    assert_same_table(hudi.read(path, MDT_READ), read_table(path))
    assert HoodieTable(path).validate_metadata() == []


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_we_read_hudis_clustering_of_our_table_and_run_hudis_plan(hudi, tmp_path, table_type):
    path = str(tmp_path / "trips")
    opts = options(table_type, **SMALL)
    _small_writes(path, opts)
    before = read_table(path).sort_by("_hoodie_record_key")
    hudi.sql(f"CALL run_clustering(path => '{path}', op => 'schedule', order => 'fare')")
    pending = HoodieTable(path).pending_clustering()
    assert len(pending) == 1 and pending[0].state == "REQUESTED"
    ours = HoodieTable(path).run_clustering(pending[0].instant_time)  # Java's plan, run by us
    assert HoodieTable(path).commit_metadata(ours)["operationType"] == "CLUSTER"
    assert_same_table(hudi.read(path), read_table(path))
    assert read_table(path).sort_by("_hoodie_record_key").drop_columns(["_hoodie_file_name"]).equals(
        before.drop_columns(["_hoodie_file_name"]))
    # a write, then Hudi clusters again: we read what Hudi's clustering wrote
    write_local(path, rows(["new"], [20], ["nyc"], [5.0]), opts)
    hudi.sql(f"CALL run_clustering(path => '{path}', options => 'hoodie.parquet.small.file.limit=0')")
    java_done = [i for i in HoodieTable(path).completed_commits() if i > ours]
    meta = HoodieTable(path).commit_metadata(java_done[-1])
    assert meta["operationType"] == "CLUSTER" and meta["partitionToReplaceFileIds"]
    assert_same_table(hudi.read(path), read_table(path))
    assert_same_table(hudi.read(path, {"hoodie.datasource.query.type": "incremental",
                                       "hoodie.datasource.read.begin.instanttime": ours}),
                      read_table(path, ReadConfig(query_type="incremental", begin_instant=ours)))
    write_local(path, rows(["k2c"], [30], ["sf"], [1.0]), opts)  # and we write on
    assert_same_table(hudi.read(path), read_table(path))
