"""The bloom filter against the footers Apache Hudi wrote: byte-identical serialization, the same
bits for the same keys, and Hadoop's MurmurHash2 (not MurmurHash3)."""

from __future__ import annotations

import glob
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie_datasource.errors import CorruptFileError, HoodieConfigError
from hoodie_datasource.index import bloom_probe
from hoodie_datasource.index.bloom_filter import (
    bloom_filter_from_footer,
    new_bloom_filter,
    read_bloom_filter,
)
from hoodie_datasource.index.murmur_hash import murmur2
from hoodie_datasource.storage.local import LocalStorage
from tests.conftest import unzip_table

TABLES_WITH_FOOTERS = [
    "sample_table/cow/v6_complexkeygen_hivestyle.zip",
    "sample_table/cow/v6_nonpartitioned.zip",
    "sample_table/cow/v6_simplekeygen_nonhivestyle.zip",
    "sample_table/cow/v8_nonpartitioned.zip",
    "quickstart_trips_table/mor/avro/v6_trips_8i1u.zip",
    "sample_table/mor/parquet/v6_nonpartitioned.zip",
]


def test_murmur2_known_values():
    assert murmur2(["1"]).tolist() == [1228156847]  # mmh3 would give -1810453357
    assert murmur2([""]).tolist() == [0]
    # every tail length, and a non-ASCII key whose tail bytes are >= 0x80 (Java sign-extends them)
    values = murmur2(["a", "ab", "abc", "abcd", "abcde", "é", "ééé"]).tolist()
    assert len(set(values)) == 7
    assert murmur2(["é"], seed=7).tolist() != murmur2(["é"]).tolist()


def test_hashing_keys_laid_side_by_side_leaves_them_unchanged():
    """Keys of one length lie side by side in their array's buffer, which hashing reads in place: hashing
    (and adding them to a filter) must not change them, for a single key or many, with or without tail."""
    for keys in (["abcd"], ["abcdefgh"], ["abcd", "efgh", "ijkl"], ["abcde", "fghij"]):
        array = pa.array(keys)
        first = murmur2(array).tolist()
        assert array.to_pylist() == keys and murmur2(array).tolist() == first
        bloom = new_bloom_filter("SIMPLE", 10, 0.01)
        bloom.add_keys(array)
        assert array.to_pylist() == keys and bloom.might_contain(array).all()


def _footer_files(tmp_path):
    found = []
    for i, name in enumerate(TABLES_WITH_FOOTERS):
        base = unzip_table(name, tmp_path / str(i))
        for path in glob.glob(os.path.join(base, "**", "*.parquet"), recursive=True):
            if "/.hoodie/" in path:
                continue
            meta = pq.read_metadata(path).metadata or {}
            if b"org.apache.hudi.bloomfilter" in meta:
                found.append((path, meta))
    return found


@pytest.mark.usefixtures("shared_tables")
def test_real_footers_round_trip_and_rebuild_byte_for_byte(tmp_path):
    files = _footer_files(tmp_path)
    assert len(files) >= 10
    for path, meta in files:
        serialized = meta[b"org.apache.hudi.bloomfilter"].decode()
        code = meta.get(b"hoodie_bloom_filter_type_code")
        stored = bloom_filter_from_footer(serialized, code.decode() if code else None)
        assert stored.serialize() == serialized, path
        # one file, not a dataset: pq.read_table of a path under byteField=1/ infers a hive partition column
        # (pyarrow 23 then fails to merge it with the file's own byteField column)
        keys = pq.ParquetFile(path).read(columns=["_hoodie_record_key"]).column(0)
        rebuilt = new_bloom_filter(stored.type_code)
        rebuilt.add_keys(keys)
        assert rebuilt.serialize() == serialized, path  # the same bits Hudi set for these keys
        assert stored.might_contain(keys).all()
        others = pa.array([f"not-a-key-{i}" for i in range(2000)])
        assert stored.might_contain(others).sum() == 0
        assert read_bloom_filter(LocalStorage(os.path.dirname(path)), os.path.basename(path)).serialize() == serialized


def test_sizing_simple_type_and_dynamic_growth():
    bloom = new_bloom_filter()
    assert (bloom.vector_size, bloom.num_hashes) == (2_587_966, 30)
    assert len(bloom.serialize()) == 431_380
    simple = new_bloom_filter("SIMPLE", 100, 0.01)
    simple.add_keys(["x", "y"])
    assert bloom_filter_from_footer(simple.serialize(), None).might_contain(["x", "y", "z"]).tolist() == [
        True, True, False]
    dynamic = new_bloom_filter("DYNAMIC_V0", num_entries=10, fpp=0.01, max_entries=30)
    keys = [f"k{i}" for i in range(45)]
    dynamic.add_keys(keys[:25])
    assert len(dynamic.rows) == 3  # a new row every 10 keys
    dynamic.add_keys(keys[25:])  # past max entries: rows are reused in turn
    assert len(dynamic.rows) == 3
    again = bloom_filter_from_footer(dynamic.serialize(), "DYNAMIC_V0")
    assert again.might_contain(keys).all() and again.serialize() == dynamic.serialize()


