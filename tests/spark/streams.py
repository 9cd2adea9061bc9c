"""Helpers of the streaming sink tests: files landing in a stream's input folder, the query, and what its
commits recorded. Also imported by the child processes of the replay and Spark Connect tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie_datasource import HoodieTable, fault_points
from tests.conftest import REPO

SCHEMA = "uuid string, ts long, city string, fare double"
OPTS = {"table.name": "trips", "recordkey.field": "uuid", "partitionpath.field": "city", "precombine.field": "ts"}
TIMEOUT_S = 240
KILL_AFTER_COMMIT = f"{fault_points.AFTER_STREAM_BATCH_COMMITTED}=tests.spark.stream_fault_hooks:kill_this_process"


def land(folder: str | Path, name: str, rows: list[dict], order: int, fmt: str = "json") -> None:
    """A new file in the stream's input folder, whole (written beside it, then renamed in), its
    modification time ``order`` seconds after a fixed point, so a file source takes them in that order."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    staged = folder.parent / f".{folder.name}-{name}.{fmt}"
    if fmt == "json":
        staged.write_text("".join(json.dumps(row) + "\n" for row in rows))
    else:
        pq.write_table(pa.Table.from_pylist(rows), staged)
    when = 1_700_000_000 + order
    os.utime(staged, (when, when))
    staged.rename(folder / f"{name}.{fmt}")


def rows(*values: tuple) -> list[dict]:
    return [dict(zip(("uuid", "ts", "city", "fare"), v)) for v in values]


def stream(spark, source: str | Path, table: str, checkpoint: str | Path, schema: str = SCHEMA, fmt: str = "json",
           trigger: dict | None = None, **options):
    """Start a query from the file folder ``source`` into the hoodie table, one file per micro-batch."""
    Path(source).mkdir(parents=True, exist_ok=True)
    return (spark.readStream.format(fmt).schema(schema).option("maxFilesPerTrigger", 1).load(str(source))
            .writeStream.format("hoodie").options(**{**OPTS, **options})
            .option("checkpointLocation", str(checkpoint)).trigger(**(trigger or {"availableNow": True}))
            .start(table))


def run_to_end(spark, *args, **kwargs):
    """Run an ``availableNow`` query over everything in its folder; return it, stopped."""
    query = stream(spark, *args, **kwargs)
    query.awaitTermination(TIMEOUT_S)
    query.stop()
    return query


def commits(table: str) -> list[tuple[str, dict | None]]:
    """Each completed instant of the table: its action and, for writes, the sink checkpoint it recorded."""
    hoodie = HoodieTable(table)
    found = []
    for instant in hoodie.timeline().instants:
        if not instant.is_completed or instant.timestamp in hoodie.timeline().archived:
            continue
        checkpoint = None
        if instant.action in ("commit", "deltacommit", "replacecommit"):
            extra = hoodie.commit_metadata(instant.timestamp).get("extraMetadata") or {}
            if "_hudi_streaming_sink_checkpoint" in extra:
                checkpoint = {"batch": json.loads(extra["_hudi_streaming_sink_checkpoint"]),
                              "query": json.loads(extra["_hoodie_streaming_sink_query"])}
        found.append((instant.action, checkpoint))
    return found


def batches(table: str, identifier: str = "default_single_writer") -> list[str | None]:
    """The batch id each write commit of the table recorded for ``identifier`` (None: no checkpoint)."""
    return [(c["batch"].get(identifier) if c else None) for action, c in commits(table)
            if action in ("commit", "deltacommit", "replacecommit")]


def run_child(module: str, *args: str, killed: bool) -> subprocess.CompletedProcess:
    """``python -m module args`` (a query with a session of its own, as a restarted application has), SIGKILLed
    right after the sink commits a micro-batch or not; then nothing of it is left running (its JVM shares its
    process group)."""
    env = {key: value for key, value in os.environ.items() if key != fault_points.ENV_VAR}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    if killed:
        env[fault_points.ENV_VAR] = KILL_AFTER_COMMIT
    child = subprocess.Popen([sys.executable, "-m", module, *args], cwd=REPO, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = child.communicate(timeout=300)
    finally:
        _end_group(child.pid)
    return subprocess.CompletedProcess(child.args, child.returncode, out, err)


def _end_group(group: int) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            return
        assert time.monotonic() < deadline, f"process group {group} outlived SIGKILL"
        time.sleep(0.2)
