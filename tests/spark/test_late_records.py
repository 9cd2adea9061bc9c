"""Late records (an ordering value below the stored one) on both table types and both payloads, as Apache Hudi
0.15 merges them, through every read: snapshot, read-optimized, incremental, CDC, and after compaction.
OverwriteWithLatestAvroPayload: an upsert replaces the stored record whatever its ordering value, on copy-on-
write (``HoodieMergeHandle``) and merge-on-read (the log record combines with the base record in the snapshot
reader and in compaction) alike. DefaultHoodieRecordPayload: a stored record with a greater ordering value
stays as it is, commit time and all, so an incremental or CDC read of the late write shows nothing (but a
merge-on-read incremental read, which merges only the files of its range as Hudi's does, shows the late log
record until compaction). Log records pre-combine among themselves (``HoodieMergedLogRecordScanner``): the
greater ordering value wins whatever the payload, and a delete is weighed by its ordering value. An ``insert``
packed into a small file appends its records (``hoodie.merge.allow.duplicate.on.inserts``, true by default
since 0.15) or, with the option off, merges each into every stored copy of its key.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from pyspark.sql import Row

from hoodie_datasource import HoodieTable
from tests.conftest import require_module

hudi = require_module("hudi")
from hudi import HudiTableBuilder  # noqa: E402

COLS = ["id", "ts", "v"]
OVERWRITE = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
DEFAULT = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"


def options(table_type: str, payload: str) -> dict[str, str]:
    return {"table.name": "late", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
            "storage.type": table_type, "payload.class": payload, "hoodie.table.cdc.enabled": "true"}


def write(spark, path, rows, opts, mode="upsert", deleted=()):
    df = spark.createDataFrame([Row(id=i, ts=t, v=v, p="x", _hoodie_is_deleted=i in deleted) for i, t, v in rows])
    df.write.format("hoodie").options(**opts).mode(mode).save(path)
    return HoodieTable(path).latest_commit()


def ours(spark, path, **read_options):
    reader = spark.read.format("hoodie")
    for key, value in read_options.items():
        reader = reader.option(key, value)
    return sorted(tuple(r) for r in reader.load(path).select(*COLS).collect())


def theirs(path):
    batches = HudiTableBuilder.from_base_uri(path).build().read()
    if not sum(b.num_rows for b in batches):
        return []
    return sorted(tuple(r.values()) for r in pa.Table.from_batches(batches).select(COLS).to_pylist())


def changes(spark, path, begin):
    df = (spark.read.format("hoodie").option("query", "incremental").option("incremental.format", "cdc")
          .option("begin.instant", begin).load(path))
    image = lambda text: None if text is None else tuple(json.loads(text)[c] for c in COLS)  # noqa: E731
    return sorted((r.op, image(r.before), image(r.after)) for r in df.collect())


@pytest.mark.parametrize("payload", [OVERWRITE, DEFAULT], ids=["overwrite", "default"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_late_and_an_early_record(spark, table_path, table_type, payload):
    opts = options(table_type, payload)
    first = write(spark, table_path, [("a", 10, 1), ("e", 10, 1), ("b", 1, 0)], opts)
    write(spark, table_path, [("a", 5, 2), ("e", 20, 2)], opts)  # a late, e early
    stored_wins = payload == DEFAULT
    late = ("a", 10, 1) if stored_wins else ("a", 5, 2)
    expected = sorted([late, ("b", 1, 0), ("e", 20, 2)])
    assert ours(spark, table_path) == expected
    # hudi-rs: copy-on-write reads the base file; merge-on-read merges as Hudi's snapshot reader does (the
    # log record replaces the base record under the default payload, the greater value wins under Default)
    assert theirs(table_path) == expected
    if table_type == "MERGE_ON_READ":
        assert ours(spark, table_path, query="read_optimized") == [("a", 10, 1), ("b", 1, 0), ("e", 10, 1)]
    incremental = ours(spark, table_path, query="incremental", **{"begin.instant": first})
    # on merge-on-read the incremental read merges only the files the range wrote (Hudi's
    # MergeOnReadIncrementalRelation): the late log record reads as written, where the snapshot keeps the
    # stored one; after compaction the range holds the compacted base file, which kept the stored record
    # (checked against Java Hudi in tests/hudi_oracle/test_silent_wrong_answers.py)
    compacted = [("e", 20, 2)] if stored_wins else [("a", 5, 2), ("e", 20, 2)]
    assert incremental == (compacted if table_type == "COPY_ON_WRITE" else [("a", 5, 2), ("e", 20, 2)])
    updated = [("u", ("e", 10, 1), ("e", 20, 2))]
    if not stored_wins:
        updated.insert(0, ("u", ("a", 10, 1), ("a", 5, 2)))
    assert changes(spark, table_path, first) == updated
    if table_type == "MERGE_ON_READ":
        assert len(HoodieTable(table_path).compact()) == 1
        assert ours(spark, table_path) == expected == ours(spark, table_path, query="read_optimized")
        assert theirs(table_path) == expected
        assert ours(spark, table_path, query="incremental", **{"begin.instant": first}) == compacted


@pytest.mark.parametrize("payload", [OVERWRITE, DEFAULT], ids=["overwrite", "default"])
def test_log_updates_out_of_order_pre_combine(spark, table_path, payload):
    """Two log records of a key, the later one with the lower ordering value: the log scanner keeps the greater
    one under either payload (``preCombine``), and it then replaces the base record (a copy-on-write table,
    which merges each upsert into the stored record, would hold the later one under the default payload:
    Hudi's two table types differ there, and so do ours)."""
    opts = options("MERGE_ON_READ", payload)
    first = write(spark, table_path, [("a", 10, 1), ("b", 1, 0)], opts)
    write(spark, table_path, [("a", 30, 2)], opts)
    write(spark, table_path, [("a", 20, 3)], opts)
    expected = [("a", 30, 2), ("b", 1, 0)]
    assert ours(spark, table_path) == expected
    # hudi-rs 0.5 merges log records in commit order under the default payload (it reads ("a", 20, 3)),
    # where Hudi's log scanner pre-combines them by ordering value; under Default it agrees
    if payload == DEFAULT:
        assert theirs(table_path) == expected
    assert ours(spark, table_path, query="incremental", **{"begin.instant": first}) == [("a", 30, 2)]
    assert changes(spark, table_path, first) == [("u", ("a", 10, 1), ("a", 30, 2))]
    assert len(HoodieTable(table_path).compact()) == 1
    assert ours(spark, table_path) == expected == ours(spark, table_path, query="read_optimized")
    assert theirs(table_path) == expected  # after compaction, the base file alone


@pytest.mark.parametrize("payload", [OVERWRITE, DEFAULT], ids=["overwrite", "default"])
def test_a_delete_in_a_log_between_updates(spark, table_path, payload):
    """Soft deletes carry their ordering value into the DELETE block: one below the logged record's is ignored
    (a), one above deletes the key (e); a record after a delete wins whatever its value (e again)."""
    opts = options("MERGE_ON_READ", payload)
    write(spark, table_path, [("a", 10, 1), ("e", 10, 1), ("b", 1, 0)], opts)
    write(spark, table_path, [("a", 30, 2), ("e", 30, 2)], opts)
    write(spark, table_path, [("a", 25, 9), ("e", 40, 9)], opts, deleted={"a", "e"})
    assert ours(spark, table_path) == [("a", 30, 2), ("b", 1, 0)]
    write(spark, table_path, [("e", 20, 3)], opts)
    expected = [("a", 30, 2), ("b", 1, 0), ("e", 20, 3)]
    # hudi-rs 0.5 is asserted after compaction only: before it, it lets the soft delete at 25 remove a under
    # the default payload, and under Default keeps e deleted (its delete at 40 outweighs the later record at
    # 20), where Hudi's log scanner ignores an outweighed delete and lets a record after a delete win
    assert ours(spark, table_path) == expected
    assert len(HoodieTable(table_path).compact()) == 1
    assert ours(spark, table_path) == expected == ours(spark, table_path, query="read_optimized")
    assert theirs(table_path) == expected


@pytest.mark.parametrize("allow", ["true", "false"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_insert_onto_a_key_stored_twice(spark, table_path, table_type, allow):
    """Every insert lands in the table's one small file. By default (``HoodieConcatHandle``) each keeps the
    stored records and adds its own, so ``a`` is held once more each time; with the option off the insert
    is merged into every stored copy of ``a`` (``HoodieMergeHandle``), as an upsert always is."""
    opts = options(table_type, OVERWRITE)
    write(spark, table_path, [("a", 1, 1), ("b", 1, 0)], opts, mode="insert")
    write(spark, table_path, [("a", 2, 2)], opts, mode="insert")
    assert ours(spark, table_path) == [("a", 1, 1), ("a", 2, 2), ("b", 1, 0)]
    write(spark, table_path, [("a", 3, 3)], {**opts, "hoodie.merge.allow.duplicate.on.inserts": allow}, mode="insert")
    expected = ([("a", 1, 1), ("a", 2, 2), ("a", 3, 3)] if allow == "true" else [("a", 3, 3), ("a", 3, 3)])
    expected.append(("b", 1, 0))
    assert ours(spark, table_path) == expected == theirs(table_path)
    assert spark.read.format("hoodie").load(table_path).select("_hoodie_file_name").distinct().count() == 1
    # an upsert of a replaces every copy (COW: HoodieMergeHandle; MOR: the log record merges into each, as
    # compaction's merge handle does; Hudi's Spark snapshot reader, and hudi-rs, merge it into the first copy
    # only until compaction, so hudi-rs is asserted on MOR after compaction)
    write(spark, table_path, [("a", 4, 4)], opts)
    expected = [("a", 4, 4)] * (len(expected) - 1) + [("b", 1, 0)]
    assert ours(spark, table_path) == expected
    if table_type == "MERGE_ON_READ":
        assert len(HoodieTable(table_path).compact()) == 1
        assert ours(spark, table_path) == expected
    assert theirs(table_path) == expected
