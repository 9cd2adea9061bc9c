"""Clustering with the local engine (no JVM): the plan Hudi writes, execution into sorted file groups of the
target size that keep each record's commit metadata, what readers, incremental pulls, CDC, time travel and the
cleaner make of it, writers meeting a pending plan, and its failures."""

from __future__ import annotations

import io
import os

import fastavro
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hudi import HudiTableBuilder

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.services_config import ClusteringConfig, resolve_services_config
from hoodie_datasource.errors import ClusteringUpdateError, HoodieConfigError, HoodieWriteConflictError
from hoodie_datasource.services.clustering_layout import layout_order
from hoodie_datasource.services.clustering_plan import filter_partitions
from tests.unit.small_tables import batch
from tests.unit.small_tables import read_pairs as rows

BASE = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
        "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false",
        # every commit writes a file group of its own: small files to cluster
        "hoodie.parquet.small.file.limit": "0"}
COW = BASE
MOR = {**BASE, "storage.type": "MERGE_ON_READ"}


def small_commits(path, options, n=4, per=3, partitions=("x", "y")):
    instants = []
    for i in range(n):
        data = [(f"k{i}-{j}", i, partitions[j % len(partitions)], i * 100 + j) for j in range(per)]
        instants.append(write_local(path, batch(data), options))
    return instants


def base_files(path, partition):
    return sorted(n for n in os.listdir(os.path.join(path, partition)) if n.endswith(".parquet"))


def requested_plan(path, instant):
    with open(os.path.join(path, ".hoodie", f"{instant}.replacecommit.requested"), "rb") as f:
        return next(fastavro.reader(io.BytesIO(f.read())))


def snapshot(path, **options):
    table = HoodieTable(path).scan(**options)
    return table.sort_by("_hoodie_record_key")


@pytest.mark.parametrize("options", [COW, MOR], ids=["cow", "mor"])
def test_clustering_rewrites_small_file_groups_keeping_commit_metadata(tmp_path, options):
    path = str(tmp_path / "t")
    instants = small_commits(path, options)
    if options is MOR:  # a log on top of a slice: clustering merges it
        write_local(path, batch([("k0-0", 9, "x", -1)]), options)
        write_local(path, batch([("k1-0", 9, "y", 0)]), {**options, "operation": "delete"})
    before = snapshot(path)
    table = HoodieTable(path)
    scheduled = table.schedule_clustering()
    plan = requested_plan(path, scheduled)
    assert plan["operationType"] == "CLUSTER"
    groups = plan["clusteringPlan"]["inputGroups"]
    assert {s["partitionPath"] for g in groups for s in g["slices"]} == {"x", "y"}
    assert all(s["dataFilePath"].startswith(("file:", "/")) for g in groups for s in g["slices"])
    assert plan["clusteringPlan"]["strategy"]["strategyClassName"].endswith("SparkSortAndSizeExecutionStrategy")
    assert [p.instant_time for p in table.pending_clustering()] == [scheduled]
    assert table.run_clustering(scheduled) == scheduled
    after = snapshot(path)
    assert after.drop_columns(["_hoodie_file_name"]).equals(before.drop_columns(["_hoodie_file_name"]))
    meta = table.commit_metadata(scheduled)
    assert meta["operationType"] == "CLUSTER"
    replaced = meta["partitionToReplaceFileIds"]
    assert sum(len(ids) for ids in replaced.values()) == sum(len(g["slices"]) for g in groups)
    # one new file group a partition, holding every record of it
    assert {p: len(s) for p, s in meta["partitionToWriteStats"].items()} == {"x": 1, "y": 1}
    assert set(pc.unique(after.column("_hoodie_file_name")).to_pylist()) == {
        s["path"].rsplit("/", 1)[-1] for stats in meta["partitionToWriteStats"].values() for s in stats}
    # nothing changed at the clustering instant: an incremental pull over it alone returns no row, a pull over
    # everything every record once, a CDC query no change
    assert rows(path, query_type="incremental", begin_instant=instants[-1]) == ([] if options is COW else
                                                                              [("k0-0", -1)])
    last_write = [i for i in table.completed_commits() if i < scheduled][-1]
    assert rows(path, query_type="incremental", begin_instant=last_write) == []
    assert rows(path, query_type="incremental", begin_instant="000") == rows(path)
    assert rows(path, as_of_instant=instants[1]) == sorted(
        (f"k{i}-{j}", i * 100 + j) for i in range(2) for j in range(3))
    assert table.pending_clustering() == []
    assert table.schedule_clustering(**{"hoodie.clustering.plan.strategy.single.group.clustering.enabled":
                                        "false"}) is None
    by_hudi_rs = pa.Table.from_batches(HudiTableBuilder.from_base_uri(path).build().read())
    assert sorted(zip(by_hudi_rs.column("id").to_pylist(), by_hudi_rs.column("v").to_pylist())) == rows(path)


