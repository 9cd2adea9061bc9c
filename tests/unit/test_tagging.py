"""Tagging with bloom filters that answer "maybe" for almost every key: a key that one filter claims
goes straight to that file group (a copy-on-write merge matches keys exactly; a merge-on-read log
record of a key the base file lacks is read as a record of the group), stored keys are read only
for keys several filters claim. Either way updates replace their row and new keys land once."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi import HudiTableBuilder

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.client.write_client import start_write
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.index import bloom_probe, lookup, lookup_index
from hoodie_datasource.index.bloom_probe import positives
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.write import record_keys
from tests.unit.small_tables import batch
from tests.unit.small_tables import read_pairs as read

# a 1-entry SIMPLE filter at fpp 0.9 has a handful of bits: nearly every key is a "maybe"
LEAKY = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
         "hoodie.bloom.index.filter.type": "SIMPLE", "hoodie.index.bloom.num_entries": "1",
         "hoodie.index.bloom.fpp": "0.9", "hoodie.parquet.small.file.limit": "0"}


def _key_reads(monkeypatch) -> list[int]:
    reads: list[int] = []
    real = lookup.stored_key_check

    def counting(storage, base_file, keys, info=None):
        reads.append(len(keys))
        return real(storage, base_file, keys, info)

    monkeypatch.setattr(lookup, "stored_key_check", counting)
    return reads


def _totals(path: str) -> tuple[int, int, int]:
    table = HoodieTable(path)
    stats = [s for ss in table.commit_metadata(table.latest_commit())["partitionToWriteStats"].values() for s in ss]
    return tuple(sum(int(s.get(k) or 0) for s in stats) for k in ("numUpdateWrites", "numInserts", "numDeletes"))


def _read_by_hudi_rs(path: str) -> list[tuple[str, int]]:
    data = pa.Table.from_batches(HudiTableBuilder.from_base_uri(path).build().read())
    return sorted(zip(data.column("id").to_pylist(), data.column("v").to_pylist()))


def _assert_totals(path: str, table_type: str, updates: int, inserts: int) -> None:
    updated, inserted, _ = _totals(path)
    if table_type == "COPY_ON_WRITE":
        assert (updated, inserted) == (updates, inserts)
    else:  # log records of new keys a filter falsely claimed count as updates of that file group
        assert updated + inserted == updates + inserts and updated >= updates


def _three_overlapping_file_groups(path: str, options: dict) -> dict[str, int]:
    """Keys k000..k299 over three file groups of partition x, every one spanning k000..k29x."""
    expected = {}
    for shift in range(3):
        rows = [(f"k{i:03d}", 1, "x", i) for i in range(shift, 300, 3)]
        write_local(path, batch(rows), {**options, "operation": "insert"})
        expected.update({k: v for k, _, _, v in rows})
    return expected


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_false_positives_and_ambiguous_keys_land_once(tmp_path, monkeypatch, table_type):
    path = str(tmp_path / "t")
    options = {**LEAKY, "hoodie.datasource.write.table.type": table_type}
    expected = _three_overlapping_file_groups(path, options)
    assert len([n for n in os.listdir(os.path.join(path, "x")) if n.endswith(".parquet")]) == 3
    reads = _key_reads(monkeypatch)
    updates = [(f"k{i:03d}", 2, "x", 1000 + i) for i in range(0, 300, 7)]
    inserts = [(f"k{i:03d}n", 2, "x", 5000 + i) for i in range(0, 290, 11)]  # inside every file's key range
    write_local(path, batch(updates + inserts), options)
    expected.update({k: v for k, _, _, v in updates + inserts})
    assert read(path) == sorted(expected.items())
    _assert_totals(path, table_type, len(updates), len(inserts))
    # three filters claim almost every key, so almost every key is checked against stored keys
    assert sum(reads) >= len(updates + inserts)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_key_one_filter_claims_needs_no_key_read(tmp_path, monkeypatch, table_type):
    path = str(tmp_path / "t")
    options = {**LEAKY, "hoodie.datasource.write.table.type": table_type}
    write_local(path, batch([(f"k{i:03d}", 1, "x", i) for i in range(100)]), options)
    reads = _key_reads(monkeypatch)
    updates = [(f"k{i:03d}", 2, "x", 1000 + i) for i in range(0, 100, 9)]
    inserts = [(f"k{i:03d}n", 2, "x", 5000 + i) for i in range(0, 90, 13)]
    write_local(path, batch(updates + inserts), options)
    expected = {f"k{i:03d}": i for i in range(100)} | {k: v for k, _, _, v in updates + inserts}
    assert read(path) == sorted(expected.items())
    assert reads == []
    _assert_totals(path, table_type, len(updates), len(inserts))
    assert _read_by_hudi_rs(path) == sorted(expected.items())  # log-only records are records to Hudi too
    # a new key that went into a log as a false positive is found there again, and updated in place
    write_local(path, batch([(k, 3, "x", -v) for k, _, _, v in inserts]), options)
    expected.update({k: -v for k, _, _, v in inserts})
    assert read(path) == sorted(expected.items())
    # deletes of unknown keys the filter claims change nothing; a known one goes
    write_local(path, batch([("k001n", 3, "x", 0), ("k002", 3, "x", 0)]), {**options, "operation": "delete"})
    del expected["k002"]
    assert read(path) == sorted(expected.items())
    if table_type == "MERGE_ON_READ":  # compaction keeps every log-only record, exactly once
        HoodieTable(path).compact()
        assert read(path) == sorted(expected.items())
        assert read(path, query_type="read_optimized") == sorted(expected.items())


def test_confirm_checks_only_keys_several_filters_claim(tmp_path, monkeypatch):
    path = str(tmp_path / "t")
    _three_overlapping_file_groups(path, LEAKY)
    files = sorted((f"x/{n}" for n in os.listdir(os.path.join(path, "x")) if n.endswith(".parquet")),
                   key=lambda f: "k003" not in pq.read_table(os.path.join(path, f)).column("id").to_pylist())
    reads = _key_reads(monkeypatch)
    storage = open_storage(path)
    # "k003" (stored in files[0]) is a candidate of files 0 and 1, "zzz" (stored nowhere) only of file 2
    pair_key, pair_file = np.array([0, 0, 1]), np.array([0, 1, 2])
    keys = pa.array(["k003", "zzz"])
    found, counts = lookup.confirm_pairs(storage, keys, pair_key, pair_file, files, use_bloom=False, claims=pair_key)
    assert sorted(reads) == [1, 1, 1]  # no filter used: every candidate is checked
    assert found.tolist() == [True, False, False] and counts.bloom_probes == 0 and counts.exact_checks == 3
    reads.clear()
    found, counts = lookup.confirm_pairs(storage, keys, pair_key, pair_file, files, use_bloom=True, claims=pair_key)
    assert sorted(reads) == [1, 1]  # k003 in files 0 and 1; zzz goes to file 2 unchecked
    assert found.tolist() == [True, False, True]
    assert (counts.bloom_probes, counts.bloom_positives, counts.exact_checks, counts.false_positives_checked) == (
        3, 3, 2, 1)
    reads.clear()
    exact, counts = lookup.confirm_pairs(storage, keys, pair_key, pair_file, files, use_bloom=True)
    assert exact.tolist() == [True, False, False] and counts.false_positives_checked == 2


def test_base_file_reads_are_remembered_until_the_file_changes(tmp_path, monkeypatch):
    from hoodie_datasource.index import base_file_cache

    path = str(tmp_path / "t")
    options = {**LEAKY, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    expected = _three_overlapping_file_groups(path, options)
    files = sorted(f"x/{n}" for n in os.listdir(os.path.join(path, "x")) if n.endswith(".parquet"))
    reads = []
    real = base_file_cache.read_parquet
    monkeypatch.setattr(base_file_cache, "read_parquet", lambda *a, **k: reads.append(a[1]) or real(*a, **k))
    for version in (2, 3):  # merge-on-read: both upserts tag against the same base files
        # every filter claims these keys, so each file's stored keys are read, the first time only
        write_local(path, batch([("k005", version, "x", version), ("k070", version, "x", version)]), options)
    assert sorted(reads) == files
    assert read(path) == sorted((expected | {"k005": 3, "k070": 3}).items())
    storage, file = open_storage(path), files[0]

    bloom = base_file_cache.bloom_filter(storage, file)
    assert bloom.might_contain(["k001"]).all()
    fresh = [f"z{i}" for i in range(50)]
    before = bloom.might_contain(fresh).tolist()
    bloom.add_keys(fresh)  # a copy: the remembered filter is unchanged
    assert base_file_cache.bloom_filter(storage, file).might_contain(fresh).tolist() == before

    # the same path with other content is read again
    pq.write_table(pa.table({"_hoodie_record_key": ["only"]}), os.path.join(path, file))
    assert base_file_cache.stored_keys(storage, file).to_pylist() == ["only"]
    assert base_file_cache.bloom_filter(storage, file) is None


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_records_with_struct_and_list_columns_are_tagged_and_updated(tmp_path, table_type):
    """Tagging joins only the keys: pyarrow's join cannot carry struct or list columns."""
    path = str(tmp_path / "t")
    opts = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
            "storage.type": table_type}
    point = pa.struct([("x", pa.int64()), ("y", pa.int64())])

    def rows(keys, ts):
        return pa.table({"id": keys, "ts": [ts] * len(keys), "p": ["a"] * len(keys),
                         "at": pa.array([{"x": ts, "y": i} for i, _ in enumerate(keys)], point),
                         "tags": pa.array([[f"t{ts}"] * (i + 1) for i, _ in enumerate(keys)], pa.list_(pa.string()))})

    write_local(path, rows(["k1", "k2"], 1), opts)
    write_local(path, rows(["k2", "k3"], 2), opts)
    out = read_table(path, ReadConfig()).sort_by("id")
    assert out.column("id").to_pylist() == ["k1", "k2", "k3"]
    assert out.column("at").to_pylist() == [{"x": 1, "y": 0}, {"x": 2, "y": 0}, {"x": 2, "y": 1}]
    assert out.column("tags").to_pylist() == [["t1"], ["t2"], ["t2", "t2"]]


