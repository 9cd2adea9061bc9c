"""Probing many bloom filters of one geometry (hash count, bit count) with many keys at once.

A key's bit positions chain Hadoop's MurmurHash2 (``bloom_filter``): round i hashes the key with the
hash of round i-1 as seed. Rounds run for every key together, and after each round every (key, filter
row) probe still in reads its bit from one buffer holding all the filters' rows: a probe whose bit is
clear is out. A key no filter may hold is out after a few rounds (a filter at capacity has about half
its bits set), so it is not hashed further: only keys some filter may hold (updates, false positives)
pay every round.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.index.bloom_filter import BloomFilter
from hoodie_datasource.index.murmur_hash import KeyMatrix, key_bytes, length_groups

_SHRINK = 0.75  # the hashed keys are compacted when fewer than this share of them is still in a probe,
_COMPACT_AFTER = (2, 4, 8)  # checked after these rounds (most absent keys are out after a few)


def probe(filters: Sequence[BloomFilter], keys: pa.Array, pair_key: np.ndarray, pair_filter: np.ndarray) -> np.ndarray:
    """A bool per pair: may ``filters[pair_filter[i]]`` hold ``keys[pair_key[i]]``? Every filter has the
    geometry of the first; a filter with several rows (DYNAMIC_V0) may hold a key any row holds."""
    num_hashes, size = filters[0].num_hashes, np.int32(filters[0].vector_size)
    rows = [row.packed() for f in filters for row in f.rows]
    row_count = np.array([len(f.rows) for f in filters], dtype=np.int64)
    first_row = np.cumsum(row_count) - row_count
    row_start = np.cumsum([len(r) for r in rows]) - np.array([len(r) for r in rows])
    bits = np.concatenate(rows) if len(rows) > 1 else rows[0]
    # one probe per (pair, filter row): its pair, and where its row's bytes start
    per_pair = row_count[pair_filter]
    probe_pair = np.repeat(np.arange(len(pair_key)), per_pair)
    within = np.arange(len(probe_pair)) - np.repeat(np.cumsum(per_pair) - per_pair, per_pair)
    probe_base = row_start[np.repeat(first_row[pair_filter], per_pair) + within]
    # the keys asked about, hashed by byte length (a matrix per length)
    used = np.bincount(pair_key, minlength=len(keys)) > 0
    needed = np.nonzero(used)[0]
    probe_key = (np.cumsum(used) - 1)[pair_key][probe_pair]
    data, starts, lengths = key_bytes(pc.take(keys, pa.array(needed)))
    held = np.zeros(len(probe_pair), dtype=bool)
    group_of = np.empty(len(needed), dtype=np.int64)
    local = np.empty(len(needed), dtype=np.int64)
    groups = list(length_groups(lengths))
    for g, (_, members) in enumerate(groups):
        group_of[members] = g
        local[members] = np.arange(len(members))
    for g, (length, members) in enumerate(groups):
        probes = np.nonzero(group_of[probe_key] == g)[0]
        held[_rounds(KeyMatrix(data, starts[members], length), local[probe_key[probes]], probe_base[probes],
                     probes, bits, num_hashes, size)] = True
    maybe = np.zeros(len(pair_key), dtype=bool)
    maybe[probe_pair[held]] = True
    return maybe


def _rounds(matrix: KeyMatrix, probe_key: np.ndarray, probe_base: np.ndarray, probes: np.ndarray,
            bits: np.ndarray, num_hashes: int, size: np.int32) -> np.ndarray:
    """The ``probes`` whose every bit is set: ``probe_key`` indexes the rows of ``matrix``, ``probe_base``
    is the probe's filter row's first byte in ``bits``."""
    seeds = np.zeros(len(matrix), np.uint32)
    for done in range(1, num_hashes + 1):
        seeds = matrix.hash(seeds)
        position = np.abs(np.fmod(seeds.view(np.int32), size))[probe_key]
        keep = (bits[probe_base + (position >> 3)] >> (position & 7).astype(np.uint8)) & 1 == 1
        probes, probe_key, probe_base = probes[keep], probe_key[keep], probe_base[keep]
        if not len(probes):
            break
        if done not in _COMPACT_AFTER:
            continue
        live = np.bincount(probe_key, minlength=len(seeds)) > 0
        if live.sum() < _SHRINK * len(seeds):  # hash only the keys still in
            probe_key = (np.cumsum(live) - 1)[probe_key]
            matrix, seeds = matrix.take(np.nonzero(live)[0]), seeds[live]
    return probes
