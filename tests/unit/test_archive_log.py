"""Hudi's archived timeline (timeline layout 1) as this library writes and reads it: the archive log files,
their records, and the archived instants a loaded timeline holds (no JVM; tests/hudi_oracle has Java read
them)."""

from __future__ import annotations

import json
import os

import pyarrow as pa

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.log.avro_codec import decode_avro_values
from hoodie_datasource.log.log_format import BlockType, HeaderKey, read_log_file
from hoodie_datasource.storage.registry import open_storage

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
        "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1",
        # the metadata table compacts at each write: archival, which its latest compaction bounds, goes as far
        "hoodie.metadata.compact.max.delta.commits": "1"}
COMPACT = {"hoodie.compact.inline.max.delta.commits": "1"}


def rows(keys, ts):
    return pa.table({"id": keys, "ts": [ts] * len(keys), "p": ["x"] * len(keys), "v": [f"{k}@{ts}" for k in keys]})


def archive_records(path: str) -> list[dict]:
    """Every record of the archive log files, oldest file first."""
    storage = open_storage(path)
    names = sorted(os.listdir(os.path.join(path, ".hoodie", "archived")), key=lambda n: int(n.split(".")[3].split("_")[0]))
    records = []
    for name in names:
        contents = read_log_file(storage, f".hoodie/archived/{name}")
        assert contents.corrupt_blocks == 0 and [b.block_type for b in contents.blocks] == [BlockType.AVRO_DATA]
        block = contents.blocks[0]
        assert list(block.header) == [HeaderKey.SCHEMA]  # as Hudi's archiver writes it: no instant time
        records += decode_avro_values(block.content, block.schema)
    return records


def test_archival_writes_hudi_archive_log_records_for_every_instant_file(tmp_path):
    """Each archival writes the next ``.commits_.archive.<n>_1-0-1``; a record per instant file, its content
    in the field of its kind (MetadataConversionUtils.createMetaWrapper), then the files leave ``.hoodie``."""
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    written = [write_local(path, rows(["a", "b"], 0), opts)]
    for ts in range(1, 11):
        written.append(write_local(path, rows(["a"], ts), opts))
        if ts % 2 == 0:  # each compaction gives the cleaner an older slice to remove
            HoodieTable(path).compact(**COMPACT)
    archive = sorted(os.listdir(os.path.join(path, ".hoodie", "archived")))
    assert archive and all(n.startswith(".commits_.archive.") and n.endswith("_1-0-1") for n in archive)
    records = archive_records(path)
    by_instant: dict[str, list[tuple[str, str]]] = {}
    for r in records:
        by_instant.setdefault(r["commitTime"], []).append((r["actionType"], r["actionState"]))
        assert len(r["stateTransitionTime"]) == 17
    timeline = HoodieTable(path).timeline()
    assert set(by_instant) == timeline.archived
    active = {n.split(".")[0] for n in os.listdir(os.path.join(path, ".hoodie")) if n[:1].isdigit()}
    assert not active & timeline.archived
    # cleans are archived on their own count, as Hudi's getCleanInstantsToArchive: the latest two stay active
    cleans = [i.timestamp for i in timeline.instants if i.action == "clean"]
    assert len(cleans) > 3 and set(cleans[:-2]) <= timeline.archived and not set(cleans[-2:]) & timeline.archived
    assert by_instant[written[0]] == [("deltacommit", "REQUESTED"), ("deltacommit", "INFLIGHT"),
                                      ("deltacommit", "COMPLETED")]
    compaction = next(t for t, states in by_instant.items() if ("compaction", "REQUESTED") in states)
    assert by_instant[compaction] == [("compaction", "REQUESTED"), ("compaction", "INFLIGHT"), ("commit", "COMPLETED")]
    fields = {(r["actionType"], r["actionState"]): sorted(k for k, v in r.items() if isinstance(v, dict))
              for r in records}
    assert fields[("deltacommit", "REQUESTED")] == []  # an empty file has no content
    assert fields[("deltacommit", "COMPLETED")] == ["hoodieCommitMetadata"]
    assert fields[("compaction", "REQUESTED")] == ["hoodieCompactionPlan"]
    assert fields[("commit", "COMPLETED")] == ["hoodieCommitMetadata"]
    assert fields[("clean", "INFLIGHT")] == ["hoodieCleanerPlan"]
    assert fields[("clean", "COMPLETED")] == ["hoodieCleanMetadata"]
    first = next(r for r in records if r["commitTime"] == written[0] and r["actionState"] == "COMPLETED")
    stats = [s for group in first["hoodieCommitMetadata"]["partitionToWriteStats"].values() for s in group]
    assert [s["numInserts"] for s in stats] == [2] and stats[0]["path"].startswith("x/")


