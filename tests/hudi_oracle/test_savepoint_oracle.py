"""Savepoints and restores between us and Apache Hudi itself (0.15.0 and 1.1.1 on Spark 3.5), COW and MOR, the
metadata table on:

* our savepoint, after our cleaner ran past it: Java's ``show_savepoints`` lists it (Java refuses time travel
  to it, as to any instant before the last clean's earliest retained commit; we read it); after our restore to it
  Java reads the savepoint's rows through the metadata table we built again, and its next write goes on from there;
* Java's ``CALL rollback_to_savepoint`` restores the table to our savepoint (MOR);
* we restore to a savepoint Java made (``CALL create_savepoint``), and Java reads the result (MOR).

Hudi-side options: the table's (``test_we_read_hudis.hudi_options``) for Java's writes, ``hoodie.metadata.enable=true``
on its reads (0.15's readers default to off), and on 1.x procedures ``hoodie.write.table.version=6``."""

from __future__ import annotations

import shutil

import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.table_reader import read_table
from tests.hudi_oracle import HudiOracle, HudiOracleError, assert_same_table
from tests.hudi_oracle.test_hudi_reads_ours import our_options, rows
from tests.hudi_oracle.test_we_continue_hudis import key_ts, procedure_conf, register, session_conf
from tests.hudi_oracle.test_we_read_hudis import hudi_options
from tests.metadata_checks import assert_metadata_table_true

pytestmark = pytest.mark.hudi_oracle

