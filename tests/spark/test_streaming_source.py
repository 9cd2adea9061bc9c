"""``spark.readStream.format("hoodie")``: every commit's records reach the stream once, a restarted query
resumes after the last commit it processed, read limits split the backlog by commit, and commits cleaned
before a restart read fail clearly (or fall back to the snapshot, by option). COW and MOR."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.errors import ReadWindowError, StreamingCheckpointError

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
        "hoodie.clean.automatic": "false"}


def rows(tag: str, keys: list[str], ts: int = 1) -> pa.Table:
    return pa.table({"id": keys, "ts": [ts] * len(keys), "p": ["x" if int(k[-1]) % 2 else "y" for k in keys],
                     "v": [f"{tag}:{k}" for k in keys]})


def stream(spark, path: str, checkpoint: str, **options: str) -> list[list[tuple[str, str]]]:
    """Run the stream to the end of what is there (``availableNow``); the rows of each micro-batch."""
    batches: list[list[tuple[str, str]]] = []

    def collect(df, batch_id):
        batches.append(sorted((r["id"], r["v"]) for r in df.select("id", "v").collect()))

    reader = spark.readStream.format("hoodie")
    for key, value in options.items():
        reader = reader.option(key, value)
    query = (reader.load(path).writeStream.foreachBatch(collect).option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start())
    query.awaitTermination(120)
    if query.exception() is not None:
        raise query.exception()
    return [b for b in batches if b]


@pytest.fixture(params=["COPY_ON_WRITE", "MERGE_ON_READ"])
def table(tmp_path, request) -> tuple[str, dict[str, str]]:
    path = str(tmp_path / "t")
    options = {**OPTS, "hoodie.datasource.write.table.type": request.param}
    write_local(path, rows("c1", ["k1", "k2"]), options)
    write_local(path, rows("c2", ["k2", "k3"], ts=2), options)
    return path, options


def test_each_commit_reaches_the_stream_once_and_a_restart_resumes_after_the_last(spark, tmp_path, table):
    path, options = table
    checkpoint = str(tmp_path / "ckpt")
    assert stream(spark, path, checkpoint) == [[("k1", "c1:k1"), ("k2", "c2:k2"), ("k3", "c2:k3")]]
    write_local(path, rows("c3", ["k1", "k5"], ts=3), options)
    write_local(path, rows("c4", ["k5"], ts=4), options)
    assert stream(spark, path, checkpoint) == [[("k1", "c3:k1"), ("k5", "c4:k5")]]
    assert stream(spark, path, checkpoint) == []  # nothing new


def test_read_limits_split_the_backlog_by_commit(spark, tmp_path, table):
    path, _ = table
    one_each = stream(spark, path, str(tmp_path / "a"), maxInstantsPerTrigger="1")
    assert one_each == [[("k1", "c1:k1"), ("k2", "c1:k2")], [("k2", "c2:k2"), ("k3", "c2:k3")]]
    by_rows = stream(spark, path, str(tmp_path / "b"), **{"hoodie.datasource.streaming.max.rows.per.trigger": "2"})
    assert by_rows == one_each
    latest = stream(spark, path, str(tmp_path / "c"), startOffset="latest")
    assert latest == []


def test_commits_cleaned_before_a_restart_fail_the_read_or_fall_back_to_the_snapshot(spark, tmp_path, table):
    path, options = table
    checkpoint = str(tmp_path / "ckpt")
    stream(spark, path, checkpoint, maxInstantsPerTrigger="1")  # reads c1 and c2
    cleaning = {**options, "hoodie.clean.automatic": "true", "hoodie.cleaner.commits.retained": "1",
                "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "1"}
    for n in range(3, 6):
        write_local(path, rows(f"c{n}", ["k1", "k2", "k3"], ts=n), cleaning)
    with pytest.raises(Exception, match=ReadWindowError.__name__):  # c3's files are gone
        stream(spark, path, checkpoint, maxInstantsPerTrigger="1")
    fallback = stream(spark, path, str(tmp_path / "fallback"), startOffset="earliest",
                      **{"hoodie.datasource.read.incr.fallback.fulltablescan.enable": "true"})
    assert fallback == [[("k1", "c5:k1"), ("k2", "c5:k2"), ("k3", "c5:k3")]]


def test_a_checkpoint_taken_on_another_table_is_refused(spark, tmp_path, table):
    path, options = table
    other = str(tmp_path / "other")
    write_local(other, rows("o1", ["k7"]), options)
    checkpoint = str(tmp_path / "ckpt")
    stream(spark, path, checkpoint)
    write_local(other, rows("o2", ["k9"]), options)
    with pytest.raises(Exception, match=f"{StreamingCheckpointError.__name__}.*checkpoint was taken reading"):
        stream(spark, other, checkpoint)


def test_a_change_feed_stream_gives_each_change_once_with_its_images(spark, tmp_path, table):
    path, options = table
    options = {**options, "hoodie.table.cdc.enabled": "true"}
    cdc_path = str(tmp_path / "cdc")
    write_local(cdc_path, rows("c1", ["k1", "k2"]), options)
    checkpoint = str(tmp_path / "ckpt")

    def changes():
        out = []
        query = (spark.readStream.format("hoodie").option("hoodie.datasource.query.incremental.format", "cdc")
                 .load(cdc_path).writeStream.option("checkpointLocation", checkpoint).trigger(availableNow=True)
                 .foreachBatch(lambda df, _: out.extend(
                     (r["op"], json.loads(r["before"])["v"] if r["before"] else None,
                      json.loads(r["after"])["v"] if r["after"] else None) for r in df.collect()))
                 .start())
        query.awaitTermination(120)
        return sorted(out, key=str)

    assert changes() == [("i", None, "c1:k1"), ("i", None, "c1:k2")]
    write_local(cdc_path, rows("c2", ["k1"], ts=2), options)
    write_local(cdc_path, rows("c2", ["k2"], ts=2), {**options, "hoodie.datasource.write.operation": "delete"})
    assert changes() == [("d", "c1:k2", None), ("u", "c1:k1", "c2:k1")]
    with pytest.raises(Exception, match="applies to incremental queries"):
        spark.read.format("hoodie").option("hoodie.datasource.query.incremental.format", "cdc").load(cdc_path).collect()
