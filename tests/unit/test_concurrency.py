"""Several writers without processes or a JVM: the concurrency options, heartbeat expiry, the conflict
check, the lock providers and the lock manager's bounded waits, on real files."""

from __future__ import annotations

import pickle
import threading
import time
from dataclasses import replace

import pytest

from hoodie_datasource.client.local_engine import _run, write_local
from hoodie_datasource.client.write_client import run_write, start_write
from hoodie_datasource.config import keys as k
from hoodie_datasource.config.concurrency_config import ConcurrencyConfig, resolve_concurrency_config
from hoodie_datasource.errors import HoodieConfigError, HoodieWriteConflictError, LockError, LockTimeoutError
from hoodie_datasource.hoodie_table import HoodieTable
from hoodie_datasource.storage.local import LocalStorage
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.heartbeat import heartbeat_path, is_heartbeat_expired, write_heartbeat
from hoodie_datasource.timeline.instant import State
from hoodie_datasource.transaction.in_process_lock import InProcessLockProvider
from hoodie_datasource.transaction.lock_manager import LockManager
from hoodie_datasource.transaction.storage_lock import KEEP, StorageLockProvider
from hoodie_datasource.write.rollback import rollback_failed_writes
from tests.conftest import table_listing
from tests.unit.small_tables import batch
from tests.unit.small_tables import read_pairs as read

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}
OCC = {**OPTS, "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
       "hoodie.write.lock.provider": "in_process"}
FAST_LOCK = {"hoodie.write.lock.wait_time_ms": "100", "hoodie.write.lock.num_retries": "2",
             "hoodie.write.lock.wait_time_ms_between_retry": "50"}


def test_defaults_are_hudis():
    single = resolve_concurrency_config({})
    assert (single.mode, single.failed_writes_policy, single.heartbeat_interval_ms, single.heartbeat_misses) == (
        "single_writer", "EAGER", 60_000, 2)
    assert (single.lock_wait_ms, single.lock_num_retries, single.lock_retry_wait_ms, single.retries_on_conflict) == (
        60_000, 15, 1_000, 0)
    occ = resolve_concurrency_config({"hoodie.write.concurrency.mode": "OPTIMISTIC_CONCURRENCY_CONTROL"})
    assert occ.is_occ and occ.failed_writes_policy == "LAZY" and occ.lock_provider == k.STORAGE_LOCK
    assert occ.heartbeat_expiry_ms == 120_000


@pytest.mark.parametrize(("given", "chosen"), [
    ("in_process", k.IN_PROCESS_LOCK), (k.IN_PROCESS_LOCK, k.IN_PROCESS_LOCK), ("storage", k.STORAGE_LOCK),
    (k.STORAGE_LOCK, k.STORAGE_LOCK), (k.FILE_SYSTEM_LOCK, k.STORAGE_LOCK), ("ZOOKEEPER", k.ZOOKEEPER_LOCK),
])
def test_lock_provider_class_and_short_names(given, chosen):
    options = {"hoodie.write.lock.provider": given, "hoodie.write.lock.zookeeper.url": "zk",
               "hoodie.write.lock.zookeeper.port": "2181", "hoodie.write.lock.zookeeper.base_path": "/hudi"}
    assert resolve_concurrency_config(options).lock_provider == chosen


@pytest.mark.parametrize(("key", "value", "said"), [
    ("hoodie.write.concurrency.mode", "multi_writer", "optimistic_concurrency_control"),
    ("hoodie.cleaner.policy.failed.writes", "NEVER", "LAZY"),
    ("hoodie.write.lock.provider", "com.example.MyLock", "InProcessLockProvider"),
    ("hoodie.client.heartbeat.interval_in_ms", "500", ">= 1000"),
    ("hoodie.client.heartbeat.interval_in_ms", "soon", "integer"),
    ("hoodie.client.heartbeat.tolerable.misses", "0", ">= 1"),
    ("hoodie.write.lock.num_retries", "-1", ">= 0"),
    ("hoodie.write.num.retries.on.conflict", "-2", ">= 0"),
    ("hoodie.write.lock.storage.renew.interval.secs", "400", "below"),
])
def test_bad_values_name_the_key(key, value, said):
    with pytest.raises(HoodieConfigError, match=key.replace(".", r"\.")) as info:
        resolve_concurrency_config({key: value})
    assert said in str(info.value)


