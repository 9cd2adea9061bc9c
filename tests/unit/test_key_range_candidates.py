"""``lookup.range_candidates`` pairs each key with exactly the files of its partition (every file under a
global index) whose [min, max] key range holds it, whatever the ranges: overlapping, disjoint, nested,
missing (a file without a range is a candidate for every key); compared with pairing every key and file."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie_datasource.index.key_ranges import FileKeyRange
from hoodie_datasource.index.lookup import range_candidates

KEYS = st.text(alphabet="abcé0", min_size=1, max_size=3)
PARTITIONS = st.sampled_from(["p1", "p2", "p3"])
RANGES = st.one_of(st.none(), st.tuples(KEYS, KEYS).map(sorted))


def _file(i: int, partition: str, bounds: list[str] | None) -> FileKeyRange:
    low, high = bounds if bounds is not None else (None, None)
    return FileKeyRange(partition, f"f{i}", f"{partition}/f{i}.parquet", "001", 1, 1, low, high)


def _pairs(keys, parts, files, prune, global_index) -> set[tuple[int, int]]:
    return {(row, f) for row, (key, part) in enumerate(zip(keys, parts)) for f, file in enumerate(files)
            if (global_index or file.partition == part)
            and (not prune or file.min_key is None or file.min_key <= key <= file.max_key)}


@settings(max_examples=300, deadline=None)
@given(records=st.lists(st.tuples(KEYS, PARTITIONS), max_size=40),
       ranges=st.lists(st.tuples(PARTITIONS, RANGES), min_size=1, max_size=8),
       prune=st.booleans(), global_index=st.booleans())
def test_candidates_are_the_files_whose_range_holds_the_key(records, ranges, prune, global_index):
    keys, parts = [k for k, _ in records], [p for _, p in records]
    files = [_file(i, p, r) for i, (p, r) in enumerate(ranges)]
    found = range_candidates(pa.array(keys, pa.string()), pa.array(parts, pa.string()), files, prune, global_index)
    got = list(zip(found.rows.tolist(), found.files.tolist()))
    assert len(got) == len(set(got))
    assert set(got) == _pairs(keys, parts, files, prune, global_index)
    # a file's candidates are in record order, files in listing order
    assert got == sorted(got, key=lambda pair: (pair[1], pair[0]))
    assert found.by_partition == sum(1 for p in parts for f in files if global_index or f.partition == p)


def test_uuid_keys_are_compared_per_file_only_at_the_edges():
    """Random keys: nearly every key lies inside every file's range; the few outside some file's are
    left out of exactly those files."""
    rng = np.random.default_rng(7)
    keys = [f"{v:032x}" for v in rng.integers(0, 2**63, 2000)]
    files = [_file(i, "p1", sorted(rng.choice(keys, 2, replace=False).tolist()) if i % 3 else
                   [min(keys), max(keys)]) for i in range(6)]
    found = range_candidates(pa.array(keys), pa.array(["p1"] * len(keys)), files, True, False)
    assert set(zip(found.rows.tolist(), found.files.tolist())) == _pairs(keys, ["p1"] * len(keys), files, True, False)
    assert np.bincount(found.files, minlength=6)[0] == len(keys)