TABLE_TYPES = ["COPY_ON_WRITE", "MERGE_ON_READ"]
READ = {"hoodie.metadata.enable": "true"}
COMPACT = {"hoodie.compact.inline.max.delta.commits": "1"}
SERVICES_OFF = {"hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}


def upsert(**extra: str) -> dict:
    return {"hoodie.datasource.write.operation": "upsert", **extra}


def our_savepointed_table(path: str, table_type: str) -> tuple[str, list[tuple]]:
    """Our writes, a savepoint of the last of them, then an upsert, a delete, an overwrite (and on MOR compactions)
    and a clean retaining one commit; the savepoint's time and its (id, ts) rows."""
    opts = {**our_options(table_type, partitioned=True), **SERVICES_OFF}
    write_local(path, rows(["a", "b", "c"], [1, 1, 1], ["sf", "nyc", "sf"], [1.0, 2.0, 3.0]), {**opts, **upsert()})
    if table_type == "MERGE_ON_READ":  # a slice older than the savepoint's, for the clean to remove
        write_local(path, rows(["c"], [1], ["sf"], [3.0]), {**opts, **upsert()})
        assert HoodieTable(path).compact(**COMPACT)
    kept = write_local(path, rows(["a", "d"], [2, 2], ["sf", "nyc"], [1.5, 4.0]), {**opts, **upsert()})
    assert HoodieTable(path).create_savepoint(kept, user="oracle") == kept
    at_savepoint = key_ts(read_table(path))
    write_local(path, rows(["b", "e"], [3, 3], ["nyc", "sf"], [2.5, 5.0]), {**opts, **upsert()})
    if table_type == "MERGE_ON_READ":
        assert HoodieTable(path).compact(**COMPACT)
    write_local(path, rows(["c"], [4], ["sf"], [0.0]), {**opts, "hoodie.datasource.write.operation": "delete"})
    write_local(path, rows(["f"], [5], ["nyc"], [6.0]), {**opts, "hoodie.datasource.write.operation": "insert_overwrite"})
    assert HoodieTable(path).clean(**{"hoodie.cleaner.commits.retained": "1"}) is not None
    assert key_ts(read_table(path)) != at_savepoint
    return kept, at_savepoint


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_hudi_reads_our_savepoint_and_our_restore(hudi: HudiOracle, tmp_path, table_type):
    path = str(tmp_path / "trips")
    kept, at_savepoint = our_savepointed_table(path, table_type)
    # Hudi refuses time travel to before the last clean's earliest retained commit, savepointed or not
    # (TimelineUtils.validateTimestampAsOf); we read the savepoint's files, which every clean keeps
    with pytest.raises(HudiOracleError, match="Cleaner cleaned up the timestamp of interest"):
        hudi.read(path, {**READ, "as.of.instant": kept})
    assert key_ts(read_table(path, ReadConfig(as_of_instant=kept))) == at_savepoint
    copy = str(tmp_path / "copy")  # Hudi 0.15's CREATE TABLE rewrites hoodie.properties
    shutil.copytree(path, copy)
    listed = hudi.sql(f"CALL show_savepoints(table => '{register(hudi, copy, f'sp_{table_type[:3]}_{id(copy)}')}')",
                      result=True)
    assert listed.column("savepoint_time").to_pylist() == [kept]

    HoodieTable(path).rollback_to_savepoint(kept)
    assert_metadata_table_true(path)
    java = hudi.read(path, READ)
    assert key_ts(java) == at_savepoint
    assert_same_table(java, read_table(path))

    hudi.write(path, rows(["a", "g"], [7, 7], ["sf", "nyc"], [7.0, 7.0]), {**hudi_options(hudi, table_type), **upsert()})
    expected = sorted({**dict(at_savepoint), "a": 7, "g": 7}.items())
    assert key_ts(read_table(path)) == expected
    assert key_ts(hudi.read(path, READ)) == expected


# merge-on-read only, the harder case (log files to roll back; a savepoint is made the same way on both types):
# test_we_continue_hudis has Java restore our copy-on-write writes, and the oracle lane is near its budget
@pytest.mark.parametrize("table_type", ["MERGE_ON_READ"])
def test_hudi_restores_to_our_savepoint(hudi: HudiOracle, tmp_path, table_type):
    path = str(tmp_path / "trips")
    kept, at_savepoint = our_savepointed_table(path, table_type)
    table = register(hudi, path, f"restore_ours_{table_type[:3]}_{hudi.version.replace('.', '_')}")
    # Hudi 1.1.1 writes column statistics to the metadata table it restores unless told its writers' default
    # (on) is off here: we keep Hudi 0.15's (off) (test_we_continue_hudis.RESTORE_WRITES_TO_A_DROPPED_PARTITION)
    with session_conf(hudi, {**procedure_conf(hudi), "hoodie.metadata.index.column.stats.enable": "false"}):
        hudi.sql(f"CALL rollback_to_savepoint(table => '{table}', instant_time => '{kept}')")
    java = hudi.read(path, READ)
    assert key_ts(java) == at_savepoint
    assert_same_table(java, read_table(path))


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ"])  # as above
def test_we_restore_to_a_savepoint_hudi_made(hudi: HudiOracle, tmp_path, table_type):
    path = str(tmp_path / "trips")
    java_options = hudi_options(hudi, table_type)
    hudi.write(path, rows(["a", "b", "c"], [1, 1, 1], ["sf", "nyc", "sf"], [1.0, 2.0, 3.0]),
               {**java_options, "hoodie.datasource.write.operation": "insert"}, mode="overwrite")
    hudi.write(path, rows(["a", "d"], [2, 2], ["sf", "nyc"], [1.5, 4.0]), {**java_options, **upsert()})
    kept = HoodieTable(path).latest_commit()
    table = register(hudi, path, f"restore_java_{table_type[:3]}_{hudi.version.replace('.', '_')}")
    with session_conf(hudi, procedure_conf(hudi)):
        hudi.sql(f"CALL create_savepoint(table => '{table}', commit_time => '{kept}')")
    at_savepoint = key_ts(hudi.read(path, READ))
    hudi.write(path, rows(["b", "e"], [3, 3], ["nyc", "sf"], [2.5, 5.0]), {**java_options, **upsert()})
    write_local(path, rows(["c"], [4], ["sf"], [0.0]),
                {**our_options(table_type, partitioned=True), "hoodie.datasource.write.operation": "delete"})
    assert [s.instant_time for s in HoodieTable(path).show_savepoints()] == [kept]

    HoodieTable(path).rollback_to_savepoint(kept)
    assert key_ts(read_table(path)) == at_savepoint
    assert_metadata_table_true(path)
    java = hudi.read(path, READ)
    assert key_ts(java) == at_savepoint
    assert_same_table(java, read_table(path))