def test_zookeeper_options():
    base = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control", "hoodie.write.lock.provider": "zookeeper",
            "hoodie.write.lock.zookeeper.url": "zk1", "hoodie.write.lock.zookeeper.port": "2181"}
    with pytest.raises(HoodieConfigError, match="hoodie.write.lock.zookeeper.base_path"):
        resolve_concurrency_config(base)
    zk = resolve_concurrency_config({**base, "hoodie.write.lock.zookeeper.base_path": "/hudi"}, "trips").zookeeper
    assert (zk.url, zk.port, zk.base_path, zk.lock_key, zk.session_timeout_ms, zk.connection_timeout_ms) == (
        "zk1", 2181, "/hudi", "trips", 60_000, 15_000)


def test_heartbeat_expiry(tmp_path):
    storage = LocalStorage(str(tmp_path))
    assert is_heartbeat_expired(storage, "20260101000000000", 120_000)  # no file: its writer never beat
    write_heartbeat(storage, "20260101000000000")
    beat = storage.stat(heartbeat_path("20260101000000000")).modified_ns // 1_000_000
    assert not is_heartbeat_expired(storage, "20260101000000000", 2_000, now_ms=beat + 2_000)
    assert is_heartbeat_expired(storage, "20260101000000000", 2_000, now_ms=beat + 2_001)


def test_a_write_beats_until_it_commits(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    session = start_write(open_storage(path), {**OPTS, "hoodie.client.heartbeat.interval_in_ms": "1000"},
                          batch([("b", 1, "x", 2)]).schema)
    storage = session.table.storage
    first = storage.stat(heartbeat_path(session.instant_time)).modified_ns
    time.sleep(2.5)
    assert storage.stat(heartbeat_path(session.instant_time)).modified_ns > first  # the thread beat again
    session.commit([])
    assert storage.stat(heartbeat_path(session.instant_time)) is None


def test_a_live_pending_write_is_not_rolled_back(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    slow = start_write(open_storage(path), OPTS, batch([("b", 1, "y", 2)]).schema)
    write_local(path, batch([("c", 1, "x", 3)]), OPTS)
    storage = open_storage(path)
    pending = Table.load(storage).timeline.pending()
    assert [i.timestamp for i in pending] == [slow.instant_time]
    slow.abort()
    assert Table.load(storage).timeline.pending() == []


def _write(session, rows):
    """The local engine's work for a started session: write ``rows`` and commit; the committed instant."""
    return session.run(lambda s: _run(s, batch(rows))).instant


def _start_two(path, options, first_rows, second_rows):
    """Two writes of one table started before either commits (two writers of one process)."""
    one = start_write(open_storage(path), options, batch(first_rows).schema)
    two = start_write(open_storage(path), options, batch(second_rows).schema)
    return one, two


@pytest.mark.parametrize("options", [OPTS, OCC], ids=["single_writer", "occ"])
def test_writes_of_the_same_file_group_conflict(tmp_path, options):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "y", 1)]), options)
    before = table_listing(path)
    one, two = _start_two(path, options, [("a", 2, "x", 2)], [("a", 3, "x", 3)])
    won = _write(one, [("a", 2, "x", 2)])
    with pytest.raises(HoodieWriteConflictError) as info:
        _write(two, [("a", 3, "x", 3)])
    message = str(info.value)
    assert f"Write {two.instant_time} conflicts with commit {won}" in message and "x/" in message
    assert ("optimistic_concurrency_control" in message) == (options is OPTS)  # single_writer names the way out
    assert read(path) == [("a", 2), ("b", 1)]
    storage = open_storage(path)
    timeline = Table.load(storage).timeline
    assert timeline.pending() == [] and two.instant_time not in {i.timestamp for i in timeline.instants}
    left = table_listing(path) - before
    # besides the winner's files: instant files, the lock, and the metadata table's record of both commits
    assert all(p.startswith((".hoodie/timeline", ".hoodie/2", ".hoodie/.lock", ".hoodie/metadata/")) or won in p
               for p in left), left


def test_writes_of_disjoint_file_groups_both_commit(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "y", 1)]), OCC)
    one, two = _start_two(path, OCC, [("a", 2, "x", 2)], [("b", 2, "y", 2)])
    _write(one, [("a", 2, "x", 2)])
    _write(two, [("b", 2, "y", 2)])
    assert read(path) == [("a", 2), ("b", 2)]