def test_cdc_query_shows_no_change_at_a_clustering(tmp_path):
    path = str(tmp_path / "t")
    options = {**COW, "hoodie.table.cdc.enabled": "true"}
    small_commits(path, options, n=2)
    done = HoodieTable(path).cluster()
    write_local(path, batch([("k0-1", 5, "y", 7)]), options)
    changes = HoodieTable(path).scan(**{"hoodie.datasource.query.type": "incremental",
                                        "hoodie.datasource.query.incremental.format": "cdc",
                                        "hoodie.datasource.read.begin.instanttime": "000"})
    ops = sorted(zip(changes.column("op").to_pylist(), changes.column("ts_ms").to_pylist()))
    assert [o for o, _ in ops].count("i") == 6 and [o for o, _ in ops].count("u") == 1 and len(ops) == 7
    assert done and all(t != done[0] for _, t in ops)


@pytest.mark.parametrize("strategy", ["linear", "z-order", "hilbert"])
def test_groups_are_sorted_and_written_in_files_of_the_target_size(tmp_path, strategy):
    path = str(tmp_path / "t")
    options = {**COW, "partitionpath.field": ""}
    rng = pa.array(range(20000))
    for i in range(4):
        part = pa.table({"id": pc.cast(pc.add(rng, i * 20000), pa.string()), "ts": pa.repeat(i, 20000),
                         "a": pc.multiply(pc.add(rng, i), 7919).cast(pa.int64()),
                         "b": pc.bit_wise_and(pc.multiply(rng, 104729), 4095).cast(pa.int64())})
        write_local(path, part, options)
    target = 1024 * 1024  # a file's footer holds a bloom filter of ~430 KB
    done = HoodieTable(path).cluster(**{"hoodie.clustering.plan.strategy.sort.columns": "a,b",
                                        "hoodie.layout.optimize.strategy": strategy,
                                        "hoodie.clustering.plan.strategy.target.file.max.bytes": str(target)})
    files = [os.path.join(path, n) for n in base_files(path, "") if done[0] in n]
    sizes = sorted(os.path.getsize(f) for f in files)
    assert len(files) >= 2 and all(s <= 1.3 * target for s in sizes)
    assert all(s >= 0.8 * target for s in sizes[1:])  # but the last of the group
    read = pa.concat_tables(pq.read_table(f) for f in sorted(files))
    assert read.num_rows == 80000
    if strategy == "linear":  # files in order, each sorted
        for f in files:
            t = pq.read_table(f, columns=["a", "b"])
            assert t.equals(t.sort_by([("a", "ascending"), ("b", "ascending")]))


def test_linear_order_puts_nulls_first_as_spark_does():
    records = pa.table({"a": pa.array([2, None, 1, None, 1], pa.int64()), "b": ["x", "y", None, "w", "v"]})
    order = layout_order(records, ("a", "b"), "linear")
    assert records.take(pa.array(order)).to_pylist() == [
        {"a": None, "b": "w"}, {"a": None, "b": "y"}, {"a": 1, "b": None}, {"a": 1, "b": "v"}, {"a": 2, "b": "x"}]