def test_probing_many_filters_at_once_answers_as_each_filter_does():
    """``bloom_probe.probe`` (keys hashed once, a round at a time, only while a filter may hold them)
    against ``might_contain`` of each filter: multi-row DYNAMIC_V0 filters, keys of several byte lengths
    (UTF-8 tails), filters that hold a key and filters that falsely claim one."""
    keys = pa.array([f"k{i}" for i in range(60)] + [f"ключ-{i:03d}" for i in range(40)] + ["", "x" * 37])
    filters = []
    for shift in range(3):
        bloom = new_bloom_filter("DYNAMIC_V0", num_entries=8, fpp=0.2, max_entries=24)
        bloom.add_keys(keys.to_pylist()[shift::3])
        filters.append(bloom)
    rng = np.random.default_rng(5)
    pair_key, pair_filter = rng.integers(0, len(keys), 400), rng.integers(0, len(filters), 400)
    expected = [bool(filters[f].might_contain(keys.take([k]))[0]) for k, f in zip(pair_key, pair_filter)]
    assert bloom_probe.probe(filters, keys, pair_key, pair_filter).tolist() == expected
    assert 0 < sum(expected) < len(expected) and len(filters[0].rows) == 3


def test_bad_type_and_truncated_filter():
    with pytest.raises(HoodieConfigError, match="valid values: SIMPLE, DYNAMIC_V0"):
        new_bloom_filter("CUCKOO")
    with pytest.raises(CorruptFileError):
        bloom_filter_from_footer(new_bloom_filter("SIMPLE", 100, 0.01).serialize()[:40], "SIMPLE")