def test_in_process_lock_times_out_with_its_name(tmp_path):
    config = resolve_concurrency_config({**OCC, **FAST_LOCK})
    holder = LockManager(InProcessLockProvider(str(tmp_path)), config)
    holder.lock()
    try:
        started = time.monotonic()
        with pytest.raises(LockTimeoutError, match="in-process lock of .* in 3 attempts of 100 ms"):
            LockManager(InProcessLockProvider(str(tmp_path) + "/"), config).lock()
        assert time.monotonic() - started < 2
    finally:
        holder.unlock()
    LockManager(InProcessLockProvider(str(tmp_path)), config).lock()  # free again


def test_storage_lock_names_its_holder_and_is_taken_over_after_expiry(tmp_path):
    storage = LocalStorage(str(tmp_path))
    holder = StorageLockProvider(storage, validity_s=2.0, renew_interval_s=0.3)
    assert holder.try_lock(0)
    other = StorageLockProvider(storage, validity_s=2.0, renew_interval_s=0.3)
    config = ConcurrencyConfig(lock_wait_ms=200, lock_num_retries=1, lock_retry_wait_ms=100)
    with pytest.raises(LockTimeoutError, match=f"held by {holder.owner}"):
        LockManager(other, config).lock()
    time.sleep(2.5)
    assert not other.try_lock(0)  # renewed: still held
    holder._stop_renewal.set()  # the holder stops renewing (as a hung or killed process would)
    holder._renewal.join()
    assert other.try_lock(6.0)  # taken over once the last lease expired
    holder.unlock()  # too late: its release fails, the lock stays with the taker
    assert other.current().owner == other.owner and other.current().state == "held"
    other.unlock()
    assert other.current().state == "released"


def test_storage_lock_threads_never_lose_an_increment(tmp_path):
    storage = LocalStorage(str(tmp_path))
    counter = "counter"
    storage.write(counter, b"0")

    def rounds():
        provider = StorageLockProvider(storage, validity_s=30, renew_interval_s=10)
        for _ in range(15):
            assert provider.try_lock(30)
            value = int(storage.read(counter))
            storage.write(counter, str(value + 1).encode())
            provider.unlock()

    threads = [threading.Thread(target=rounds) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert int(storage.read(counter)) == 45


@pytest.mark.parametrize("policy", ["EAGER", "LAZY"])
def test_the_cleaner_rolls_back_failed_writes_under_lazy(tmp_path, policy):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    live = start_write(open_storage(path), OPTS, batch([("c", 1, "x", 3)]).schema)
    dead = start_write(open_storage(path), OPTS, batch([("b", 1, "x", 2)]).schema)
    dead.transactions.stop_heartbeat()  # the writer dies; no writer starts after it
    HoodieTable(path).clean(**{"hoodie.cleaner.policy.failed.writes": policy})
    storage = open_storage(path)
    pending = {i.timestamp for i in Table.load(storage).timeline.pending()}
    assert pending == ({live.instant_time} if policy == "LAZY" else {live.instant_time, dead.instant_time})
    live.abort()


def test_table_services_take_the_lock_under_occ(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), OCC)
    holder = InProcessLockProvider(open_storage(path).uri)
    assert holder.try_lock(0)
    try:
        with pytest.raises(LockTimeoutError):
            HoodieTable(path).clean(**OCC, **FAST_LOCK)
        HoodieTable(path).clean(**OPTS)  # a single writer takes no lock
    finally:
        holder.unlock()
    HoodieTable(path).clean(**OCC, **FAST_LOCK)


@pytest.mark.parametrize("retries", [0, 1])
def test_a_conflicting_write_runs_again_when_retries_allow(tmp_path, retries):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), OCC)
    attempts = []

    def engine(session):
        attempts.append(session.instant_time)
        if len(attempts) == 1:  # another writer updates the same file group meanwhile, and commits first
            write_local(path, batch([("a", 2, "x", 2)]), OCC)
        return _run(session, batch([("b", 3, "x", 3)]))

    options = {**OCC, "hoodie.write.num.retries.on.conflict": str(retries)}
    storage = open_storage(path)
    if retries == 0:
        with pytest.raises(HoodieWriteConflictError):
            run_write(storage, options, batch([("b", 3, "x", 3)]).schema, engine)
        assert read(path) == [("a", 2)]
    else:
        committed = run_write(storage, options, batch([("b", 3, "x", 3)]).schema, engine).instant
        assert committed == attempts[-1] and len(attempts) == 2
        assert read(path) == [("a", 2), ("b", 3)]