@pytest.mark.parametrize("index", ["GLOBAL_BLOOM", "GLOBAL_SIMPLE"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_key_moved_away_and_back_under_a_global_index_is_held_once(tmp_path, table_type, index):
    """Merge-on-read: a key that left a partition stays in that partition's base file, deleted by a log block,
    until compaction. Moved back, it is in two base files; the index must take the file group that holds
    it (here the new partition's), delete it there and update the old one, never leave both."""
    path = str(tmp_path / "t")
    opts = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.index.type": index}
    for ts, part in enumerate(["a", "b", "a", "b", "c"], start=1):
        write_local(path, pa.table({"id": ["k0", "k1"], "p": [part, "a"], "ts": [ts, ts], "v": [ts, -ts]}), opts)
        got = read_table(path, ReadConfig())
        rows = sorted(zip(got.column("id").to_pylist(), got.column("p").to_pylist(), got.column("v").to_pylist()))
        assert rows == [("k0", part, ts), ("k1", "a", -ts)], (ts, part)
    logs = [n for n in os.listdir(os.path.join(path, "a")) if ".log." in n]
    assert bool(logs) == (table_type == "MERGE_ON_READ"), logs  # merge-on-read: the deletes are log blocks


@pytest.mark.parametrize(("index", "option"), [("GLOBAL_BLOOM", "hoodie.bloom.index.update.partition.path"),
                                               ("GLOBAL_SIMPLE", "hoodie.simple.index.update.partition.path")])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_global_index_keeping_keys_in_their_old_partition_updates_them_there(tmp_path, index, option, table_type):
    """hoodie.bloom.index.update.partition.path=false (GLOBAL_BLOOM) or hoodie.simple.index.update.partition.path
    =false (GLOBAL_SIMPLE): a key written with another partition is updated where it is stored, its record's
    fields as given (Hudi's HoodieIndexUtils.tagGlobalLocationBackToRecords); the other global index's option does
    not apply, as in Hudi."""
    path = str(tmp_path / "t")
    opts = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
            "hoodie.index.type": index, "hoodie.datasource.write.table.type": table_type}
    other = ({"hoodie.bloom.index.update.partition.path", "hoodie.simple.index.update.partition.path"} - {option}).pop()
    write_local(path, pa.table({"id": ["k0", "k1"], "p": ["a", "a"], "ts": [1, 1], "v": [1, 2]}), opts)
    write_local(path, pa.table({"id": ["k0"], "p": ["b"], "ts": [2], "v": [3]}), {**opts, option: "false"})
    write_local(path, pa.table({"id": ["k1"], "p": ["b"], "ts": [2], "v": [4]}), {**opts, other: "false"})
    got = read_table(path, ReadConfig())
    rows = sorted(zip(*(got.column(c).to_pylist() for c in ("id", "_hoodie_partition_path", "p", "v"))))
    assert rows == [("k0", "a", "b", 3), ("k1", "b", "b", 4)]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_global_simple_checks_every_partitions_stored_keys_without_bloom_filters(tmp_path, monkeypatch, table_type):
    """GLOBAL_SIMPLE (Hudi's HoodieGlobalSimpleIndex): every incoming key is checked against the stored keys of the
    latest base files of every partition, whose footers carry no bloom filter here
    (hoodie.parquet.bloom.filter.enabled=false) and none is read: a key written with another partition moves
    there, once in the table, and a new key stays new. hudi-rs reads the same rows."""
    path = str(tmp_path / "t")
    opts = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.index.type": "GLOBAL_SIMPLE",
            "hoodie.parquet.bloom.filter.enabled": "false", "hoodie.parquet.small.file.limit": "0"}
    write_local(path, batch([("k1", 1, "x", 1), ("k2", 1, "x", 2), ("k3", 1, "y", 3)]), opts)
    bloom_reads = []
    real = lookup.base_file_cache.bloom_filter
    monkeypatch.setattr(lookup.base_file_cache, "bloom_filter",
                        lambda *a, **k: bloom_reads.append(a[1]) or real(*a, **k))
    reads = _key_reads(monkeypatch)
    t2 = write_local(path, batch([("k1", 2, "y", 10), ("k3", 2, "y", 30), ("k4", 2, "x", 40)]), opts)
    assert bloom_reads == [] and sum(reads) >= 2  # both files' stored keys, no filter
    got = read_table(path, ReadConfig())
    rows = sorted(zip(got.column("id").to_pylist(), got.column("p").to_pylist(), got.column("v").to_pylist()))
    assert rows == [("k1", "y", 10), ("k2", "x", 2), ("k3", "y", 30), ("k4", "x", 40)]
    counts = {k.removeprefix("hoodie.stage.index."): int(v) for k, v in
              HoodieTable(path).commit_metadata(t2)["extraMetadata"].items() if k.startswith("hoodie.stage.index.")}
    assert (counts["keys"], counts["files"], counts["bloom_probes"], counts["found"]) == (3, 2, 0, 2)
    data = pa.Table.from_batches(HudiTableBuilder.from_base_uri(path).build().read())
    assert sorted(zip(data.column("id").to_pylist(), data.column("p").to_pylist(), data.column("v").to_pylist())) \
        == rows


