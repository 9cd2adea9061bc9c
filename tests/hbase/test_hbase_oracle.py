"""``hoodie.index.type=HBASE`` between Apache Hudi 0.15 (its bundle's ``SparkHoodieHBaseIndex``, reaching HBase
through ZooKeeper) and us (through the Thrift gateway), on one HBase table, both ways, on copy-on-write tables
(the Spark tests run merge-on-read ones too):

* we write a table tagging through HBase; Java upserts the same keys and new ones through the entries we put (its
  updates land in our file groups, no key stored twice); we upsert again through Java's;
* Java writes a table with its HBase index; we upsert it through Java's entries, and Java reads what we wrote;
* Java's merge-on-read inserts under the HBase index go to file groups of log files only: we read them, upsert
  them through Java's entries (an update lands in Java's log-only group) and compact them, and Java reads it all.

After each write HBase holds exactly the table's keys, at their file groups and partitions. Java's bundle relocates
the HBase client, which names its cell codec by the relocated class name: the test server has an alias of that name
(``tests/hbase/codec_alias``), as a cluster serving Hudi's bundle needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.read.table_reader import read_table
from tests.hbase.test_hbase_index import hbase_entries
from tests.hudi_oracle import HUDI_0_15, HudiOracle, assert_same_table
from tests.hudi_oracle.test_hudi_reads_ours import our_options, rows
from tests.metadata_checks import table_keys

pytestmark = [pytest.mark.hbase, pytest.mark.hudi_oracle]


@pytest.fixture(scope="module")
def hudi(tmp_path_factory):
    oracle = HudiOracle(HUDI_0_15, tmp_path_factory.mktemp("hudi-oracle-hbase"))
    yield oracle
    oracle.close()


def _options(hbase, table: str, table_type: str) -> dict[str, str]:
    return {**our_options(table_type, True), **hbase.index_options(table), "hoodie.metadata.enable": "false",
            "hoodie.compact.inline": "false", "hoodie.datasource.write.operation": "upsert"}


def _java(opts: dict[str, str]) -> dict[str, str]:
    """Java Hudi's options: ours without the gateway's address, which only this library reads."""
    return {k: v for k, v in opts.items() if k != "hoodie.index.hbase.thrift.address"}


def unique_keys(hudi: HudiOracle, path: str) -> list[str]:
    keys = hudi.read(path).column("_hoodie_record_key").to_pylist()
    assert len(keys) == len(set(keys)), f"a key stored twice: {sorted(keys)}"
    return sorted(keys)


def assert_hbase_holds(hbase, table: str, path: str) -> None:
    assert {k: e[:2] for k, e in hbase_entries(hbase, table).items()} == table_keys(path)


def test_java_upserts_through_our_hbase_entries_and_we_through_javas(hudi, hbase, tmp_path,
                                                                      table_type="COPY_ON_WRITE"):
    path, table = str(tmp_path / "trips"), hbase.create_table(f"ours_first_{table_type.lower()}")
    opts = _options(hbase, table, table_type)
    write_local(path, rows([f"k{i}" for i in range(9)], [1] * 9, ["sf", "nyc", "la"] * 3, [1.0] * 9), opts)
    write_local(path, rows(["k1", "n1"], [2] * 2, ["nyc", "la"], [2.0] * 2), opts)
    assert_hbase_holds(hbase, table, path)
    before = table_keys(path)
    hudi.write(path, rows(["k0", "k4", "n1", "j1"], [5] * 4, ["sf", "nyc", "la", "la"], [5.0] * 4), _java(opts))
    after = table_keys(path)
    assert {k: after[k] for k in ("k0", "k4", "n1")} == {k: before[k] for k in ("k0", "k4", "n1")}, \
        "Java's updates went to the file groups our HBase entries name"
    assert unique_keys(hudi, path) == sorted({*before, "j1"})
    assert_hbase_holds(hbase, table, path)
    write_local(path, rows(["j1", "k6", "m1"], [6] * 3, ["la", "sf", "nyc"], [6.0] * 3), opts)
    final = table_keys(path)
    assert final["j1"] == after["j1"] and final["k6"] == after["k6"]
    assert unique_keys(hudi, path) == sorted({*before, "j1", "m1"})
    assert_same_table(hudi.read(path), read_table(path))
    assert_hbase_holds(hbase, table, path)


def test_we_upsert_through_javas_hbase_entries(hudi, hbase, tmp_path, table_type="COPY_ON_WRITE"):
    path, table = str(tmp_path / "trips"), hbase.create_table(f"java_first_{table_type.lower()}")
    opts = _options(hbase, table, table_type)
    hudi.write(path, rows([f"k{i}" for i in range(9)], [1] * 9, ["sf", "nyc", "la"] * 3, [1.0] * 9), _java(opts))
    hudi.write(path, rows(["k2", "n1"], [2] * 2, ["la", "la"], [2.0] * 2), _java(opts))
    assert_hbase_holds(hbase, table, path)
    before = table_keys(path)
    write_local(path, rows(["k0", "k4", "n1", "m1"], [5] * 4, ["sf", "nyc", "la", "sf"], [5.0] * 4), opts)
    after = table_keys(path)
    assert {k: after[k] for k in ("k0", "k4", "n1")} == {k: before[k] for k in ("k0", "k4", "n1")}, \
        "our updates went to the file groups Java's HBase entries name"
    assert unique_keys(hudi, path) == sorted({*before, "m1"})
    assert_same_table(hudi.read(path), read_table(path))
    assert_hbase_holds(hbase, table, path)


def test_we_upsert_and_compact_javas_log_only_file_groups(hudi, hbase, tmp_path):
    path, table = str(tmp_path / "trips"), hbase.create_table("java_mor")
    opts = _options(hbase, table, "MERGE_ON_READ")
    hudi.write(path, rows(["k0", "k1"], [1, 1], ["sf", "nyc"], [1.0, 1.0]), _java(opts))
    assert not list(Path(path).glob("*/*.parquet")), "Java's inserts under HBase went to log files only"
    assert set(hbase_entries(hbase, table)) == {"k0", "k1"}
    before = table_keys(path)
    assert_same_table(hudi.read(path), read_table(path))
    # k0 is updated in Java's log-only group (found through Java's entry), n1 is new
    write_local(path, rows(["k0", "n1"], [2, 2], ["sf", "la"], [2.0, 2.0]), opts)
    after = table_keys(path)
    assert after["k0"] == before["k0"] and after["k1"] == before["k1"]
    assert unique_keys(hudi, path) == ["k0", "k1", "n1"]
    assert sorted(zip(*(read_table(path).column(c).to_pylist() for c in ("id", "ts")))) == [
        ("k0", 2), ("k1", 1), ("n1", 2)]
    assert_same_table(hudi.read(path), read_table(path))
    assert_hbase_holds(hbase, table, path)
    # our compaction gives Java's groups base files written from their logs alone; Java reads them
    assert HoodieTable(path).compact()
    assert {p.parent.name for p in Path(path).glob("*/*.parquet")} == {"sf", "nyc", "la"}
    assert table_keys(path) == after
    assert_same_table(hudi.read(path), read_table(path))
    assert_same_table(hudi.read(path, {"hoodie.datasource.query.type": "read_optimized"}), read_table(path))
