"""The streamer's JVM-free parts: which source files a round takes after a checkpoint, parsing them with
bad records kept apart (never dropped), where a restart resumes, and its command line."""

from __future__ import annotations

import io
import json
import os

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.streamer.checkpoint import CHECKPOINT_KEY, CHECKPOINT_RESET_KEY, resume_point
from hoodie_datasource.streamer.config import parse_config
from hoodie_datasource.streamer.file_source import parse_file, select_new_files
from hoodie_datasource.table.table import Table

SECOND_MS = 1000


def put(folder, name: str, data: bytes, mtime_s: float) -> None:
    path = os.path.join(folder, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    os.utime(path, (mtime_s, mtime_s))


def test_a_round_takes_files_after_the_checkpoint_oldest_first_within_its_budget(tmp_path):
    for n, name in enumerate(["a.json", "b.json", "sub/c.json"]):
        put(tmp_path, name, b"x" * 10, 1_000 + n)
    put(tmp_path, ".d.json.tmp", b"x", 2_000)  # temporary and marker files are not data
    put(tmp_path, "_SUCCESS", b"", 2_000)
    storage = open_storage(str(tmp_path))
    everything = select_new_files(storage, None, 10**9)
    assert [f.path for f in everything.files] == ["a.json", "b.json", "sub/c.json"]
    assert everything.checkpoint == str(1_002 * SECOND_MS)
    budget = select_new_files(storage, None, 15)
    assert [f.path for f in budget.files] == ["a.json"] and budget.checkpoint == str(1_000 * SECOND_MS)
    assert [f.path for f in select_new_files(storage, budget.checkpoint, 10**9).files] == ["b.json", "sub/c.json"]
    assert select_new_files(storage, everything.checkpoint, 10**9).files == ()
    put(tmp_path, "e.json", b"x" * 10, 1_000)  # same millisecond as a file already chosen: taken together
    assert [f.path for f in select_new_files(storage, None, 15).files] == ["a.json", "e.json"]


def test_bad_records_are_kept_apart_with_their_file_text_and_reason(tmp_path):
    lines = [json.dumps({"id": "k1", "ts": 1, "v": "a"}), "{not json", json.dumps({"id": None, "ts": 2, "v": "b"}),
             json.dumps({"id": "k2", "ts": 3, "v": "c"})]
    put(tmp_path, "f.json", "\n".join(lines).encode(), 1)
    parsed = parse_file(open_storage(str(tmp_path)), "f.json", "json", None, ("id",))
    assert parsed.good.column("id").to_pylist() == ["k1", "k2"]
    reasons = parsed.bad.column("reason").to_pylist()
    assert reasons[0].startswith("unparseable JSON") and reasons[1] == "null record key (id)"
    assert parsed.bad.column("record").to_pylist()[0] == "{not json"
    assert all(s.endswith("f.json") for s in parsed.bad.column("source").to_pylist())

    put(tmp_path, "f.csv", b"id,ts,v\nk1,1,a\nk2,2\nk3,3,c\n", 1)
    parsed = parse_file(open_storage(str(tmp_path)), "f.csv", "csv", None, ("id",), csv_header=True)
    assert parsed.good.column("id").to_pylist() == ["k1", "k3"]
    assert parsed.bad.column("record").to_pylist() == ["k2,2"]


def test_parquet_and_avro_files_and_a_given_schema(tmp_path):
    table = pa.table({"id": ["k1", "k2"], "ts": [1, 2], "v": ["a", "b"]})
    sink = io.BytesIO()
    pq.write_table(table, sink)
    put(tmp_path, "f.parquet", sink.getvalue(), 1)
    avro = {"type": "record", "name": "r", "fields": [{"name": "id", "type": "string"}, {"name": "ts", "type": "long"},
                                                      {"name": "v", "type": "string"}]}
    sink = io.BytesIO()
    fastavro.writer(sink, avro, table.to_pylist())
    put(tmp_path, "f.avro", sink.getvalue(), 1)
    storage = open_storage(str(tmp_path))
    for name, fmt in (("f.parquet", "parquet"), ("f.avro", "avro")):
        assert parse_file(storage, name, fmt, None, ("id",)).good.to_pylist() == table.to_pylist()
    wider = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.string()), ("extra", pa.float64())])
    conformed = parse_file(storage, "f.parquet", "parquet", wider, ("id",)).good
    assert conformed.schema == wider and conformed.column("extra").null_count == 2


def test_a_restart_resumes_from_the_newest_commit_holding_a_checkpoint_and_an_override_applies_once(tmp_path):
    path = str(tmp_path / "t")
    opts = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p"}
    rows = pa.table({"id": ["a"], "p": ["x"]})
    assert resume_point(None, None).checkpoint is None
    write_local(path, rows, opts, extra_metadata={CHECKPOINT_KEY: "100"})
    write_local(path, rows, opts)  # another writer's commit, without a checkpoint

    def timeline():
        storage = open_storage(path)
        return Table.load(storage).timeline

    assert resume_point(timeline(), None).checkpoint == "100"
    overridden = resume_point(timeline(), "50")
    assert (overridden.checkpoint, overridden.reset) == ("50", "50")
    write_local(path, rows, opts, extra_metadata={CHECKPOINT_KEY: "70", CHECKPOINT_RESET_KEY: "50"})
    assert resume_point(timeline(), "50").checkpoint == "70"  # the override was applied already


@pytest.mark.parametrize(("extra", "message"), [
    (["--source-class", "KafkaSource"], "Unknown --source-class"),
    ([], "needs --hoodie-conf hoodie.streamer.source.dfs.root"),
    (["--transformer-class", "SqlQueryBasedTransformer"], "needs --hoodie-conf hoodie.streamer.transformer.sql"),
    (["--hoodie-conf", "hoodie.errortable.enable=true"], "needs hoodie.errortable.base.path"),
    (["--hoodie-conf", "oops"], "is not KEY=VALUE"),
])
def test_bad_command_lines_are_refused_naming_the_problem(extra, message):
    base = ["--target-base-path", "/t", "--target-table", "t"]
    root = [] if message.startswith("needs --hoodie-conf hoodie.streamer.source") else \
        ["--hoodie-conf", "hoodie.deltastreamer.source.dfs.root=/in"]
    with pytest.raises(HoodieConfigError, match=message):
        parse_config(base + root + extra)


def test_a_command_line_resolves_to_the_target_write_options():
    cfg = parse_config(["--target-base-path", "/t", "--target-table", "trips", "--table-type", "MERGE_ON_READ",
                        "--op", "insert", "--source-class", "org.apache.hudi.utilities.sources.ParquetDFSSource",
                        "--hoodie-conf", "hoodie.streamer.source.dfs.root=/in",
                        "--hoodie-conf", "hoodie.datasource.write.recordkey.field=uuid",
                        "--continuous", "--post-write-termination-strategy-class", "NoNewDataTerminationStrategy",
                        "--hoodie-conf", "max.rounds.without.new.data.to.shutdown=2"])
    assert (cfg.source, cfg.source_root, cfg.continuous, cfg.idle_rounds_to_stop) == ("parquet", "/in", True, 2)
    assert cfg.key_fields == ("uuid",)
    assert cfg.write_options == {"hoodie.datasource.write.recordkey.field": "uuid", "hoodie.table.name": "trips",
                                 "hoodie.datasource.write.table.type": "MERGE_ON_READ",
                                 "hoodie.datasource.write.operation": "insert",
                                 "hoodie.datasource.write.precombine.field": "ts"}
