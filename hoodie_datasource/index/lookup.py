"""Finding the base file that holds each key, columnar: the work of the lookup indexes (``lookup_index``;
Hudi's bloom index).

Step 1 ``range_candidates``: pair each record with the files of its partition (every partition for
a global index) whose [min, max] key range contains its key (Hudi's ``HoodieBloomIndex``
``explodeRecordsWithFileComparisons``).
Step 2 ``confirm_pairs``: probe every pair against its file's bloom filter, then check the keys that
need it against the file's stored keys (``HoodieKeyLookupHandle``), so a bloom false positive never
turns an insert into a phantom update (or an update into a duplicate).

``partition_positives`` does both steps at once for a partition-local index over random keys (uuids:
the key ranges prune next to nothing, so every key is a candidate of every file of its partition): each
key is probed against all its partition's filters, and only the bloom positives become (key, file) pairs,
not the keys times the files.

Each key is hashed once per filter geometry (hash count, bit count), and only for as many rounds as
some filter may still hold it: a batch probed against many files with the same filter settings pays
one hashing, and probing is a gather of bits (``bloom_probe``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.index import base_file_cache, bloom_probe
from hoodie_datasource.index.bloom_filter import BloomFilter
from hoodie_datasource.index.key_ranges import FileKeyRange
from hoodie_datasource.storage.storage import FileInfo, Storage


@dataclass(frozen=True)
class IndexCounts:
    """The index work of one tagging, which a commit records as ``hoodie.stage.index.<name>`` (summed
    over the tasks that tagged). ``false_positives_checked``: bloom positives whose key the file turned
    out not to hold, known only for the pairs checked against stored keys (a key a single filter claims
    goes to that file group unchecked, see ``confirm_pairs``)."""

    keys: int = 0  # records tagged
    files: int = 0  # base files of the partitions the records are in (all of them: global index)
    pairs: int = 0  # (key, file) pairs by partition, before key-range pruning
    candidates: int = 0  # pairs left after key-range pruning
    candidate_files: int = 0  # files with at least one candidate
    bloom_probes: int = 0  # candidates probed against a bloom filter
    bloom_positives: int = 0  # probes the filter answered "maybe"
    exact_checks: int = 0  # pairs checked against the file's stored keys
    false_positives_checked: int = 0
    found: int = 0  # records with a location (updates and deletes of stored keys)

    def as_dict(self) -> dict[str, int]:
        return {f"index.{f.name}": getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Candidates:
    """(record row, file position) pairs worth checking, and how many pairs the partitions made."""

    rows: np.ndarray
    files: np.ndarray
    by_partition: int


def range_candidates(
    keys: pa.Array,
    partitions: pa.Array,
    files: Sequence[FileKeyRange],
    prune_by_ranges: bool,
    global_index: bool,
) -> Candidates:
    rows_out: list[np.ndarray] = []
    files_out: list[np.ndarray] = []
    by_partition = {} if global_index else _rows_by_partition(partitions)
    everything = np.arange(len(keys))
    bounds = _range_bounds(files, global_index)
    edges: dict[str | None, _Edge] = {}
    paired = 0
    for position, file in enumerate(files):
        rows = everything if global_index else by_partition.get(file.partition)
        if rows is None or len(rows) == 0:
            continue
        paired += len(rows)
        if prune_by_ranges and file.min_key is not None and file.max_key is not None:
            group = None if global_index else file.partition
            edge = edges.get(group)
            if edge is None:  # found once for all the group's files
                edge = edges[group] = _Edge.of(keys, rows, *bounds[group])
            rows = edge.inside(rows, file)
        if len(rows):
            rows_out.append(rows)
            files_out.append(np.full(len(rows), position, dtype=np.int64))
    if not rows_out:
        return Candidates(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), paired)
    return Candidates(np.concatenate(rows_out), np.concatenate(files_out), paired)


def _rows_by_partition(partitions: pa.Array) -> dict[str, np.ndarray]:
    """The rows of each partition, in order."""
    encoded = pc.dictionary_encode(partitions)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(encoded.dictionary) + 1))
    return {name: order[bounds[code]:bounds[code + 1]] for code, name in enumerate(encoded.dictionary.to_pylist())}


def _range_bounds(files: Sequence[FileKeyRange], global_index: bool) -> dict[str | None, tuple[str, str]]:
    """The highest min key and the lowest max key of the ranged files of each partition (None: of all
    the files, for a global index)."""
    bounds: dict[str | None, tuple[str, str]] = {}
    for file in files:
        if file.min_key is not None and file.max_key is not None:
            group = None if global_index else file.partition
            low, high = bounds.get(group, (file.min_key, file.max_key))
            bounds[group] = (max(low, file.min_key), min(high, file.max_key))
    return bounds


@dataclass(frozen=True)
class _Edge:
    """The keys of a partition (every key under a global index) that some of its files' key ranges may
    leave out: those below the highest min key or above the lowest max key of its ranged files. Every
    other key lies within every file's range, so a file's range is compared with these keys alone (random
    keys such as uuids: a handful of keys, not the partition's keys once per file)."""

    at: np.ndarray  # positions of the edge keys in the partition's rows
    keys: pa.Array  # the edge keys

    @staticmethod
    def of(keys: pa.Array, rows: np.ndarray, highest_min: str, lowest_max: str) -> _Edge:
        subset = pc.take(keys, pa.array(rows)) if len(rows) != len(keys) else keys
        outside = pc.or_(pc.less(subset, highest_min), pc.greater(subset, lowest_max))
        at = np.flatnonzero(outside.to_numpy(zero_copy_only=False))
        return _Edge(at, pc.take(subset, pa.array(at)))

    def _outside(self, file: FileKeyRange) -> np.ndarray:
        """Positions (in the partition's rows) of the keys outside ``file``'s key range."""
        inside = pc.and_(pc.greater_equal(self.keys, file.min_key), pc.less_equal(self.keys, file.max_key))
        return self.at[~inside.to_numpy(zero_copy_only=False)]

    def inside(self, rows: np.ndarray, file: FileKeyRange) -> np.ndarray:
        """``rows`` (the partition's, in order) whose keys lie within ``file``'s key range."""
        if not len(self.at):
            return rows
        keep = np.ones(len(rows), dtype=bool)
        keep[self._outside(file)] = False
        return rows[keep]

    def outside(self, rows: np.ndarray, file: FileKeyRange) -> np.ndarray:
        """``rows`` (the partition's) whose keys lie outside ``file``'s key range."""
        return rows[self._outside(file)] if len(self.at) else rows[:0]


def _bloom_maybe(filters: list[BloomFilter | None], keys: pa.Array, pair_key: np.ndarray, pair_file: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(maybe, probed) per pair: the pairs of files with filters of one geometry are probed together
    (``bloom_probe``); a pair of a file without a filter is a "maybe"."""
    maybe = np.ones(len(pair_key), dtype=bool)
    probed = np.zeros(len(pair_key), dtype=bool)
    geometry: dict[tuple[int, int], list[int]] = {}
    for code, bloom in enumerate(filters):
        if bloom is not None:
            geometry.setdefault((bloom.num_hashes, bloom.vector_size), []).append(code)
    for codes in geometry.values():
        if len(codes) == len(filters):  # every file has a filter of this geometry: every pair is probed
            return bloom_probe.probe(filters, keys, pair_key, pair_file), np.ones(len(pair_key), dtype=bool)
        position = np.full(len(filters), -1, dtype=np.int64)
        position[codes] = np.arange(len(codes))
        pairs = np.nonzero(position[pair_file] >= 0)[0]
        if len(pairs):
            maybe[pairs] = bloom_probe.probe([filters[c] for c in codes], keys, pair_key[pairs],
                                             position[pair_file[pairs]])
            probed[pairs] = True
    return maybe, probed


# the bloom filters of base files (relative paths), None for a file without one
BloomSource = Callable[[Sequence[str]], list[BloomFilter | None]]


def footer_filters(storage: Storage, listed: Mapping[str, FileInfo] | None = None) -> BloomSource:
    """Bloom filters read from the base files' footers (``listed``: their listing entries, when known)."""
    info = (listed or {}).get
    return lambda base_files: [base_file_cache.bloom_filter(storage, f, info=info(f)) for f in base_files]


def confirm_pairs(storage: Storage, keys: pa.Array, pair_key: np.ndarray, pair_file: np.ndarray,
                  base_files: Sequence[str], use_bloom: bool, claims: np.ndarray | None = None,
                  listed: Mapping[str, FileInfo] | None = None, blooms: BloomSource | None = None
                  ) -> tuple[np.ndarray, IndexCounts]:
    """Which (key, file) pairs hold: pair ``i`` is key ``keys[pair_key[i]]`` in ``base_files[pair_file[i]]``
    (``listed``: the files' listing entries by relative path, when the caller has them: saves a HEAD per
    file on an object store).

    ``claims`` (the caller holds every candidate of its keys): the identity of each pair's key (the key,
    and its partition unless the index is global). A key whose bloom filters point at a single file is
    then sent to that file's group without reading the file's keys. Were the filter's "maybe" a false
    positive, the key is stored nowhere (no other candidate's filter claims it, and filters have no
    false negatives), so writing it into that file group still lands it once: a copy-on-write merge
    finds it absent and writes it as an insert; a merge-on-read log block carries it, and readers and
    compaction keep a log record whose key the base file lacks (the commit's stats count it as an
    update, and a read-optimized query sees it after compaction; range pruning keeps finding it, as
    candidates lie within the file's key range). Keys that two or more filters may hold, candidates of
    files without a filter, and every positive without ``claims`` are checked against the stored keys.
    ``blooms``: where the filters come from (the footers by default)."""
    info = (listed or {}).get
    # no filter read for a file without pairs
    paired = np.bincount(pair_file, minlength=len(base_files)) > 0 if use_bloom else np.zeros(len(base_files), bool)
    wanted = np.flatnonzero(paired)
    filters: list[BloomFilter | None] = [None] * len(base_files)
    for i, bloom in zip(wanted.tolist(), (blooms or footer_filters(storage, listed))([base_files[i] for i in wanted])):
        filters[i] = bloom
    maybe, probed = _bloom_maybe(filters, keys, pair_key, pair_file)
    return _settle(storage, keys, pair_key, pair_file, base_files, maybe, probed, claims, info)


def _settle(storage: Storage, keys: pa.Array, pair_key: np.ndarray, pair_file: np.ndarray, base_files: Sequence[str],
            maybe: np.ndarray, probed: np.ndarray, claims: np.ndarray | None,
            info: Callable[[str], FileInfo | None]) -> tuple[np.ndarray, IndexCounts]:
    """``confirm_pairs`` once the filters answered (``maybe``, for the pairs they ``probed``)."""
    exact = maybe.copy()
    if claims is not None:
        exact &= ~probed
        positive = np.nonzero(maybe)[0]
        if len(positive):
            claimed = claims[positive]
            ambiguous = np.bincount(claimed)[claimed] > 1
            exact[positive[ambiguous]] = True
    keep = maybe.copy()
    check = np.nonzero(exact)[0]
    if len(check):
        order = check[np.argsort(pair_file[check], kind="stable")]
        bounds = np.searchsorted(pair_file[order], np.arange(len(base_files) + 1))
        for code, base_file in enumerate(base_files):
            rows = order[bounds[code]:bounds[code + 1]]
            if len(rows):
                keep[rows] = stored_key_check(storage, base_file, pc.take(keys, pa.array(pair_key[rows])),
                                              info(base_file))
    counts = IndexCounts(candidates=len(pair_key), bloom_probes=int(probed.sum()),
                         bloom_positives=int((maybe & probed).sum()), exact_checks=len(check),
                         false_positives_checked=int((probed & exact & ~keep).sum()))
    return keep, counts


def partition_positives(storage: Storage, keys: pa.Array, partitions: pa.Array, files: Sequence[FileKeyRange],
                        prune_by_ranges: bool, listed: Mapping[str, FileInfo] | None = None,
                        blooms: BloomSource | None = None
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, IndexCounts] | None:
    """``range_candidates`` and ``confirm_pairs`` (with claims: the caller holds every record of its keys)
    for a partition-local index whose keys mostly lie within every file's key range (random keys such as
    uuids), without the (key, file) pairs: each key is probed against all its partition's filters at once
    (``bloom_probe.positives``), and only the positives the key ranges keep are settled. Returns (positive
    key, positive file, held, counts), or None when the pairs are the better way: key ranges take off half
    the pairs or more (ordered keys), or a file has no filter or one of another geometry."""
    by_partition = _rows_by_partition(partitions)
    touched = [i for i, f in enumerate(files) if f.partition in by_partition]
    info = (listed or {}).get
    pairs = sum(len(by_partition[files[i].partition]) for i in touched)
    # the (key, file) pairs the key ranges take off: an edge key outside the file's range
    off_key, off_file = [np.empty(0, dtype=np.int64)], [np.empty(0, dtype=np.int64)]
    bounds = _range_bounds(files, False) if prune_by_ranges else {}
    edges: dict[str | None, _Edge] = {}
    for i in touched:
        file, rows = files[i], by_partition[files[i].partition]
        if file.partition in bounds and file.min_key is not None and file.max_key is not None:
            if file.partition not in edges:
                edges[file.partition] = _Edge.of(keys, rows, *bounds[file.partition])
            edge = edges[file.partition]
            out = edge.outside(rows, file)
            off_key.append(out)
            off_file.append(np.full(len(out), i, dtype=np.int64))
    off = np.concatenate(off_key), np.concatenate(off_file)
    if 2 * len(off[0]) >= pairs:
        return None
    filters = (blooms or footer_filters(storage, listed))([files[i].base_file for i in touched])
    if any(f is None or (f.num_hashes, f.vector_size) != (filters[0].num_hashes, filters[0].vector_size)
           for f in filters):
        return None
    names = list(by_partition)
    group = {name: code for code, name in enumerate(names)}
    key_group = np.full(len(keys), -1, dtype=np.int64)
    for name, rows in by_partition.items():
        key_group[rows] = group[name]
    pair_key, local = bloom_probe.positives(filters, np.array([group[files[i].partition] for i in touched], np.int64),
                                            keys, key_group)
    pair_file = np.array(touched, dtype=np.int64)[local]
    if len(off[0]):  # the positives the key ranges took off are no candidates
        inside = ~np.isin(pair_file * len(keys) + pair_key, off[1] * len(keys) + off[0])
        pair_key, pair_file = pair_key[inside], pair_file[inside]
    held, counts = _settle(storage, keys, pair_key, pair_file, [f.base_file for f in files],
                           np.ones(len(pair_key), bool), np.ones(len(pair_key), bool), pair_key, info)
    candidates = np.zeros(len(files), dtype=np.int64)
    for i in touched:
        candidates[i] = len(by_partition[files[i].partition])
    candidates -= np.bincount(off[1], minlength=len(files))
    counts = replace(counts, pairs=pairs, candidates=int(candidates.sum()), bloom_probes=int(candidates.sum()),
                     candidate_files=int(np.count_nonzero(candidates)))
    return pair_key, pair_file, held, counts


def stored_key_check(storage: Storage, base_file: str, candidate_keys: pa.Array,
                     info: FileInfo | None = None) -> np.ndarray:
    """A bool per candidate key: is it stored in ``base_file``? Reads the file's key column (once per
    process: base files are immutable)."""
    stored = base_file_cache.stored_keys(storage, base_file, info)
    return pc.is_in(candidate_keys, value_set=stored).to_numpy(zero_copy_only=False)
