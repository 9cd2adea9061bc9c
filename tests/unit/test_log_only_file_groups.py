"""Merge-on-read file groups of log files only (no JVM): the groups Apache Hudi writes under an index that indexes
log files, made here from a table of ours by turning its first write's base files into log files of the same
instant (layout 1 names them after it, the deltacommit that created the group), with the same rows.

Reads (snapshot, read-optimized, incremental, time travel), an upsert tagging through the bucket index and through
the record index built from the merged logs, compaction (a base file from the logs alone), the cleaner, and the
CLI's ``validate``: each asserts the rows."""

from __future__ import annotations

import json
import posixpath
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.errors import HoodieIndexError
from hoodie_datasource.log.data_block import decode_data_block, encode_parquet_data_block
from hoodie_datasource.log.log_format import read_log_blocks, write_log_file
from hoodie_datasource.procedures.registry import run_procedure
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.file_names import BASE_FILE, LOG_FILE, BaseFileName, LogFileName
from hoodie_datasource.table.meta_columns import data_schema_of
from hoodie_datasource.write.append_handle import log_schema_text
from tests.metadata_checks import assert_metadata_table_true, assert_record_index_true
from tests.unit.small_tables import batch, read_pairs
from tests.unit.test_cli import as_json

OPTIONS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
           "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.metadata.enable": "false",
           "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2",
           "hoodie.datasource.write.operation": "upsert"}
ROWS = [("k0", 1, "x", 0.0), ("k1", 1, "x", 1.0), ("k2", 1, "x", 2.0), ("k3", 1, "y", 3.0), ("k4", 1, "y", 4.0),
        ("k5", 1, "y", 5.0)]


def files(path: str) -> tuple[list[str], list[str]]:
    """The table's base files and log files (partition/name)."""
    names = [p.relative_to(path).as_posix() for p in Path(path).glob("*/*")]
    return (sorted(n for n in names if BASE_FILE.match(posixpath.basename(n))),
            sorted(n for n in names if LOG_FILE.match(posixpath.basename(n))))


def to_log_only(path: str) -> None:
    """Every base file (all of the table's first write) replaced by a log file of its rows: a data block of that
    write's instant, in the log file named after it (version 1), as Hudi's append handle writes a new group; the
    write's commit metadata names the log file instead (``baseFile`` empty, as Hudi's for a group of logs only)."""
    storage = open_storage(path)
    bases, logs = files(path)
    assert bases and not logs
    renamed = {}
    for rel in bases:
        partition, name = posixpath.split(rel)
        base = BaseFileName.parse(name)
        stored = pq.read_table(Path(path, rel))
        block = encode_parquet_data_block(stored, base.instant_time, log_schema_text("t", data_schema_of(stored.schema)))
        log = posixpath.join(partition, LogFileName(base.file_id, base.instant_time, 1, "0-0-0").name())
        renamed[rel] = (log, write_log_file(storage, log, [block]))
        Path(path, rel).unlink()
    (commit,) = Path(path, ".hoodie").glob(f"{base.instant_time}.deltacommit")
    metadata = json.loads(commit.read_text())
    for stat in (s for stats in metadata["partitionToWriteStats"].values() for s in stats):
        log, size = renamed[stat["path"]]
        stat.update(path=log, baseFile="", logVersion=1, logFiles=[posixpath.basename(log)], fileSizeInBytes=size,
                    totalWriteBytes=size)
    commit.write_text(json.dumps(metadata))


@pytest.fixture
def log_only(tmp_path) -> tuple[str, list[str]]:
    """A table of four log-only groups (two buckets in each of two partitions), an upsert and a delete on them."""
    path = str(tmp_path / "t")
    write_local(path, batch(ROWS), {**OPTIONS, "hoodie.datasource.write.operation": "insert"})
    to_log_only(path)
    assert len(files(path)[1]) == 4, "every bucket of both partitions has a group"
    write_local(path, batch([("k1", 2, "x", 11.0), ("k4", 0, "y", 40.0)]), OPTIONS)
    write_local(path, batch([("k2", 2, "x", 0.0)]), {**OPTIONS, "hoodie.datasource.write.operation": "delete"})
    bases, _ = files(path)
    assert bases == [], "updates and deletes append to the log-only groups"
    return path, HoodieTable(path).completed_commits()


