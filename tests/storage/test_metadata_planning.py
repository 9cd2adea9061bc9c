"""Planning from the metadata table, on S3 (moto's server, its requests counted from the access log): with
``hoodie.metadata.enable`` on (the default) and the ``files`` partition ready, every read (snapshot,
read-optimized, time travel, incremental, CDC; the local engine and Spark's ``format("hoodie")``), every write
operation into an existing table (upsert, insert, delete, insert_overwrite, bulk_insert; copy-on-write and
merge-on-read; both engines) and the table services that plan (compaction scheduling and execution, clean, inline
and through ``HoodieTable``) take the table's partitions and files from it: not one LIST request has a data
partition (or the table's root) for its prefix, only ``.hoodie/`` (the timeline, the markers, the metadata table).

Each step's rows are checked against a model of the table (the keys each write leaves, with their values) and
against the same read with ``hoodie.metadata.enable=false``, which lists storage, and which is seen to list data
partitions (so the count of data-partition listings is one that can fail).

And what a write costs the metadata table, counted on local disk (``tests.counting_storage``): it is opened once
under the table lock before the write's instant (its ``hoodie.properties`` read and its timeline listed once,
for the trust check, its own services, tagging and the write's file listing) and once at the commit point
(under the lock again, where another writer may have changed it), and each of its files is read once.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field

import pyarrow as pa
import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import resolve_read_config
from hoodie_datasource.hoodie_table import HoodieTable
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.spark import write_dag
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.instant import CLEAN, COMMIT
from tests.counting_storage import CountingStorage
from tests.object_stores import S3Bucket, Server

KEY = "t"
PARTITIONS = ("p0", "p1", "p2")
BASE = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
        "hoodie.table.cdc.enabled": "true",
        # a clean and (merge-on-read) a compaction fall within the few writes of a test
        "hoodie.cleaner.commits.retained": "3", "hoodie.compact.inline": "true",
        "hoodie.compact.inline.max.delta.commits": "3"}
SCHEMA = pa.schema([("k", pa.string()), ("ts", pa.int64()), ("v", pa.string()), ("p", pa.string())])


def data_listings(server: Server, mark: int) -> list[str]:
    """The prefixes of the LIST requests since ``mark`` that are not under the table's ``.hoodie/``: a data
    partition, or the table walked whole."""
    found = []
    for verb, path in server.request_log_since(mark):
        if verb == "LIST":
            prefix = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query).get("prefix", [""])[0]
            if not prefix.startswith(f"{KEY}/.hoodie/"):
                found.append(prefix)
    return found


def batch(keys: list[int], ts: int, partition: Callable[[int], str] = lambda i: PARTITIONS[i % 3]) -> pa.Table:
    return pa.table({"k": [f"k{i}" for i in keys], "ts": [ts] * len(keys), "v": [f"v{i}@{ts}" for i in keys],
                     "p": [partition(i) for i in keys]}, schema=SCHEMA)


@dataclass
class Model:
    """What the table holds after each write: key -> (value, partition)."""

    rows: dict[str, tuple[str, str]] = field(default_factory=dict)

    def apply(self, operation: str, data: pa.Table) -> None:
        keys, values, parts = (data.column(c).to_pylist() for c in ("k", "v", "p"))
        if operation == "delete":
            for key in keys:
                self.rows.pop(key, None)
            return
        if operation == "insert_overwrite":
            self.rows = {k: row for k, row in self.rows.items() if row[1] not in set(parts)}
        self.rows.update({k: (v, p) for k, v, p in zip(keys, values, parts)})

    def snapshot(self) -> list[tuple[str, str]]:
        return sorted((k, v) for k, (v, _) in self.rows.items())


# every write operation into the table the first bulk insert made: keys updated, new keys, a key deleted, a
# partition overwritten, and updates after it (ts grows with the step: the later write wins)
WRITES = [("upsert", [0, 1, 20]), ("insert", [21, 22]), ("delete", [2]), ("insert_overwrite", [30]),
          ("bulk_insert", [40, 41]), ("upsert", [4, 5, 40]), ("upsert", [7, 8, 21])]
FIRST = list(range(9))


def pairs(table: pa.Table) -> list[tuple[str, str]]:
    return sorted(zip(table.column("k").to_pylist(), table.column("v").to_pylist()))


def changes(table: pa.Table) -> list[tuple]:
    return sorted(tuple(row.values()) for row in table.to_pylist())


def completed(place: tuple[str, dict[str, str]], action: str | None = None) -> list[str]:
    timeline = Table.load(place[0], place[1]).timeline
    return [i.timestamp for i in timeline.instants if i.is_completed and (action is None or i.action == action)]


READS = {  # name -> read options, given the table's completed writes
    "snapshot": lambda writes: {},
    "read_optimized": lambda writes: {"hoodie.datasource.query.type": "read_optimized"},
    "time_travel": lambda writes: {"as.of.instant": writes[-2]},
    "incremental": lambda writes: {"hoodie.datasource.query.type": "incremental",
                                   "hoodie.datasource.read.begin.instanttime": writes[-3]},
    "cdc": lambda writes: {"hoodie.datasource.query.type": "incremental",
                           "hoodie.datasource.read.begin.instanttime": writes[-3],
                           "hoodie.datasource.query.incremental.format": "cdc"},
}


def check_services_ran(uri: str, options: dict[str, str], table_type: str) -> None:
    """The writes ran a clean that deleted files and, on merge-on-read, a compaction: their planning was counted."""
    assert completed((uri, options), CLEAN), "no clean ran"
    if table_type == "MERGE_ON_READ":
        assert completed((uri, options), COMMIT), "no compaction ran"


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_local_engine_plans_every_read_write_and_service_from_the_metadata_table(moto, s3_bucket: S3Bucket,
                                                                                 table_type):
    uri, model = s3_bucket.uri(KEY), Model()
    options = {**BASE, **s3_bucket.options, "hoodie.datasource.write.table.type": table_type}
    write_local(uri, batch(FIRST, 1), {**options, "hoodie.datasource.write.operation": "bulk_insert"})
    model.apply("bulk_insert", batch(FIRST, 1))
    for step, (operation, keys) in enumerate(WRITES, start=2):
        data = batch(keys, step)
        mark = moto.mark()
        write_local(uri, data, {**options, "hoodie.datasource.write.operation": operation})
        assert data_listings(moto, mark) == [], operation
        model.apply(operation, data)
    check_services_ran(uri, s3_bucket.options, table_type)

    writes = completed((uri, s3_bucket.options))
    listed_without = []
    for name, read in READS.items():
        mark = moto.mark()
        ours = read_table(uri, resolve_read_config(read(writes)), s3_bucket.options)
        assert data_listings(moto, mark) == [], name
        mark = moto.mark()
        listed = read_table(uri, resolve_read_config({**read(writes), "hoodie.metadata.enable": "false"}),
                            s3_bucket.options)
        listed_without += data_listings(moto, mark)
        compare = changes if name == "cdc" else pairs
        assert compare(ours) == compare(listed), name
        assert ours.num_rows > 0, name
        if name == "snapshot":
            assert pairs(ours) == model.snapshot()
    assert listed_without, "a read with hoodie.metadata.enable=false lists the data partitions"

    # the services run on their own (HoodieTable), each planning from the metadata table
    hoodie = HoodieTable(uri, s3_bucket.options)
    mark = moto.mark()
    if table_type == "MERGE_ON_READ":
        write_local(uri, batch([0, 3], 20), {**options, "hoodie.compact.inline": "false"})
        model.apply("upsert", batch([0, 3], 20))
        mark = moto.mark()
        scheduled = hoodie.schedule_compaction()
        assert scheduled is not None
        hoodie.run_compaction(scheduled)
    write_local(uri, batch([1, 4], 21), {**options, "hoodie.clean.automatic": "false"})
    model.apply("upsert", batch([1, 4], 21))
    assert hoodie.clean(**{"hoodie.cleaner.commits.retained": "1"}) is not None
    assert data_listings(moto, mark) == []
    assert pairs(hoodie.refresh().scan()) == model.snapshot()
    assert pairs(hoodie.scan(**{"hoodie.metadata.enable": "false"})) == model.snapshot()


@pytest.mark.spark
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_spark_plans_every_read_and_write_from_the_metadata_table(spark, moto, s3_bucket: S3Bucket, table_type,
                                                                  monkeypatch):
    uri, model = s3_bucket.uri(KEY), Model()
    options = {**BASE, **s3_bucket.options, "hoodie.datasource.write.table.type": table_type}

    def write(data: pa.Table, operation: str, mode: str = "append") -> None:
        spark.createDataFrame(data.to_pandas(), "k string, ts bigint, v string, p string").write.format("hoodie") \
            .options(**options, **{"hoodie.datasource.write.operation": operation}).mode(mode).save(uri)
        model.apply(operation, data)

    write(batch(FIRST, 1), "bulk_insert")
    for step, (operation, keys) in enumerate(WRITES, start=2):
        mark = moto.mark()
        write(batch(keys, step), operation)
        assert data_listings(moto, mark) == [], operation
    # a table of more files than the driver ships to the tasks of a write by partition: each task takes its
    # partitions' files from the metadata table itself
    monkeypatch.setattr(write_dag, "SHIPPED_LISTING_FILES", 0)
    mark = moto.mark()
    write(batch([0, 4, 8, 50], len(WRITES) + 2), "upsert")
    assert data_listings(moto, mark) == []
    monkeypatch.undo()
    check_services_ran(uri, s3_bucket.options, table_type)

    writes = completed((uri, s3_bucket.options))

    def rows(name: str, read: dict[str, str]) -> list[tuple]:
        df = spark.read.format("hoodie").options(**s3_bucket.options, **read).load(uri)
        if name == "cdc":
            return sorted(tuple(r) for r in df.collect())
        return sorted((r.k, r.v) for r in df.select("k", "v").collect())

    listed_without = []
    for name, read in READS.items():
        mark = moto.mark()
        ours = rows(name, read(writes))
        assert data_listings(moto, mark) == [], name
        mark = moto.mark()
        assert rows(name, {**read(writes), "hoodie.metadata.enable": "false"}) == ours, name
        listed_without += data_listings(moto, mark)
        assert ours, name
        if name == "snapshot":
            assert ours == model.snapshot()
    assert listed_without, "a read with hoodie.metadata.enable=false lists the data partitions"


METADATA = ".hoodie/metadata"


@pytest.mark.parametrize("index", ["BLOOM", "RECORD_INDEX"])
def test_a_write_opens_the_metadata_table_once_before_its_commit_point(tmp_path, index):
    path, model = str(tmp_path / "t"), Model()
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
               "hoodie.index.type": index, "hoodie.metadata.record.index.enable": "true"}
    for step, (operation, keys) in enumerate([("bulk_insert", FIRST), ("upsert", [0, 1, 20])], start=1):
        write_local(path, batch(keys, step), {**options, "hoodie.datasource.write.operation": operation})
        model.apply(operation, batch(keys, step))
    storage = CountingStorage(path)
    write_local(storage, batch([1, 4, 21], 3), {**options, "hoodie.datasource.write.operation": "upsert"})
    model.apply("upsert", batch([1, 4, 21], 3))

    # opened as the write starts and at its commit point: hoodie.properties read and the timeline listed twice
    assert storage.listed[f"{METADATA}/.hoodie"] == 2
    assert storage.reads[f"{METADATA}/.hoodie/hoodie.properties"] == 2
    # a partition read is listed by the write's reader, and each by the commit's deltacommit; each file read once
    read = {"files", "record_index"} if index == "RECORD_INDEX" else {"files"}
    assert {p: n for p, n in storage.listed.items() if p.startswith(f"{METADATA}/") and "/.hoodie" not in p} == \
        {f"{METADATA}/{p}": 2 if p in read else 1 for p in ("files", "record_index")}
    metadata_files = {f for f in storage.reads if f.startswith(METADATA) and "/.hoodie/" not in f}
    assert {f.split("/")[2] for f in metadata_files} == read
    assert all(storage.reads[f] == 1 for f in metadata_files), storage.reads
    assert [p for p in storage.listed if not p.startswith(".hoodie")] == []  # no data partition listed
    assert pairs(read_table(path, resolve_read_config({}))) == model.snapshot()
