"""``writeStream.format("hoodie")``: file streams into copy-on-write and merge-on-read tables, with
``availableNow`` and processing-time triggers; one commit per micro-batch with rows, each recording its batch id as
Apache Hudi's streaming sink does; inline compaction, cleaning and archival running from the stream; two
writers with their own identifiers on one table; and the bad inputs: a null key, an incompatible schema
change (the table unchanged), a new nullable column (written), a second query under one identifier, a
misspelt option."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from pyspark.errors import StreamingQueryException

from hoodie_datasource import HoodieConfigError, HoodieTable
from tests.conftest import REPO
from tests.spark.streams import SCHEMA, TIMEOUT_S, batches, commits, land, rows, run_to_end, stream

pytestmark = pytest.mark.spark

COLS = ["uuid", "ts", "city", "fare"]


def snapshot(spark, table, cols=COLS):
    return sorted(tuple(r) for r in spark.read.format("hoodie").load(table).select(*cols).collect())


def wait_for_batch(table: str, batch_id: int) -> None:
    """Until the table holds a commit of micro-batch ``batch_id``."""
    deadline = time.monotonic() + TIMEOUT_S
    while not (os.path.isdir(os.path.join(table, ".hoodie")) and str(batch_id) in batches(table)):
        assert time.monotonic() < deadline, f"{table} has {batches(table) if os.path.isdir(table) else []}"
        time.sleep(0.5)


def failure_of(query) -> str:
    with pytest.raises(StreamingQueryException) as failure:
        query.awaitTermination(TIMEOUT_S)
    return str(failure.value)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_available_now_stream_one_commit_per_batch(spark, tmp_path, table_path, table_type):
    src, ckpt = tmp_path / "in", tmp_path / "ckpt"
    options = {"storage.type": table_type}
    if table_type == "MERGE_ON_READ":  # compaction every 2 deltacommits, inline, from the stream
        options.update({"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"})
    land(src, "f0", rows(("a", 1, "sf", 1.0), ("b", 1, "sf", 2.0), ("c", 1, "nyc", 3.0)), 0)
    land(src, "f1", rows(("a", 2, "sf", 10.0), ("d", 1, "nyc", 4.0)), 1)
    land(src, "empty", [], 2)  # a micro-batch without rows: no commit

    run_to_end(spark, src, table_path, ckpt, **options)

    assert (ckpt / "commits" / "2").is_file()
    assert batches(table_path) == ["0", "1"] + ([None] if table_type == "MERGE_ON_READ" else [])
    assert snapshot(spark, table_path) == [("a", 2, "sf", 10.0), ("b", 1, "sf", 2.0), ("c", 1, "nyc", 3.0),
                                           ("d", 1, "nyc", 4.0)]
    write, checkpoint = commits(table_path)[0]
    assert write == ("commit" if table_type == "COPY_ON_WRITE" else "deltacommit")
    assert checkpoint == {"batch": {"default_single_writer": "0"}, "query": {"default_single_writer": str(ckpt)}}

    # the query resumes from its checkpoint: only the new file, as batch 3 (its last checkpoint is found past
    # the compaction on MOR)
    land(src, "f3", rows(("b", 3, "sf", 20.0), ("e", 1, "la", 5.0)), 3)
    run_to_end(spark, src, table_path, ckpt, **options)

    assert batches(table_path) == (["0", "1", "3"] if table_type == "COPY_ON_WRITE" else ["0", "1", None, "3"])
    assert snapshot(spark, table_path) == [("a", 2, "sf", 10.0), ("b", 3, "sf", 20.0), ("c", 1, "nyc", 3.0),
                                           ("d", 1, "nyc", 4.0), ("e", 1, "la", 5.0)]


def test_processing_time_stream_with_cleaning_and_archival(spark, tmp_path, table_path):
    src = tmp_path / "in"
    # the metadata table compacted at every deltacommit: archival never passes its latest compaction
    services = {"hoodie.cleaner.commits.retained": "1", "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                "hoodie.metadata.compact.max.delta.commits": "1"}
    query = stream(spark, src, table_path, tmp_path / "ckpt", fmt="parquet", trigger={"processingTime": "1 second"},
                   **services)
    try:
        for i in range(4):  # each file updates "a" and adds a row: a micro-batch and a commit each
            land(src, f"f{i}", rows(("a", i, "sf", float(i)), (f"n{i}", i, "sf", 1.0)), i, fmt="parquet")
            wait_for_batch(table_path, i)
    finally:
        query.stop()
    assert query.exception() is None
    assert snapshot(spark, table_path) == [("a", 3, "sf", 3.0)] + [(f"n{i}", i, "sf", 1.0) for i in range(4)]
    timeline = HoodieTable(table_path).timeline()
    assert [i.action for i in timeline.instants if i.is_completed and i.timestamp in timeline.archived]
    assert any(i.action == "clean" and i.is_completed for i in timeline.instants)
    assert batches(table_path) == ["2", "3"]  # the commits still active; 0 and 1 archived


def test_a_compactor_in_another_process_beside_the_stream(spark, tmp_path, table_path):
    occ = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control"}
    src = tmp_path / "in"
    query = stream(spark, src, table_path, tmp_path / "ckpt", trigger={"processingTime": "1 second"},
                   **{"storage.type": "MERGE_ON_READ", **occ})
    try:
        land(src, "f0", rows(("a", 1, "sf", 1.0), ("b", 1, "nyc", 2.0)), 0)
        wait_for_batch(table_path, 0)
        land(src, "f1", rows(("a", 2, "sf", 10.0)), 1)
        wait_for_batch(table_path, 1)
        compactor = subprocess.Popen(
            [sys.executable, "-c", "import json, sys; from hoodie_datasource import HoodieTable; "
             "print(json.dumps(HoodieTable(sys.argv[1]).compact(**{sys.argv[2]: sys.argv[3]})))", table_path,
             *next(iter(occ.items()))],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        land(src, "f2", rows(("a", 3, "sf", 30.0), ("c", 1, "la", 3.0)), 2)
        wait_for_batch(table_path, 2)
        out, err = compactor.communicate(timeout=TIMEOUT_S)
    finally:
        query.stop()
    assert query.exception() is None
    assert compactor.returncode == 0, err[-3000:]
    compactions = [i for i in HoodieTable(table_path).timeline().instants if i.action == "commit" and i.is_completed]
    assert [i.timestamp for i in compactions] == json.loads(out)  # the compactor's commit
    assert sorted(b for b in batches(table_path) if b is not None) == ["0", "1", "2"]
    assert snapshot(spark, table_path) == [("a", 3, "sf", 30.0), ("b", 1, "nyc", 2.0), ("c", 1, "la", 3.0)]


def test_two_writers_with_their_own_identifiers_write_one_table(spark, tmp_path, table_path):
    ids = "hoodie.datasource.write.streaming.checkpoint.identifier"
    land(tmp_path / "a", "a0", rows(("a1", 1, "sf", 1.0)), 0)
    land(tmp_path / "b", "b0", rows(("b1", 1, "nyc", 2.0)), 0)
    run_to_end(spark, tmp_path / "a", table_path, tmp_path / "ckpt-a", **{ids: "writer_a"})
    run_to_end(spark, tmp_path / "b", table_path, tmp_path / "ckpt-b", **{ids: "writer_b"})
    land(tmp_path / "a", "a1", rows(("a2", 1, "sf", 3.0)), 1)
    run_to_end(spark, tmp_path / "a", table_path, tmp_path / "ckpt-a", **{ids: "writer_a"})

    assert batches(table_path, "writer_a") == ["0", None, "1"]  # writer_a's batch 1 found past writer_b's commit
    assert batches(table_path, "writer_b") == [None, "0", None]
    assert snapshot(spark, table_path) == [("a1", 1, "sf", 1.0), ("a2", 1, "sf", 3.0), ("b1", 1, "nyc", 2.0)]


def test_a_null_record_key_fails_the_batch_and_changes_nothing(spark, tmp_path, table_path):
    src = tmp_path / "in"
    land(src, "f0", rows(("a", 1, "sf", 1.0)), 0)
    land(src, "f1", rows(("b", 1, "sf", 2.0), (None, 1, "sf", 3.0)), 1)
    message = failure_of(stream(spark, src, table_path, tmp_path / "ckpt"))
    assert "InvalidRecordError" in message and "uuid" in message
    assert batches(table_path) == ["0"]
    assert HoodieTable(table_path).timeline().pending() == []
    assert snapshot(spark, table_path) == [("a", 1, "sf", 1.0)]


def test_schema_changes_in_the_stream(spark, tmp_path, table_path):
    src, ckpt = tmp_path / "in", tmp_path / "ckpt"
    land(src, "f0", rows(("a", 1, "sf", 1.0)), 0)
    run_to_end(spark, src, table_path, ckpt)

    # the query restarted with a new nullable column: written, the earlier rows read it as null
    land(src, "f1", [{"uuid": "b", "ts": 1, "city": "sf", "fare": 2.0, "note": "new"}], 1)
    run_to_end(spark, src, table_path, ckpt, schema=SCHEMA + ", note string")
    assert snapshot(spark, table_path, COLS + ["note"]) == [("a", 1, "sf", 1.0, None), ("b", 1, "sf", 2.0, "new")]

    # an incompatible type change fails the batch, naming the column, and leaves the table as it was
    before = sorted(os.listdir(os.path.join(table_path, ".hoodie")))
    land(src, "f2", [{"uuid": "c", "ts": 1, "city": "sf", "fare": "cheap", "note": "x"}], 2)
    message = failure_of(stream(spark, src, table_path, ckpt, schema="uuid string, ts long, city string, "
                                "fare string, note string"))
    assert "SchemaMismatchError" in message and "Column 'fare' is string in the incoming data" in message
    assert sorted(os.listdir(os.path.join(table_path, ".hoodie"))) == before
    assert batches(table_path) == ["0", "1"]


def test_a_second_query_under_the_same_identifier_is_refused(spark, tmp_path, table_path):
    first = stream(spark, tmp_path / "a", table_path, tmp_path / "ckpt-a", trigger={"processingTime": "1 second"})
    try:
        land(tmp_path / "a", "a0", rows(("a1", 1, "sf", 1.0)), 0)
        wait_for_batch(table_path, 0)
        land(tmp_path / "b", "b0", rows(("b1", 1, "sf", 2.0)), 0)
        message = failure_of(stream(spark, tmp_path / "b", table_path, tmp_path / "ckpt-b"))
        assert "StreamingSinkError" in message and str(tmp_path / "ckpt-a") in message
        assert "hoodie.datasource.write.streaming.checkpoint.identifier" in message
        land(tmp_path / "a", "a1", rows(("a2", 1, "sf", 3.0)), 1)  # the first query goes on
        wait_for_batch(table_path, 1)
    finally:
        first.stop()
    assert first.exception() is None
    assert batches(table_path) == ["0", "1"]
    assert snapshot(spark, table_path) == [("a1", 1, "sf", 1.0), ("a2", 1, "sf", 3.0)]


def test_a_bad_option_fails_at_start(spark, tmp_path, table_path):
    with pytest.raises(HoodieConfigError, match="recordkey.feild"):
        stream(spark, tmp_path / "in", table_path, tmp_path / "ckpt", **{"recordkey.feild": "uuid"})
    with pytest.raises(HoodieConfigError, match="complete"):
        (spark.readStream.format("rate").load().groupBy("value").count().writeStream.format("hoodie")
         .options(**{"table.name": "t", "recordkey.field": "value", "operation": "upsert"}).outputMode("complete")
         .option("checkpointLocation", str(tmp_path / "ckpt")).start(table_path))
    assert spark.streams.active == []
