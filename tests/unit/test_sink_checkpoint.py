"""The streaming sink's checkpoint in commit metadata, without a JVM: Hudi's key and JSON shape, the walk
back past other writers' commits to a writer's last batch, the refusal of a second query under one
identifier, Hudi's option names and defaults, and the retry / ignore policy of a failing micro-batch."""

from __future__ import annotations

import logging

import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.streaming_config import StreamingSinkConfig, resolve_streaming_config
from hoodie_datasource.errors import CorruptFileError, HoodieConfigError, InvalidRecordError, StreamingSinkError
from hoodie_datasource.spark.stream_sink import HoodieStreamSink
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.sink_checkpoint import (
    SINK_CHECKPOINT_KEY,
    SinkCheckpoint,
    latest_sink_checkpoint,
    sink_metadata,
)
from tests.unit.small_tables import batch

OPTS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts"}


def _latest(path, identifier):
    storage = open_storage(str(path), {})
    return latest_sink_checkpoint(Table.load(storage).timeline, identifier)


def _write(path, n, extra=None):
    return write_local(str(path), batch([(f"k{n}", n, "x", f"v{n}")]), OPTS, extra)


def test_the_checkpoint_has_hudis_key_and_json_shape():
    assert sink_metadata("default_single_writer", 4, "/ckpt/q1") == {
        "_hudi_streaming_sink_checkpoint": '{"default_single_writer":"4"}',
        "_hoodie_streaming_sink_query": '{"default_single_writer":"/ckpt/q1"}',
    }


def test_a_writers_last_batch_is_found_past_other_writers_and_plain_commits(tmp_path):
    a0 = _write(tmp_path, 0, sink_metadata("a", 0, "qa"))
    assert _latest(tmp_path, "a") == SinkCheckpoint(a0, 0, "qa")
    _write(tmp_path, 1, sink_metadata("b", 7, "qb"))
    a1 = _write(tmp_path, 2, sink_metadata("a", 1, "qa"))
    b8 = _write(tmp_path, 3, sink_metadata("b", 8, "qb"))
    _write(tmp_path, 4)  # a batch write: no checkpoint
    assert _latest(tmp_path, "a") == SinkCheckpoint(a1, 1, "qa")
    assert _latest(tmp_path, "b") == SinkCheckpoint(b8, 8, "qb")
    assert _latest(tmp_path, "c") is None


def test_a_checkpoint_apache_hudi_wrote_has_no_query(tmp_path):
    instant = _write(tmp_path, 0, {SINK_CHECKPOINT_KEY: '{"default_single_writer":"12"}'})
    assert _latest(tmp_path, "default_single_writer") == SinkCheckpoint(instant, 12, None)


@pytest.mark.parametrize("value", ['not json', '["a"]', '{"default_single_writer":"x"}'])
def test_a_damaged_checkpoint_names_its_commit(tmp_path, value):
    instant = _write(tmp_path, 0, {SINK_CHECKPOINT_KEY: value})
    with pytest.raises(CorruptFileError, match=f"{instant}.commit"):
        _latest(tmp_path, "default_single_writer")


def test_a_second_query_under_the_same_identifier_is_refused(tmp_path):
    _write(tmp_path, 0, sink_metadata("default_single_writer", 3, "/ckpt/first"))
    config = StreamingSinkConfig()
    assert HoodieStreamSink(str(tmp_path), OPTS, config, "/ckpt/first").last_committed_batch() == 3
    with pytest.raises(StreamingSinkError) as failure:
        HoodieStreamSink(str(tmp_path), OPTS, config, "/ckpt/second").last_committed_batch()
    message = str(failure.value)
    assert "'default_single_writer'" in message and "/ckpt/first" in message and "/ckpt/second" in message
    assert "hoodie.datasource.write.streaming.checkpoint.identifier" in message
    # another identifier is another writer
    other = StreamingSinkConfig(identifier="second")
    assert HoodieStreamSink(str(tmp_path), OPTS, other, "/ckpt/second").last_committed_batch() is None


def test_streaming_options_have_hudis_names_and_defaults():
    assert resolve_streaming_config({}) == StreamingSinkConfig("default_single_writer", 3, 2000, False)
    given = resolve_streaming_config({
        "hoodie.datasource.write.streaming.checkpoint.identifier": "w1",
        "hoodie.datasource.write.streaming.retry.count": "5",
        "streaming.retry.interval.ms": "100",
        "hoodie.datasource.write.streaming.ignore.failed.batch": "true",
    })
    assert given == StreamingSinkConfig("w1", 5, 100, True)
    assert given.retry_waits_s() == [0.1, 0.2, 0.4, 0.8]
    with pytest.raises(HoodieConfigError, match="hoodie.datasource.write.streaming.retry.count"):
        resolve_streaming_config({"hoodie.datasource.write.streaming.retry.count": "-1"})
    with pytest.raises(HoodieConfigError, match="streaming.ignore.failed.batch"):
        resolve_streaming_config({"streaming.ignore.failed.batch": "maybe"})


class _FailingSink(HoodieStreamSink):
    """A sink whose attempts fail with the given errors in turn, then succeed; it counts its attempts."""

    def _write(self, batch, batch_id):
        self.options["attempts"] = str(int(self.options.get("attempts", "0")) + 1)
        failures = self.options["failures"]
        if failures:
            self.options["failures"] = failures[1:]
            raise failures[0]


def _sink(failures, retries=3, ignore=False):
    return _FailingSink("/nowhere", {"failures": failures}, StreamingSinkConfig("w", retries, 1, ignore), "q")


def test_a_failing_batch_is_tried_retry_count_times_in_all():
    sink = _sink([OSError("store unreachable")] * 2)
    sink(None, 0)
    assert sink.options["attempts"] == "3"
    sink = _sink([OSError("store unreachable")] * 3)
    with pytest.raises(OSError):
        sink(None, 0)
    assert sink.options["attempts"] == "3"


def test_a_bad_record_is_not_retried():
    sink = _sink([InvalidRecordError("null record key")])
    with pytest.raises(InvalidRecordError):
        sink(None, 0)
    assert sink.options["attempts"] == "1"


def test_ignore_failed_batch_drops_the_batch_but_never_a_second_query(caplog):
    sink = _sink([OSError("store unreachable")] * 3, ignore=True)
    with caplog.at_level(logging.ERROR):
        sink(None, 5)
    assert sink.options["attempts"] == "3" and "Micro-batch 5" in caplog.text
    with pytest.raises(StreamingSinkError):
        _sink([StreamingSinkError("another query")], ignore=True)(None, 0)