def stats_by_file(metadata: dict) -> dict:
    return {s["fileId"]: (s["path"], s["numWrites"], s.get("logFiles"))
            for group in metadata["partitionToWriteStats"].values() for s in group}


def test_archived_instants_read_back_as_they_were(tmp_path):
    """The timeline holds the archived instants with the metadata and plans they had on the active timeline."""
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.archive.automatic": "false", "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    for ts in range(4):
        write_local(path, rows(["a", f"n{ts}"], ts), opts)
    HoodieTable(path).compact(**COMPACT)
    for ts in range(4, 9):
        write_local(path, rows(["a"], ts), opts)
    table = HoodieTable(path)
    before = table.timeline()
    plans = {i.timestamp: before.read_plan(i.with_state(i.state.REQUESTED)) for i in before.instants
             if before.is_compaction(i) or i.action == "clean"}
    metadata = {i.timestamp: before.read_metadata(i) for i in before.instants if i.is_completed}
    archived = table.archive(**{"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"})
    after = table.timeline()
    compactions = [i.timestamp for i in before.instants if before.is_compaction(i)]
    assert set(archived) == after.archived and set(compactions) <= after.archived
    assert after.instants == before.instants
    assert dict(after.actions_seen) == dict(before.actions_seen)
    for t in archived:
        instant = after.find(t)
        got = after.read_metadata(instant)
        if instant.action in ("commit", "deltacommit"):
            assert stats_by_file(got) == stats_by_file(metadata[t])
            assert got["extraMetadata"] == metadata[t]["extraMetadata"]
            assert got["operationType"] == metadata[t]["operationType"]
        else:
            assert got == metadata[t]
        if t in plans:
            assert after.read_plan(instant.with_state(instant.state.REQUESTED))["version"] == plans[t]["version"]


def test_archive_schema_marks_strings_as_java_strings(tmp_path):
    """Hudi 1.x reads archived records with the block's own schema and casts their strings to java.lang.String:
    every string is marked ``avro.java.string`` as in Hudi's generated schemas."""
    path = str(tmp_path / "t")
    for ts in range(5):
        write_local(path, rows(["a"], ts), OPTS)
    name = sorted(os.listdir(os.path.join(path, ".hoodie", "archived")))[0]
    block = read_log_file(open_storage(path), f".hoodie/archived/{name}").blocks[0]
    text = block.header[HeaderKey.SCHEMA]
    assert '"string"' not in text.replace('"type":"string","avro.java.string"', "")
    schema = json.loads(text)
    assert schema["name"] == "HoodieArchivedMetaEntry" and schema["namespace"] == "org.apache.hudi.avro.model"


def test_an_archive_file_gone_since_the_listing_leaves_the_archive_unread(tmp_path):
    """Hudi's archiver may merge archive files (hoodie.archive.merge.enable) between a listing and the read: the
    instants of a vanished file are unknown, which the timeline says (reads before its start are refused)."""
    from hoodie_datasource.timeline.archive_log import read_archive_file

    path = str(tmp_path / "t")
    write_local(path, rows(["a"], 1), OPTS)
    assert read_archive_file(open_storage(path), ".hoodie/archived/.commits_.archive.9_1-0-1", 100) == ((), False)