def test_a_session_travels_to_tasks_without_its_heartbeat(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), OCC)
    session = start_write(open_storage(path), OCC, batch([("b", 1, "x", 2)]).schema)
    copy = pickle.loads(pickle.dumps(session))  # what Spark does to a data source writer holding it
    assert copy.instant_time == session.instant_time and copy.transactions._heartbeat is None
    session.abort()


def test_storage_lock_keeps_few_generation_files(tmp_path):
    storage = LocalStorage(str(tmp_path))
    provider = StorageLockProvider(storage, validity_s=30, renew_interval_s=10)
    for _ in range(50):  # 100 generations: a lock and a release each
        assert provider.try_lock(1)
        provider.unlock()
    names = storage.list_names(".hoodie/.lock")
    assert len(names) <= 2 * KEEP and provider.current().generation == 100 and provider.current().state == "released"


def test_an_occ_write_that_cannot_get_the_lock_fails_quickly_and_changes_nothing(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), OCC)
    before = table_listing(path)
    holder = InProcessLockProvider(open_storage(path).uri)
    assert holder.try_lock(0)
    try:
        started = time.monotonic()
        with pytest.raises(LockTimeoutError, match="hoodie.write.lock.wait_time_ms"):
            write_local(path, batch([("b", 1, "x", 2)]), {**OCC, **FAST_LOCK})
        assert time.monotonic() - started < 2
    finally:
        holder.unlock()
    assert table_listing(path) == before


def test_an_occ_write_whose_commit_cannot_get_the_lock_rolls_itself_back(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), OCC)
    session = start_write(open_storage(path), {**OCC, **FAST_LOCK}, batch([("b", 1, "x", 2)]).schema)
    holder = InProcessLockProvider(open_storage(path).uri)
    assert holder.try_lock(0)
    try:
        with pytest.raises(LockTimeoutError):
            _write(session, [("b", 1, "x", 2)])
    finally:
        holder.unlock()
    storage = open_storage(path)
    timeline = Table.load(storage).timeline
    assert timeline.pending() == [] and session.instant_time not in {i.timestamp for i in timeline.completed()}
    assert storage.list_tree(".hoodie/.heartbeat") == [] and read(path) == [("a", 1)]


def test_a_lock_release_failing_after_the_commit_keeps_the_commit(tmp_path, monkeypatch):
    """The completed instant is the commit point: a failure after it (here, releasing the lock) must not
    roll the write back, which would delete the files of a completed commit."""
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), OCC)

    session = start_write(open_storage(path), OCC, batch([("b", 1, "x", 2)]).schema)
    original = InProcessLockProvider.unlock

    def release_fails(self):
        original(self)
        raise LockError("the lock service went away")

    monkeypatch.setattr(InProcessLockProvider, "unlock", release_fails)
    instant = _write(session, [("b", 1, "x", 2)])
    monkeypatch.undo()
    assert read(path) == [("a", 1), ("b", 2)]
    storage = open_storage(path)
    assert instant in {i.timestamp for i in Table.load(storage).timeline.completed()}


def test_a_pending_rollback_finished_by_another_writer_meanwhile_is_no_error(tmp_path):
    """A writer finishing a pending rollback loses the race to complete it (its own writer, aborting,
    completed it first): the write goes on."""
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    dead = start_write(open_storage(path), OPTS, batch([("b", 1, "x", 2)]).schema)
    storage = open_storage(path)
    stale = Table.load(storage)  # lists the write as pending
    dead.abort()  # rolls it back: a completed rollback instant
    rolled = [i for i in Table.load(storage).timeline.instants if i.action == "rollback"]
    # the stale view sees that rollback as pending (its requested and inflight files exist)
    pending_view = replace(stale, timeline=replace(
        stale.timeline, instants=(*stale.timeline.instants, rolled[0].with_state(State.INFLIGHT))))
    assert rollback_failed_writes(pending_view, 120_000) == []