AFTER = [("k0", 0.0), ("k1", 11.0), ("k3", 3.0), ("k4", 4.0), ("k5", 5.0)]  # k4's ts 0 loses to the stored 1


def test_reads_of_log_only_groups(log_only):
    path, (t1, t2, t3) = log_only
    assert read_pairs(path) == AFTER
    assert read_pairs(path, query_type="read_optimized") == [], "a slice with no base file has no rows"
    assert read_pairs(path, as_of_instant=t1) == [(k, v) for k, _, _, v in ROWS]
    assert read_pairs(path, as_of_instant=t2) == [("k0", 0.0), ("k1", 11.0), ("k2", 2.0), ("k3", 3.0),
                                                  ("k4", 4.0), ("k5", 5.0)]
    # of each slice only the files the range wrote (Hudi's MergeOnReadIncrementalRelation): k4's late record too
    assert read_pairs(path, query_type="incremental", begin_instant=t1) == [("k1", 11.0), ("k4", 40.0)]
    assert read_pairs(path, query_type="incremental", begin_instant="000", end_instant=t1) == [
        (k, v) for k, _, _, v in ROWS]
    stats = HoodieTable(path).commit_metadata(t2)["partitionToWriteStats"]
    assert {(s["baseFile"], s["prevCommit"]) for stat in stats.values() for s in stat} == {("", t1)}


def test_upsert_compaction_and_clean_of_log_only_groups(log_only):
    path, _ = log_only
    # a bloom index reads base files only: refused rather than store the groups' keys twice
    with pytest.raises(HoodieIndexError, match="hoodie.index.type=BLOOM .* log files only"):
        write_local(path, batch([("k0", 5, "x", 50.0)]), {**OPTIONS, "hoodie.index.type": "BLOOM"})
    # the metadata table built from the listing: its record index holds the keys of the merged logs
    assert HoodieTable(path).create_metadata_table(**{"hoodie.metadata.record.index.enable": "true"}) == [
        "files", "record_index"]
    assert_record_index_true(path)
    by_record_index = {**OPTIONS, "hoodie.metadata.enable": "true", "hoodie.index.type": "RECORD_INDEX",
                       "hoodie.metadata.record.index.enable": "true"}
    write_local(path, batch([("k0", 5, "x", 50.0), ("k9", 5, "y", 9.0)]), by_record_index)
    expected = [("k0", 50.0), ("k1", 11.0), ("k3", 3.0), ("k4", 4.0), ("k5", 5.0), ("k9", 9.0)]
    assert read_pairs(path) == expected
    assert_record_index_true(path)
    assert len(HoodieTable(path).compact(**by_record_index)) == 1
    bases, _ = files(path)
    assert len([b for b in bases if b.startswith("x/")]) == 2 and len([b for b in bases if b.startswith("y/")]) >= 2
    assert read_pairs(path) == read_pairs(path, query_type="read_optimized") == expected
    assert_metadata_table_true(path)
    write_local(path, batch([("k5", 6, "y", 55.0)]), by_record_index)
    assert HoodieTable(path).clean(**{"hoodie.cleaner.commits.retained": "1", "hoodie.metadata.enable": "true"})
    assert [n for n in files(path)[1] if "_" + HoodieTable(path).completed_commits()[0] + ".log." in n] == []
    assert read_pairs(path) == [*expected[:4], ("k5", 55.0), ("k9", 9.0)]
    assert_metadata_table_true(path)
    assert as_json("validate", path) == {"valid": True, "problems": []}