def test_probing_in_chunks_finds_every_stored_key_and_answers_as_each_filter_does():
    """Filters of one geometry (SIMPLE and DYNAMIC_V0 of the same sizing, one DYNAMIC_V0 of more rows
    than a chunk holds) probed in chunks of byte-interleaved rows: grouped as partitions (keys paired
    with their partition's files, a partition spanning chunks), globally (keys paired with every
    file), as partitions less some pairs (key ranges took them off) and as partitions of one file each
    (chunks of a few rows: narrower lanes). Every key a filter stored is found there, and every pair is
    answered as ``might_contain`` answers it (random absent keys included)."""
    rng = np.random.default_rng(11)
    stored = [f"key-{i:05d}-{rng.integers(1 << 40):x}" for i in range(48 * 60 + 1400)]
    filters = []
    for f in range(48):
        kind = "SIMPLE" if f % 3 == 0 else "DYNAMIC_V0"
        bloom = new_bloom_filter(kind, num_entries=20, fpp=0.05, max_entries=20 * (1 + f % 4))
        bloom.add_keys(stored[f * 60:(f + 1) * 60])
        filters.append(bloom)
    wide = new_bloom_filter("DYNAMIC_V0", num_entries=20, fpp=0.05, max_entries=20 * 80)
    wide.add_keys(stored[2880:])
    filters.append(wide)
    assert len(wide.rows) > bloom_probe.CHUNK_ROWS and len({(b.num_hashes, b.vector_size) for b in filters}) == 1
    absent = [f"absent-{i}-{'x' * (i % 7)}" for i in range(2000)]
    keys = pa.array(stored + absent)
    owner = np.repeat(np.arange(len(filters) - 1), 60)
    owner = np.concatenate([owner, np.full(len(stored) - len(owner), len(filters) - 1),
                            rng.integers(0, len(filters), len(absent))])
    partition_of_filter = np.minimum(np.arange(len(filters)) // 12, 3)  # 4 partitions; the last has the wide filter
    partition_of_key = partition_of_filter[owner]
    members = [np.nonzero(partition_of_filter == p)[0] for p in range(4)]
    by_partition = [(k, f) for k in range(len(keys)) for f in members[partition_of_key[k]]]
    sample = rng.choice(len(keys), 300, replace=False)
    every_file = [(k, f) for k in sample for f in range(len(filters))]
    ranged = [by_partition[i] for i in np.nonzero(rng.random(len(by_partition)) < 0.9)[0]]  # ranges took some off
    own_file = [(k, owner[k]) for k in range(len(keys))]  # a file a partition: chunks of 1, 2, 3 and 80 rows
    for pairs in (by_partition, every_file, ranged, own_file):
        pair_key, pair_filter = (np.array(column) for column in zip(*pairs))
        got = bloom_probe.probe(filters, keys, pair_key, pair_filter)
        own = (pair_key < len(stored)) & (owner[pair_key] == pair_filter)
        assert got[own].all() and own.any()  # no stored key is missed
        expected = np.zeros(len(pair_key), dtype=bool)
        for f, bloom in enumerate(filters):
            at = np.nonzero(pair_filter == f)[0]
            expected[at] = bloom.might_contain(keys.take(pa.array(pair_key[at])))
        assert got.tolist() == expected.tolist()
        assert 0 < (expected & ~own).sum() < (~own).sum()  # false positives among the absent pairs


@pytest.mark.parametrize("apart_bytes_per_key, groups_apart", [(1e9, "none"), (0.0, "all"), (0.03, "some")])
def test_probing_each_key_against_all_its_groups_filters_answers_as_each_filter_does(monkeypatch, apart_bytes_per_key,
                                                                                     groups_apart):
    """``bloom_probe.positives`` (no pairs given: every key against every filter of its group) finds
    exactly the (key, filter) pairs ``might_contain`` answers "maybe" for: SIMPLE and DYNAMIC_V0 filters
    of one geometry, a filter of more rows than a chunk, groups whose filters are not adjacent, keys of
    no group and a group without filters; each group's filter rows interleaved, each row apart (a chunk
    of its own: groups with few keys), or some groups each way (16-byte rows: groups of fewer than 533
    keys apart)."""
    monkeypatch.setattr(bloom_probe, "APART_BYTES_PER_KEY", apart_bytes_per_key)
    rng = np.random.default_rng(3)
    stored = [f"key-{i:05d}-{rng.integers(1 << 40):x}" for i in range(30 * 40 + 1400)]
    filters = []
    for f in range(30):
        bloom = new_bloom_filter("SIMPLE" if f % 3 == 0 else "DYNAMIC_V0", num_entries=20, fpp=0.05,
                                 max_entries=20 * (1 + f % 4))
        bloom.add_keys(stored[f * 40:(f + 1) * 40])
        filters.append(bloom)
    wide = new_bloom_filter("DYNAMIC_V0", num_entries=20, fpp=0.05, max_entries=20 * 80)
    wide.add_keys(stored[1200:])
    filters.append(wide)
    assert len(wide.rows) > bloom_probe.CHUNK_ROWS
    keys = pa.array(stored + [f"absent-{i}-{'ü' * (i % 5)}" for i in range(1500)])
    filter_group = rng.permutation(np.arange(len(filters)) % 4)
    key_group = rng.choice(np.arange(-1, 5), len(keys), p=[0.1, 0.4, 0.3, 0.1, 0.05, 0.05])  # group 4: no filters
    nbytes = (filters[0].vector_size + 7) // 8
    apart = np.bincount(key_group[key_group >= 0], minlength=5)[:4] * apart_bytes_per_key < nbytes
    assert groups_apart == ("all" if apart.all() else "some" if apart.any() else "none")
    pair_key, pair_filter = bloom_probe.positives(filters, filter_group, keys, key_group)
    expected = set()
    for f, bloom in enumerate(filters):
        mine = np.flatnonzero(key_group == filter_group[f])
        expected |= {(k, f) for k in mine[np.asarray(bloom.might_contain(keys.take(pa.array(mine))))].tolist()}
    got = list(zip(pair_key.tolist(), pair_filter.tolist()))
    assert set(got) == expected and len(got) == len(expected)
    assert got == sorted(got, key=lambda pair: (pair[1], pair[0]))
    owner = np.concatenate([np.repeat(np.arange(30), 40), np.full(len(stored) - 1200, 30)])
    held = np.flatnonzero(key_group[:len(stored)] == filter_group[owner])
    assert held.size and {(k, int(owner[k])) for k in held.tolist()} <= expected  # no stored key is missed
    pairs = sum(int(np.count_nonzero(key_group == g)) for g in filter_group.tolist())
    assert len(expected) < pairs // 2  # most (key, filter) pairs answered "no"


def test_probing_keys_no_filter_holds_finds_no_pairs():
    """Every key absent (a batch of inserts): no positives at all, as empty pair arrays."""
    bloom = new_bloom_filter("DYNAMIC_V0", num_entries=100, fpp=1e-9, max_entries=100)
    bloom.add_keys([f"stored-{i}" for i in range(50)])
    keys = pa.array([f"new-{i}" for i in range(20)])
    pair_key, pair_filter = bloom_probe.positives([bloom, bloom], np.array([0, 0]), keys, np.zeros(20, np.int64))
    assert pair_key.tolist() == [] and pair_filter.tolist() == []