@pytest.mark.parametrize("ordered", [False, True], ids=["random-keys", "ordered-keys"])
def test_probing_whole_partitions_tags_as_the_pairs_do(tmp_path, monkeypatch, ordered):
    """A partition-local bloom index probes each key against all its partition's filters at once when the
    key ranges prune little (random keys), and keeps the (key, file) pairs when they prune most (ordered
    keys): either way every stored key is tagged with the file group that holds it, every new key with
    none, and the index counts are those of the pairs alone."""
    path = str(tmp_path / "t")
    options = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
               "hoodie.index.bloom.num_entries": "20", "hoodie.index.bloom.fpp": "0.2",
               "hoodie.parquet.small.file.limit": "0"}
    rng = np.random.default_rng(9)
    ids = [f"{i:04d}" if ordered else f"{rng.integers(1 << 48):012x}" for i in range(600)]
    for group in range(4):  # four file groups in each of x and y
        write_local(path, batch([(k, 1, "xy"[i % 2], i) for i, k in enumerate(ids) if i // 150 == group]),
                    {**options, "operation": "insert"})
    stored = {}
    for partition in "xy":
        for name in os.listdir(os.path.join(path, partition)):
            if name.endswith(".parquet"):
                keys = pq.read_table(os.path.join(path, partition, name)).column("id").to_pylist()
                stored |= dict.fromkeys(keys, name.split("_")[0])  # a base file is <file id>_<token>_<instant>
    assert len(stored) == 600
    updates = [(k, 2, "xy"[ids.index(k) % 2], 0) for k in ids[::4]]
    fresh = [(f"{i:04d}n" if ordered else f"{rng.integers(1 << 48):012x}", 2, "xyz"[i % 3], 0) for i in range(200)]
    records = batch(updates + fresh)
    storage = open_storage(path)
    session = start_write(storage, {**options, "operation": "upsert"}, records.schema)
    try:
        keyed = record_keys.keyed(records, session.config)
        writer = session.record_writer()
        files = writer.key_ranges(["x", "y", "z"])
        probed = []
        monkeypatch.setattr(bloom_probe, "positives", lambda *a: probed.append(1) or positives(*a))
        tagged, counts = session.index.tag(keyed, files, writer.scope)
        monkeypatch.setattr(lookup_index, "partition_positives", lambda *a: None)
        by_pairs, pair_counts = session.index.tag(keyed, files, writer.scope)
    finally:
        session.abort()
    assert probed == ([] if ordered else [1])
    assert tagged.equals(by_pairs) and counts == pair_counts
    located = dict(zip(tagged.column("id").to_pylist(), tagged.column("_hoodie_file_id").to_pylist()))
    assert {k: located[k] for k, *_ in updates} == {k: stored[k] for k, *_ in updates}
    # a new key goes nowhere, or unchecked to the one file of its partition whose filter claims it
    claimed = {k: located[k] for k, _, p, _ in fresh if located[k] is not None}
    assert len(claimed) < len(fresh) and all(
        f.file_id == claimed[k] and f.partition == p for k, _, p, _ in fresh if k in claimed
        for f in files if f.file_id == claimed[k])
    assert counts.found == len(updates) + len(claimed) and counts.bloom_positives >= counts.found
    if not ordered:  # keys several filters claim were checked against the stored keys
        assert counts.pairs - counts.candidates < counts.pairs // 2 and counts.false_positives_checked > 0