def test_clustering_replaces_log_only_groups_and_the_cleaner_removes_them(tmp_path):
    path = str(tmp_path / "t")
    options = {k: v for k, v in OPTIONS.items() if not k.startswith("hoodie.bucket")} | {"hoodie.index.type": "SIMPLE"}
    write_local(path, batch(ROWS), {**options, "hoodie.datasource.write.operation": "insert"})
    to_log_only(path)
    _, logs = files(path)
    rows = [(k, v) for k, _, _, v in ROWS]
    assert read_pairs(path) == rows and read_pairs(path, query_type="read_optimized") == []
    assert HoodieTable(path).cluster(**options)
    bases, _ = files(path)
    assert {b.split("/")[0] for b in bases} == {"x", "y"}
    assert read_pairs(path) == read_pairs(path, query_type="read_optimized") == rows
    write_local(path, batch([("k0", 2, "x", 10.0)]), options)  # the SIMPLE index finds k0 in the new base file
    assert HoodieTable(path).clean(**{"hoodie.cleaner.commits.retained": "1"})
    assert not set(logs) & set(files(path)[1]), "the replaced groups' logs are cleaned"
    assert read_pairs(path) == [("k0", 10.0), *rows[1:]]
    assert as_json("validate", path) == {"valid": True, "problems": []}


def test_a_pending_compaction_and_a_failed_write_on_log_only_groups(log_only):
    """Logs written while a compaction of a log-only group is pending are named after it and merge into the slice
    before it, which has no base file; a failed write's new log-only group and its log appended to an existing group
    are read past."""
    path, (t1, *_) = log_only
    compaction = HoodieTable(path).schedule_compaction()
    assert compaction
    t4 = write_local(path, batch([("k3", 4, "y", 33.0)]), OPTIONS)
    _, logs = files(path)
    assert [n for n in logs if f"_{compaction}.log." in n], "the update is named after the pending compaction"
    expected = [("k0", 0.0), ("k1", 11.0), ("k3", 33.0), ("k4", 4.0), ("k5", 5.0)]
    assert read_pairs(path) == expected
    assert read_pairs(path, as_of_instant=t4) == expected
    assert read_pairs(path, query_type="read_optimized") == []
    # a write that failed midway: a new group of log files only named after it, and a log of it in k0's group
    failed = "20991231000000000"
    for state in ("requested", "inflight"):
        Path(path, ".hoodie", f"{failed}.deltacommit.{state}").write_bytes(b"")
    k0_log = next(Path(path, "x").glob(f".*_{t1}.log.1_*"))
    group = k0_log.name[1:].split("_")[0]
    storage = open_storage(path)
    (block,) = read_log_blocks(storage, f"x/{k0_log.name}")
    stored = decode_data_block(block)
    failed_block = encode_parquet_data_block(stored, failed, log_schema_text("t", data_schema_of(stored.schema)))
    write_log_file(storage, f"x/.{'99999999' + group[8:]}_{failed}.log.1_0-0-0", [failed_block])
    write_log_file(storage, f"x/.{group}_{t1}.log.9_0-0-0", [failed_block])
    assert read_pairs(path) == expected, "neither the failed write's group nor its log is read"
    assert HoodieTable(path).run_compaction(compaction)
    assert read_pairs(path) == expected
    # show_fsview_all: each group's slice of log files only (no data file), then the compacted one
    table = HoodieTable(path)
    slices = run_procedure("show_fsview_all", table, {"path_regex": "y"}).to_pylist()
    by_group: dict[str, list[tuple[str, bool]]] = {}
    for s in sorted(slices, key=lambda s: s["base_instant"]):
        by_group.setdefault(s["file_id"], []).append((s["base_instant"], s["data_file"].endswith(".parquet")))
    assert sorted(by_group.values()) == [[(t1, False), (compaction, True)]] * 2
    latest = run_procedure("show_fsview_latest", table, {"partition_path": "y"}).to_pylist()
    assert sorted((s["base_instant"], s["data_file"].endswith(".parquet")) for s in latest) == [(compaction, True)] * 2