def test_partition_filter_modes():
    parts = ["2024/01/0%d" % d for d in range(1, 8)]
    recent = ClusteringConfig(partition_filter_mode="RECENT_DAYS", lookback_partitions=2, skip_latest_partitions=1)
    assert filter_partitions(parts, recent) == ["2024/01/06", "2024/01/05"]
    selected = ClusteringConfig(partition_filter_mode="SELECTED_PARTITIONS", begin_partition="2024/01/03",
                                end_partition="2024/01/04")
    assert filter_partitions(parts, selected) == ["2024/01/03", "2024/01/04"]
    assert filter_partitions(parts, ClusteringConfig(partition_filter_mode="DAY_ROLLING"), hour=2) == ["2024/01/03"]
    assert filter_partitions(parts, ClusteringConfig(partition_regex=r".*/0[12]")) == parts[:2]
    with pytest.raises(HoodieConfigError, match="valid values are: NONE, RECENT_DAYS"):
        resolve_services_config({"hoodie.clustering.plan.partition.filter.mode": "x"})


def test_groups_respect_the_byte_limits(tmp_path):
    path = str(tmp_path / "t")
    small_commits(path, COW, n=6, per=2, partitions=("x",))
    size = os.path.getsize(os.path.join(path, "x", base_files(path, "x")[0]))
    instant = HoodieTable(path).schedule_clustering(**{
        "hoodie.clustering.plan.strategy.max.bytes.per.group": str(size * 2 + size // 2),
        "hoodie.clustering.plan.strategy.max.num.groups": "2"})
    groups = requested_plan(path, instant)["clusteringPlan"]["inputGroups"]
    assert [len(g["slices"]) for g in groups] == [2, 2]
    # the planned file groups are held: the next plan takes the others only
    second = HoodieTable(path).schedule_clustering()
    taken = {s["fileId"] for g in groups for s in g["slices"]}
    again = {s["fileId"] for g in requested_plan(path, second)["clusteringPlan"]["inputGroups"] for s in g["slices"]}
    assert len(again) == 2 and not again & taken
    assert HoodieTable(path).schedule_clustering() is None  # every small file group is held
    assert sorted(HoodieTable(path).cluster()) == sorted([instant, second])
    assert rows(path) == sorted((f"k{i}-{j}", i * 100 + j) for i in range(6) for j in range(2))


@pytest.mark.parametrize("options", [COW, MOR], ids=["cow", "mor"])
def test_updates_to_a_pending_clustering_are_rejected_and_nothing_is_written(tmp_path, options):
    path = str(tmp_path / "t")
    small_commits(path, options, n=2)
    instant = HoodieTable(path).schedule_clustering()
    before = sorted(os.listdir(os.path.join(path, "x")))
    with pytest.raises(ClusteringUpdateError, match=f"{instant}.*SparkAllowUpdateStrategy"):
        write_local(path, batch([("k0-0", 5, "x", 1)]), options)
    assert sorted(os.listdir(os.path.join(path, "x"))) == before
    write_local(path, batch([("new", 5, "x", 1)]), options)  # an insert goes to a new file group
    HoodieTable(path).run_clustering(instant)
    write_local(path, batch([("k0-0", 6, "x", 2)]), options)  # once clustered, the update goes through
    assert ("k0-0", 2) in rows(path) and ("new", 1) in rows(path)


def test_allowed_updates_fail_the_clustering_or_roll_it_back(tmp_path):
    path = str(tmp_path / "t")
    small_commits(path, COW, n=2)
    allow = {**COW, "hoodie.clustering.updates.strategy": "SparkAllowUpdateStrategy"}
    instant = HoodieTable(path).schedule_clustering()
    write_local(path, batch([("k0-0", 5, "x", 1)]), allow)
    with pytest.raises(HoodieWriteConflictError, match=f"Clustering {instant} .* rolled back"):
        HoodieTable(path).run_clustering(instant)
    assert HoodieTable(path).pending_clustering() == [] and ("k0-0", 1) in rows(path)
    second = HoodieTable(path).schedule_clustering()
    write_local(path, batch([("k0-0", 6, "x", 2)]),
                {**allow, "hoodie.clustering.rollback.pending.replacecommit.on.conflict": "true"})
    assert HoodieTable(path).timeline().find(second) is None and ("k0-0", 2) in rows(path)


def test_a_failed_clustering_is_started_over_and_writers_leave_it_alone(tmp_path, monkeypatch):
    path = str(tmp_path / "t")
    small_commits(path, COW, n=2)
    before = rows(path)
    instant = HoodieTable(path).schedule_clustering()

    def crash(*args, **kwargs):
        raise RuntimeError("killed")

    monkeypatch.setattr("hoodie_datasource.services.clustering.fault_points.reach",
                        lambda point, **ctx: crash() if point == "mid_clustering" else None)
    with pytest.raises(RuntimeError, match="killed"):
        HoodieTable(path).run_clustering(instant)
    monkeypatch.undo()
    assert rows(path) == before
    # a writer's failed-writes rollback leaves the inflight clustering (its heartbeat expired) for its executor
    write_local(path, batch([("new", 5, "y", 1)]), COW)
    assert [p.state for p in HoodieTable(path).pending_clustering()] == ["INFLIGHT"]
    assert HoodieTable(path).cluster() == [instant]
    assert rows(path) == sorted(before + [("new", 1)])


def test_cleaner_and_archival_handle_replaced_file_groups(tmp_path):
    path = str(tmp_path / "t")
    options = {**COW, "hoodie.metadata.compact.max.delta.commits": "1"}  # archival goes as far as its compaction
    small_commits(path, options, n=3)
    instant = HoodieTable(path).cluster(**options)[0]
    replaced = HoodieTable(path).commit_metadata(instant)["partitionToReplaceFileIds"]
    for i in range(3):
        write_local(path, batch([(f"n{i}", 9, "z", i)]), options)
    HoodieTable(path).clean(**{**options, "hoodie.cleaner.commits.retained": "1"})
    left = {n.split("_")[0] for p in ("x", "y") for n in base_files(path, p)}
    assert not left & {f for ids in replaced.values() for f in ids}
    HoodieTable(path).archive(**{**options, "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"})
    assert instant in HoodieTable(path).timeline().archived  # with its plan (hoodieRequestedReplaceMetadata)
    assert len(rows(path)) == 12


def test_a_write_that_started_before_a_plan_conflicts_with_it(tmp_path, monkeypatch):
    """Hudi's SimpleConcurrentFileWritesConflictResolutionStrategy: a clustering scheduled after a write started,
    planning a file group the write updates, fails the write at its commit (nothing of it stays)."""
    path = str(tmp_path / "t")
    occ = {**COW, "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
           "hoodie.write.lock.provider": "storage"}
    small_commits(path, occ, n=2)
    before = rows(path)
    scheduled = []

    def schedule_meanwhile(point, **context):
        if point == "before_commit" and not scheduled:
            scheduled.append(HoodieTable(path).schedule_clustering(**occ))

    monkeypatch.setattr("hoodie_datasource.client.write_client.fault_points.reach", schedule_meanwhile)
    with pytest.raises(HoodieWriteConflictError, match="conflicts with replacecommit"):
        write_local(path, batch([("k0-0", 5, "x", 1)]), occ)
    monkeypatch.undo()
    assert rows(path) == before and HoodieTable(path).cluster(**occ) == scheduled


def test_writers_schedule_inline_and_another_process_runs_the_plan(tmp_path):
    """``hoodie.clustering.schedule.inline``: the writer schedules after every ``inline.max.commits`` commits and
    runs nothing; the executor (``hoodie.clustering.async.enabled``) schedules only after ``async.max.commits``."""
    path = str(tmp_path / "t")
    writer = {**COW, "hoodie.clustering.schedule.inline": "true", "hoodie.clustering.inline.max.commits": "2"}
    executor = {"hoodie.clustering.async.enabled": "true", "hoodie.clustering.async.max.commits": "3"}
    small_commits(path, writer, n=1)
    assert HoodieTable(path).pending_clustering() == []
    small_commits(path, writer, n=1)  # the second commit: a plan, not run
    planned = [p.instant_time for p in HoodieTable(path).pending_clustering()]
    assert len(planned) == 1 and HoodieTable(path).cluster(**executor) == planned
    assert HoodieTable(path).schedule_clustering(**executor) is None  # no commit since
    write_local(path, batch([("late", 1, "x", 1)]), COW)
    assert HoodieTable(path).schedule_clustering(**executor) is None  # one of three
    for i in range(2):
        write_local(path, batch([(f"later{i}", 1, "y", 1)]), COW)
    assert HoodieTable(path).schedule_clustering(**executor) is not None
