"""A write or service with ``hoodie.metadata.enable=false`` into a table carrying a metadata table deletes it
first, as Hudi does: the partitions are cleared in ``hoodie.properties`` through its update protocol (backup,
rewrite, verify), then the folder is deleted, with one WARNING naming the table. With the metadata table on
(the default), one that cannot be trusted is deleted and built anew from storage, and a partition whose option
is off is deleted. (The tests against tables Java Hudi wrote run with the oracle, tests/hudi_oracle.)"""

from __future__ import annotations

import logging

import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.table_config import (
    BACKUP_PATH,
    PROPERTIES_PATH,
    load_table_config,
    update_table_properties,
)
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.metadata_table import INFLIGHT_KEY, METADATA_TABLE, PARTITIONS_KEY
from tests.conftest import table_listing
from tests.unit.small_tables import batch, read_pairs

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
        "hoodie.metadata.enable": "false"}
ON = {**OPTS, "hoodie.metadata.enable": "true"}
MDT_FILES = [".hoodie/metadata/.hoodie/hoodie.properties", ".hoodie/metadata/files/.files-0000_00000000.log.1_0-0-0",
             ".hoodie/metadata/.hoodie/00000000000000010.deltacommit"]


def with_metadata_table(path: str, partitions: str = "files,column_stats") -> None:
    """What a Java writer leaves: the metadata table's files and its partitions in hoodie.properties."""
    storage = open_storage(path)
    for rel in MDT_FILES:
        storage.write(rel, b"x")
    update_table_properties(storage, {PARTITIONS_KEY: partitions, INFLIGHT_KEY: "record_index"})


def props(path: str) -> dict[str, str]:
    return dict(load_table_config(open_storage(path)).raw)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_write_deletes_the_metadata_table_first(tmp_path, caplog, table_type):
    path = str(tmp_path / "t")
    opts = {**OPTS, "table.type": table_type}
    write_local(path, batch([("a", 1, "x", 1)]), opts)
    with_metadata_table(path)
    assert props(path)[PARTITIONS_KEY] == "files,column_stats"
    with caplog.at_level(logging.WARNING, logger="hoodie_datasource"):
        write_local(path, batch([("a", 2, "x", 2), ("b", 2, "y", 3)]), opts)
    warnings = [r for r in caplog.records if "metadata table" in r.getMessage() and r.levelno == logging.WARNING]
    assert len(warnings) == 1 and path in warnings[0].getMessage()
    assert props(path)[PARTITIONS_KEY] == "" and props(path)[INFLIGHT_KEY] == ""
    listed = table_listing(path)
    assert not any(p.startswith(METADATA_TABLE + "/") for p in listed)
    assert BACKUP_PATH not in listed and PROPERTIES_PATH in listed
    assert read_pairs(path) == [("a", 2), ("b", 3)]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="hoodie_datasource"):
        write_local(path, batch([("c", 3, "x", 4)]), opts)  # nothing left to delete: no second warning
    assert not [r for r in caplog.records if "metadata table" in r.getMessage()]


def test_a_service_deletes_it_too(tmp_path):
    path = str(tmp_path / "t")
    for ts in (1, 2, 3):
        write_local(path, batch([("a", ts, "x", ts)]), OPTS)
    with_metadata_table(path)
    HoodieTable(path).clean(**{"hoodie.cleaner.commits.retained": "1", "hoodie.metadata.enable": "false"})
    assert props(path)[PARTITIONS_KEY] == ""
    assert not any(p.startswith(METADATA_TABLE + "/") for p in table_listing(path))


def test_a_folder_left_by_a_crash_after_the_properties_were_cleared_is_deleted(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    with_metadata_table(path, partitions="")
    update_table_properties(open_storage(path), {INFLIGHT_KEY: ""})
    write_local(path, batch([("b", 1, "x", 2)]), OPTS)
    assert not any(p.startswith(METADATA_TABLE + "/") for p in table_listing(path))


def test_a_metadata_table_that_cannot_be_trusted_is_built_anew(tmp_path, caplog):
    """The files a Java writer's metadata table would leave, damaged (and a partition listed as in flight):
    a write with the metadata table on deletes them and builds its own from storage, listing every file."""
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), ON)
    with_metadata_table(path)
    with caplog.at_level(logging.WARNING, logger="hoodie_datasource"):
        write_local(path, batch([("b", 2, "y", 2)]), ON)
    assert [r for r in caplog.records if "built anew" in r.getMessage()]
    assert props(path)[PARTITIONS_KEY] == "files" and props(path)[INFLIGHT_KEY] == ""
    listed = table_listing(path)
    assert ".hoodie/metadata/.hoodie/hoodie.properties" in listed
    assert not set(MDT_FILES[1:]) & set(listed)
    assert read_pairs(path) == [("a", 1), ("b", 2)]


def test_a_partition_switched_off_is_deleted(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), ON)
    storage = open_storage(path)
    update_table_properties(storage, {PARTITIONS_KEY: "files,record_index"})
    storage.write(".hoodie/metadata/record_index/.record-index-0000-0_00000000000000011.log.1_0-0-0", b"x")
    write_local(path, batch([("b", 2, "y", 2)]), ON)
    assert props(path)[PARTITIONS_KEY] == "files"
    assert not any(p.startswith(".hoodie/metadata/record_index/") for p in table_listing(path))
    assert read_pairs(path) == [("a", 1), ("b", 2)]


def test_the_properties_update_recovers_from_a_crash_between_its_steps(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    storage = open_storage(path)
    # a crash after the backup was written and hoodie.properties deleted: readers read the backup
    storage.write(BACKUP_PATH, storage.read(PROPERTIES_PATH))
    storage.delete(PROPERTIES_PATH)
    assert load_table_config(storage).name == "t"
    config = update_table_properties(storage, {PARTITIONS_KEY: ""})
    assert dict(config.raw)[PARTITIONS_KEY] == "" and config.name == "t"
    assert storage.exists(PROPERTIES_PATH) and not storage.exists(BACKUP_PATH)
    assert read_pairs(path) == [("a", 1)]


def test_a_hadoop_checksum_beside_a_rewritten_file_is_removed(tmp_path):
    """Java's local file system writes ``.hoodie.properties.crc`` and checks it on every read: rewriting
    ``hoodie.properties`` must not leave a stale one (Java then fails to load the table)."""
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    crc = tmp_path / "t" / ".hoodie" / ".hoodie.properties.crc"
    crc.write_bytes(b"crc of the old content")
    update_table_properties(open_storage(path), {PARTITIONS_KEY: ""})
    assert not crc.exists()
    stale = tmp_path / "t" / "x" / ".gone.parquet.crc"
    (tmp_path / "t" / "x" / "gone.parquet").write_bytes(b"x")
    stale.write_bytes(b"crc")
    assert open_storage(path).delete("x/gone.parquet") and not stale.exists()
