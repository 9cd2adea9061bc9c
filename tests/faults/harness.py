"""The fault-injection harness: build a table, run one operation in a writer process of its own with a
fault point armed (an exception, or SIGKILL of the writer's whole process group), then check what it
left and that the table recovers.

After the fault, for copy-on-write and merge-on-read alike:
- the table is readable and its snapshot is exactly the state before or after the operation (the one
  the point implies), by our reader and by hudi-rs;
- a lock the dead writer held is still held (a SIGKILL releases nothing) and the next operation gets it
  once its lease expired;
- once the dead writer's heartbeat expired, the same operation again and then a write succeed: no
  instant stays pending, every row is there once, and every data file left on disk belongs to a
  completed commit (nothing the failed operation wrote is left behind);
- after the fault and after the recovery, the metadata table (on, as by default) lists exactly the committed
  files, as its readers count its instants (``tests.metadata_checks``).

Writers run under optimistic concurrency control with the storage lock (a 2 s lease) and a heartbeat
taken for dead after 2 s, so recovery takes seconds, not Hudi's default minutes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pyarrow as pa
from hudi import HudiTableBuilder

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.hoodie_table import HoodieTable
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table import table as table_handle
from hoodie_datasource.table.file_names import BaseFileName
from hoodie_datasource.timeline.commit_metadata import write_stats_of
from hoodie_datasource.timeline.heartbeat import is_heartbeat_expired
from hoodie_datasource.timeline.instant import COMPACTION, WRITE_ACTIONS
from hoodie_datasource.timeline.timeline import Timeline
from hoodie_datasource.transaction.storage_lock import Lease, StorageLockProvider
from tests.conftest import REPO
from tests.faults.hooks import session_processes
from tests.faults.worker import FAILED_EXIT
from tests.metadata_checks import assert_metadata_table_true

LEASE_S = 2
HEARTBEAT_EXPIRY_MS = 2000
OCC = {
    "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
    "hoodie.write.lock.provider": "storage",
    "hoodie.write.lock.storage.validity.timeout.secs": str(LEASE_S),
    "hoodie.write.lock.storage.renew.interval.secs": "1",
    "hoodie.client.heartbeat.interval_in_ms": "1000",
    "hoodie.client.heartbeat.tolerable.misses": "2",
}
WRITE = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
         "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
         "hoodie.datasource.write.operation": "upsert", **OCC}
WRITER_TIMEOUT_S = 180

Rows = dict[str, str]  # record key -> value


def batch(tag: str, keys: list[str], ts: int = 1) -> pa.Table:
    """Rows with the given keys, each valued ``<tag>:<key>``; partition by the key's last digit's parity."""
    return pa.table({"id": keys, "ts": [ts] * len(keys), "p": [("x", "y")[int(k[-1]) % 2] for k in keys],
                     "v": [f"{tag}:{k}" for k in keys]})


def applied(rows: Rows, table: pa.Table) -> Rows:
    return {**rows, **dict(zip(table.column("id").to_pylist(), table.column("v").to_pylist()))}


@dataclass
class Table:
    """A table under test: its path, the options of every write and service, the rows it holds."""

    path: str
    table_type: str
    rows: Rows = field(default_factory=dict)

    @property
    def options(self) -> dict[str, str]:
        return {**WRITE, "hoodie.datasource.write.table.type": self.table_type}

    def storage(self) -> Storage:
        return open_storage(self.path)

    def write(self, data: pa.Table, **extra: str) -> None:
        write_local(self.path, data, {**self.options, **extra})
        self.rows = applied(self.rows, data)

    def service(self) -> HoodieTable:
        return HoodieTable(self.path)


def snapshot(path: str) -> Rows:
    out = read_table(path, ReadConfig())
    keys = out.column("id").to_pylist()
    assert len(keys) == len(set(keys)), f"duplicate keys in the snapshot: {sorted(keys)}"
    return dict(zip(keys, out.column("v").to_pylist()))


def hudi_rs_snapshot(path: str) -> Rows:
    batches = HudiTableBuilder.from_base_uri(path).build().read()
    if not batches:
        return {}
    out = pa.Table.from_batches(batches)
    keys = out.column("id").to_pylist()
    assert len(keys) == len(set(keys)), f"hudi-rs reads duplicate keys: {sorted(keys)}"
    return dict(zip(keys, out.column("v").to_pylist()))


def timeline(path: str) -> Timeline:
    storage = open_storage(path)
    return table_handle.Table.load(storage).timeline


def data_files(storage: Storage) -> set[str]:
    return {f.path for f in storage.list_tree("") if not f.path.startswith(".hoodie")
            and (BaseFileName.parse(f.name) is not None or ".log." in f.name)}


def committed_files(path: str) -> set[str]:
    """Every data file a completed write or compaction names (on the active or archived timeline)."""
    t = timeline(path)
    return {s["path"] for i in t.completed() for s in write_stats_of(t.read_metadata(i)) if s.get("path")}


def lease(path: str) -> Lease | None:
    return StorageLockProvider(open_storage(path), LEASE_S, 1).current()


@dataclass(frozen=True)
class Outcome:
    returncode: int
    stderr: str
    session: int  # the writer's session id (its pid: it leads its own session)


def run_writer(spec: dict, point: str, mode: str) -> Outcome:
    """Run ``tests.faults.worker`` with ``point`` armed to ``mode`` (``fail`` | ``kill``), in a session
    (process group) of its own, and wait for it."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HOODIE_FAULT_POINTS": f"{point}=tests.faults.hooks:{mode}"}
    child = subprocess.Popen([sys.executable, "-m", "tests.faults.worker", json.dumps(spec)], cwd=REPO, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, stderr = child.communicate(timeout=WRITER_TIMEOUT_S)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)  # the worker leads its own process group too
            child.wait()
    return Outcome(child.returncode, stderr, child.pid)


