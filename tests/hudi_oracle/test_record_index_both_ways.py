"""``hoodie.index.type=RECORD_INDEX`` between Apache Hudi (0.15 and 1.1.1) and us, both ways, a key moving
partition on each side (``hoodie.record.index.update.partition.path=true``):

* we write a table tagging through our record index; Java upserts it through the same record index (its updates
  land in the file groups we wrote, no key stored twice); we upsert again through the index Java kept;
* Java writes a table with its record index; we upsert it tagging through Java's record index (our updates land in
  Java's file groups, no key twice), and Java reads what we wrote.

After each write the record index holds exactly the table's keys, where they live."""

from __future__ import annotations

import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.index.record_index import RecordIndex
from hoodie_datasource.read.key_lookup import KeyLookup
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.table.table import Table
from tests.hudi_oracle import HudiOracle, assert_same_table
from tests.hudi_oracle.test_hudi_reads_our_metadata import RECORD_INDEX, java_options, options
from tests.hudi_oracle.test_hudi_reads_ours import rows
from tests.metadata_checks import assert_record_index_true, table_keys

pytestmark = pytest.mark.hudi_oracle

TAGGING = {**RECORD_INDEX, "hoodie.index.type": "RECORD_INDEX", "hoodie.record.index.update.partition.path": "true"}


def ours(table_type: str) -> dict:
    return {**options(table_type, True), **TAGGING}


def java(hudi: HudiOracle, table_type: str) -> dict:
    return {**java_options(hudi, table_type, True), **TAGGING}


def upsert(opts: dict) -> dict:
    return {**opts, "hoodie.datasource.write.operation": "upsert"}


def unique_keys(hudi: HudiOracle, path: str) -> list[str]:
    keys = hudi.read(path, {"hoodie.metadata.enable": "true"}).column("_hoodie_record_key").to_pylist()
    assert len(keys) == len(set(keys)), f"a key stored twice: {sorted(keys)}"
    return sorted(keys)


def assert_tags_through_the_record_index(path: str, table_type: str) -> None:
    assert isinstance(KeyLookup.of(Table.load(path), ours(table_type)).index, RecordIndex)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_java_upserts_our_record_index_table_and_we_upsert_on(hudi, tmp_path, table_type):
    path = str(tmp_path / "trips")
    opts = ours(table_type)
    write_local(path, rows([f"k{i}" for i in range(9)], [1] * 9, ["sf", "nyc", "la"] * 3, [1.0] * 9), opts)
    write_local(path, rows(["k1", "k2", "n1"], [2] * 3, ["nyc", "sf", "la"], [2.0] * 3), opts)  # k2 moves to sf
    write_local(path, rows(["k3"], [3], ["sf"], [0.0]), {**opts, "hoodie.datasource.write.operation": "delete"})
    assert_tags_through_the_record_index(path, table_type)
    assert_record_index_true(path)
    before = table_keys(path)
    hudi.write(path, rows(["k0", "k4", "n1", "k5", "j1"], [5] * 5, ["sf", "nyc", "la", "sf", "la"], [5.0] * 5),
               upsert(java(hudi, table_type)))
    after = table_keys(path)
    assert {k: after[k] for k in ("k0", "k4", "n1")} == {k: before[k] for k in ("k0", "k4", "n1")}, \
        "Java's updates went to the file groups our record index names"
    assert after["k5"][0] == "sf", "k5 moved from la to sf"
    assert unique_keys(hudi, path) == sorted({*before, "j1"})
    assert_record_index_true(path)
    write_local(path, rows(["j1", "k5", "k6", "m1"], [6] * 4, ["la", "nyc", "sf", "nyc"], [6.0] * 4), opts)
    final = table_keys(path)
    assert final["j1"] == after["j1"] and final["k6"] == after["k6"] and final["k5"][0] == "nyc"
    assert unique_keys(hudi, path) == sorted({*before, "j1", "m1"})
    assert_same_table(hudi.read(path, {"hoodie.metadata.enable": "true"}), read_table(path))
    assert_record_index_true(path)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_we_upsert_javas_record_index_table(hudi, tmp_path, table_type):
    path = str(tmp_path / "trips")
    java_opts = java(hudi, table_type)
    hudi.write(path, rows([f"k{i}" for i in range(9)], [1] * 9, ["sf", "nyc", "la"] * 3, [1.0] * 9),
               {**java_opts, "hoodie.datasource.write.operation": "insert"})
    hudi.write(path, rows(["k1", "k2"], [2, 2], ["nyc", "sf"], [2.0, 2.0]), upsert(java_opts))
    assert_tags_through_the_record_index(path, table_type)
    assert_record_index_true(path)
    before = table_keys(path)
    write_local(path, rows(["k0", "k4", "k5", "n1"], [3] * 4, ["sf", "nyc", "sf", "la"], [3.0] * 4), ours(table_type))
    after = table_keys(path)
    assert {k: after[k] for k in ("k0", "k4")} == {k: before[k] for k in ("k0", "k4")}, \
        "our updates went to the file groups Java's record index names"
    assert after["k5"][0] == "sf" and after["n1"][0] == "la"
    assert unique_keys(hudi, path) == sorted({*before, "n1"})
    assert_record_index_true(path)
    hudi.write(path, rows(["n1", "k6"], [4, 4], ["la", "sf"], [4.0, 4.0]), upsert(java_opts))
    assert table_keys(path)["n1"] == after["n1"] and table_keys(path)["k6"][0] == "sf"
    assert unique_keys(hudi, path) == sorted({*before, "n1"})
    assert_same_table(hudi.read(path, {"hoodie.metadata.enable": "true"}), read_table(path))
