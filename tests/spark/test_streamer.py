"""``python -m hoodie_datasource.streamer``: rounds of ingestion from a directory of files or another
table's commits, each one commit recording the source checkpoint, a restart resuming exactly after it;
bad records fail the round or go to an error table, never dropped; a SQL transformation; continuous runs
stop after rounds without new data."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pyarrow as pa
import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.errors import InvalidRecordError
from hoodie_datasource.hoodie_table import HoodieTable
from hoodie_datasource.streamer.checkpoint import CHECKPOINT_KEY
from hoodie_datasource.streamer.config import parse_config
from hoodie_datasource.streamer.streamer import run
from tests.conftest import REPO
from tests.unit.small_tables import read_pairs

KEYS = ["--hoodie-conf", "hoodie.datasource.write.recordkey.field=id",
        "--hoodie-conf", "hoodie.datasource.write.partitionpath.field=p"]


def drop(folder: str, name: str, records: list[dict], mtime_s: float) -> None:
    """A new JSON file in the source directory, whole, with a given modification time."""
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records))
    os.utime(path, (mtime_s, mtime_s))


def rec(key: str, ts: int, v: str) -> dict:
    return {"id": key, "ts": ts, "p": "x" if key[-1] in "13579" else "y", "v": v}


def args(tmp_path, *extra: str) -> list[str]:
    return ["--target-base-path", str(tmp_path / "t"), "--target-table", "t",
            "--hoodie-conf", f"hoodie.streamer.source.dfs.root={tmp_path / 'in'}", *KEYS, *extra]


@pytest.fixture
def source(tmp_path) -> str:
    folder = str(tmp_path / "in")
    os.makedirs(folder)
    drop(folder, "1.json", [rec("k1", 1, "a"), rec("k2", 1, "b")], 1_000)
    drop(folder, "2.json", [rec("k3", 1, "c")], 1_001)
    return folder


def checkpoints(path: str) -> list[str | None]:
    table = HoodieTable(path)
    return [(table.commit_metadata(i).get("extraMetadata") or {}).get(CHECKPOINT_KEY) for i in table.completed_commits()]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_rounds_resume_exactly_after_the_checkpoint_of_the_last_commit(spark, tmp_path, source, table_type):
    cfg = parse_config(args(tmp_path, "--table-type", table_type))
    target = cfg.target_path
    assert run(spark, cfg).rows == 3
    assert read_pairs(target) == [("k1", "a"), ("k2", "b"), ("k3", "c")]
    drop(source, "3.json", [rec("k1", 2, "a2"), rec("k4", 1, "d")], 1_002)
    summary = run(spark, cfg)  # a new run (a restart): only the new file
    assert (summary.rows, summary.commits) == (2, 1)
    assert read_pairs(target) == [("k1", "a2"), ("k2", "b"), ("k3", "c"), ("k4", "d")]
    assert checkpoints(target) == ["1001000", "1002000"]
    assert run(spark, cfg).commits == 0  # nothing new: no commit


def test_a_continuous_run_stops_after_rounds_without_new_data(spark, tmp_path, source):
    cfg = parse_config(args(tmp_path, "--continuous", "--min-sync-interval-seconds", "0",
                            "--post-write-termination-strategy-class", "NoNewDataTerminationStrategy",
                            "--hoodie-conf", "max.rounds.without.new.data.to.shutdown=2",
                            "--source-limit", "70"))  # one file per round
    summary = run(spark, cfg)
    assert (summary.rounds, summary.commits, summary.rows) == (4, 2, 3)
    assert len(checkpoints(cfg.target_path)) == 2


def test_bad_records_fail_the_round_or_go_to_the_error_table(spark, tmp_path, source):
    drop(source, "3.json", [rec("k5", 1, "e"), "{broken", {"id": None, "ts": 1, "p": "x", "v": "nokey"}], 1_002)
    cfg = parse_config(args(tmp_path))
    with pytest.raises(InvalidRecordError, match="2 bad source record"):
        run(spark, cfg)
    assert not os.path.exists(os.path.join(cfg.target_path, ".hoodie", "hoodie.properties")) or \
        HoodieTable(cfg.target_path).completed_commits() == []
    errors = str(tmp_path / "errors")
    cfg = parse_config(args(tmp_path, "--hoodie-conf", "hoodie.errortable.enable=true",
                            "--hoodie-conf", f"hoodie.errortable.base.path={errors}"))
    assert (run(spark, cfg).bad) == 2
    assert read_pairs(cfg.target_path) == [("k1", "a"), ("k2", "b"), ("k3", "c"), ("k5", "e")]
    bad = spark.read.format("hoodie").load(errors).orderBy("reason").collect()
    assert [(r["record"], r["reason"].split(":")[0]) for r in bad] == [
        ('{"id": null, "ts": 1, "p": "x", "v": "nokey"}', "null record key (id)"), ("{broken", "unparseable JSON")]
    assert {r["target_instant"] for r in bad} == set(HoodieTable(cfg.target_path).completed_commits())


def test_another_tables_commits_through_a_sql_transformation(spark, tmp_path):
    upstream = str(tmp_path / "a")
    opts = {"table.name": "a", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}
    write_local(upstream, pa.table({"id": ["k1", "k2"], "ts": [1, 1], "p": ["x", "y"], "v": ["a", "b"]}), opts)
    write_local(upstream, pa.table({"id": ["k2"], "ts": [2], "p": ["y"], "v": ["b2"]}), opts)
    cfg = parse_config(["--target-base-path", str(tmp_path / "b"), "--target-table", "b", "--source-class",
                        "HoodieIncrSource", "--hoodie-conf", f"hoodie.streamer.source.hoodieincr.path={upstream}",
                        "--hoodie-conf", "hoodie.streamer.source.hoodieincr.num_instants=1", *KEYS,
                        "--transformer-class", "org.apache.hudi.utilities.transform.SqlQueryBasedTransformer",
                        "--hoodie-conf", "hoodie.streamer.transformer.sql=SELECT id, ts, p, upper(v) AS v FROM <SRC>",
                        "--continuous", "--post-write-termination-strategy-class", "NoNewDataTerminationStrategy",
                        "--hoodie-conf", "max.rounds.without.new.data.to.shutdown=1"])
    assert run(spark, cfg).commits == 2  # one upstream commit a round
    assert read_pairs(cfg.target_path) == [("k1", "A"), ("k2", "B2")]
    assert checkpoints(cfg.target_path) == HoodieTable(upstream).completed_commits()


def test_the_command_line_runs_a_round_and_refuses_bad_arguments(tmp_path, source):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "hoodie_datasource.streamer", "--spark-master", "local[1]", *args(tmp_path)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Round 1: 3 rows in, 0 bad, commit" in done.stderr and "Done: 1 rounds, 1 commits" in done.stderr
    assert read_pairs(str(tmp_path / "t")) == [("k1", "a"), ("k2", "b"), ("k3", "c")]
    refused = subprocess.run([*command, "--source-class", "KafkaSource"], env=env, capture_output=True, text=True,
                             timeout=120)
    assert refused.returncode == 2 and "Unknown --source-class 'KafkaSource'" in refused.stderr