def assert_failed_as_injected(outcome: Outcome, mode: str) -> None:
    if mode == "kill":
        assert outcome.returncode == -signal.SIGKILL, f"exit {outcome.returncode}: {outcome.stderr[-2000:]}"
        deadline = time.monotonic() + 15  # a killed JVM takes a moment to tear its memory down
        while session_processes(outcome.session):
            assert time.monotonic() < deadline, "a process of the killed writer is still running"
            time.sleep(0.1)
    else:
        assert outcome.returncode == FAILED_EXIT, f"exit {outcome.returncode}: {outcome.stderr[-2000:]}"
        failure = [line for line in outcome.stderr.splitlines() if line.startswith("FAILED ")]
        assert failure and "InjectedFault" in outcome.stderr, outcome.stderr[-2000:]


def assert_reads(path: str, expected: Rows, what: str) -> None:
    assert snapshot(path) == expected, f"our snapshot {what}"
    assert hudi_rs_snapshot(path) == expected, f"hudi-rs {what}"


def assert_left(table: Table, outcome: Outcome, mode: str, expected: Rows, holds_lock: bool,
                succeeded: bool = False, metadata_ready: bool = True) -> None:
    """What a writer that failed (or, ``succeeded``, only seemed to) left: exactly ``expected`` by both
    readers, a metadata table (``metadata_ready``: its ``files`` partition ready) listing exactly the committed
    files, and the table lock held by the dead writer only when it held it at the point (a killed holder
    releases nothing; an exception releases it)."""
    if succeeded:
        assert outcome.returncode == 0, outcome.stderr[-2000:]
    else:
        assert_failed_as_injected(outcome, mode)
    assert_reads(table.path, expected, f"after a {mode}")
    assert_metadata_table_true(table.path, metadata_ready)
    held = lease(table.path)
    if mode == "kill" and holds_lock:
        assert held is not None and held.state == "held" and f":{outcome.session}:" in held.owner, held
    else:
        assert held is None or held.state == "released", f"the lock is still held: {held}"
    table.rows = expected


def wait_for_dead_heartbeats(path: str) -> None:
    """Until the heartbeat of every pending write and compaction expired (a killed writer stopped beating)."""
    storage = open_storage(path)
    deadline = time.monotonic() + 30
    for instant in timeline(path).pending():
        if instant.action in WRITE_ACTIONS or instant.action == COMPACTION:
            while not is_heartbeat_expired(storage, instant.timestamp, HEARTBEAT_EXPIRY_MS):
                assert time.monotonic() < deadline, f"the heartbeat of {instant.timestamp} still beats"
                time.sleep(0.1)


def assert_settled(table: Table) -> None:
    """Nothing pending, the rows exactly, and no data file outside the completed commits."""
    pending = timeline(table.path).pending()
    assert not pending, f"still pending: {pending}"
    assert_reads(table.path, table.rows, "after recovery")
    stray = data_files(table.storage()) - committed_files(table.path)
    assert not stray, f"data files no completed commit names: {sorted(stray)}"
    assert_metadata_table_true(table.path)


def recover(table: Table, again: Callable[[], object] | None) -> None:
    """What a user does next: the interrupted service again (if any), then a write; both must succeed."""
    wait_for_dead_heartbeats(table.path)
    if again is not None:
        again()
    table.write(batch("recovered", ["k1", "n9"], ts=9))
    assert_settled(table)
