"""Clustering both ways with Apache Hudi itself (0.15.0 and 1.1.1 on Spark 3.5), COW and MOR, the metadata table on:

* Hudi reads our clustered table exactly (snapshot, read-optimized, time travel before the clustering,
  incremental pulls over it: no row at the clustering instant), its metadata table's listing too;
* Hudi clusters a table we wrote (``CALL run_clustering``) and we read the result as Hudi does;
* Hudi schedules a plan (``op => 'schedule'``), we execute it, and Hudi reads the result; Hudi executes ours;
* Hudi loads our archive log holding an archived clustering, and lists our pending plan (``show_clustering``)."""

from __future__ import annotations

import shutil

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


def test_hudi_reads_our_archived_clustering_and_shows_our_plans(hudi, tmp_path):
    """Our archive log holds a clustering's plan (``hoodieRequestedReplaceMetadata``) as Hudi's archiver keeps it:
    Hudi loads that archive (``show_archived_commits``), and ``show_clustering`` lists our pending plan."""
    path = tmp_path / "trips"
    opts = options("COPY_ON_WRITE", **SMALL, **{"hoodie.metadata.compact.max.delta.commits": "1"})
    _small_writes(str(path), opts)
    archived = HoodieTable(str(path)).cluster(**opts)[0]
    for i in range(3):
        write_local(str(path), rows([f"n{i}"], [20 + i], ["la"], [1.0]), opts)
    HoodieTable(str(path)).clean(**{**opts, "hoodie.cleaner.commits.retained": "1"})  # the replaced groups go first
    HoodieTable(str(path)).archive(**{**opts, "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"})
    assert archived in HoodieTable(str(path)).timeline().archived
    pending = HoodieTable(str(path)).schedule_clustering(**opts)
    name = f"clustered_{hudi.version.replace('.', '_')}"
    copy = hudi.workdir / "procedure-tables" / name
    shutil.copytree(path, copy)  # Hudi 0.15's CREATE TABLE rewrites hoodie.properties
    hudi.sql(f"CREATE TABLE {name} USING hudi LOCATION '{copy}'")
    shown = hudi.sql(f"CALL show_archived_commits(table => '{name}', limit => 100, start_ts => '000', "
                     "end_ts => '99999999999999999')", result=True).to_pylist()
    timeline = HoodieTable(str(path)).timeline()
    archived_writes = sorted(t for t in timeline.archived if timeline.find(t).action in ("commit", "replacecommit"))
    assert sorted(c["commit_time"] for c in shown) == archived_writes and archived in archived_writes
    plans = hudi.sql(f"CALL show_clustering(table => '{name}')", result=True).to_pylist()
    assert [(p["timestamp"], p["input_group_size"]) for p in plans] == [(pending, 3)]


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_hudi_runs_our_plan(hudi, tmp_path, table_type):
    """Our ``HoodieRequestedReplaceMetadata``, its slices named by full path as Hudi's are, executed by Hudi
    (``op => 'execute'``): the records it rewrote read as before, by Hudi and by us."""
    path = str(tmp_path / "trips")
    opts = options(table_type, **SMALL)
    _small_writes(path, opts)
    before = read_table(path).sort_by("_hoodie_record_key").drop_columns(["_hoodie_file_name"])
    ours = HoodieTable(path).schedule_clustering(**{"hoodie.clustering.plan.strategy.sort.columns": "fare"})
    hudi.sql(f"CALL run_clustering(path => '{path}', op => 'execute')")
    assert ours in HoodieTable(path).completed_commits() and HoodieTable(path).pending_clustering() == []
    assert HoodieTable(path).commit_metadata(ours)["operationType"] == "CLUSTER"
    assert_same_table(hudi.read(path), read_table(path))
    assert read_table(path).sort_by("_hoodie_record_key").drop_columns(["_hoodie_file_name"]).equals(before)
