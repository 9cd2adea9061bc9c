"""Probing many bloom filters of one geometry (hash count, bit count) with many keys at once.

A key's bit positions chain Hadoop's MurmurHash2 (``bloom_filter``): round i hashes the key with the
hash of round i-1 as seed. The filters are cut into chunks of at most ``CHUNK_ROWS`` filter rows, each
the files of a partition (filters that share their keys), and each chunk's rows are interleaved byte by
byte: byte ``b`` of every row of the chunk lies side by side, a row per byte lane of a word (of 1, 2 or
4 bytes for a chunk of up to 4 rows, else of 64-bit words; the chunks of one width are probed together,
so the interleaved copy is at most twice the size of the filters). A probe is then a (key, chunk) unit,
not a (key, filter row) pair: a round reads the bits of all the chunk's rows at the key's position with
one gather of a few adjacent words (one cache line), shifted so that lane ``j`` holds row ``j``'s bit,
ANDed into the unit's lanes. A unit is out once every lane is clear (a key no filter holds is out after
a few rounds: a filter at capacity has about half its bits set), and a key is hashed only while one of
its units is in, so only keys some row may hold (updates, false positives) pay every round. A pair's
answer is its unit's lanes of its filter's rows (a DYNAMIC_V0 filter may hold a key any of its rows
holds). ``positives`` takes no pairs: it probes every key against all the filters of its group (a
partition's files), and answers with the (key, filter) pairs whose lanes are still set; a group with
few keys for its filters' size (``APART_BYTES_PER_KEY``) has each filter row in a chunk of its own, probed
in the rows' bytes as stored, as interleaving them would take longer than its keys' probes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.index.bloom_filter import BloomFilter
from hoodie_datasource.index.murmur_hash import KeyMatrix, key_bytes, length_groups

CHUNK_ROWS = 64  # filter rows probed together: a unit's round gathers at most one 64-byte line
_WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32}  # lanes of a chunk of up to 4 rows; more: 64-bit words
_NO_PAIR = np.iinfo(np.int64).max
_SHRINK = 0.75  # units (and hashed keys) are compacted when fewer than this share of them is still in
# ``positives``: a group whose keys number fewer than a filter row's bytes / APART_BYTES_PER_KEY probes
# each of its filter rows as a chunk of its own (a key then probes each row, about 2 rounds in a row that
# lacks it): interleaving its rows would cost more than its keys' probes. Measured at Hudi's default sizing
# (323 KB rows, 8 files of 2 rows a partition), interleaving a partition's rows costs about what probing
# 2,000 keys apart costs more than interleaved: a seed batch's late tail (hundreds of keys a day) goes
# apart, a uniform batch's days (10,000 keys each) and its latest days interleave
APART_BYTES_PER_KEY = 128


def probe(filters: Sequence[BloomFilter], keys: pa.Array, pair_key: np.ndarray, pair_filter: np.ndarray) -> np.ndarray:
    """A bool per pair: may ``filters[pair_filter[i]]`` hold ``keys[pair_key[i]]``? Every filter has the
    geometry of the first."""
    maybe = np.zeros(len(pair_key), dtype=bool)
    if not len(pair_key):
        return maybe
    row_count = np.array([len(f.rows) for f in filters], dtype=np.int64)
    chunk_of, first_lane = _chunks(row_count, pair_key, pair_filter)
    used = chunk_of >= 0
    # a chunk's lanes: its rows, rounded up to a power of two up to 8, else to a multiple of 8
    rows = np.bincount(chunk_of[used], weights=row_count[used]).astype(np.int64)
    width = np.where(rows <= 8, 1 << np.ceil(np.log2(np.maximum(rows, 1))).astype(np.int64), -(-rows // 8) * 8)
    pair_chunk = chunk_of[pair_filter]
    # the units: every key with pairs in the chunk of one of its pairs, then the (key, chunk) units of the
    # pairs in other chunks (a key whose partition spans chunks, a global index)
    key_chunk = np.full(len(keys), -1, dtype=np.int64)
    key_chunk[pair_key] = pair_chunk
    needed = np.nonzero(key_chunk >= 0)[0]
    key_row = np.full(len(keys), -1, dtype=np.int64)
    key_row[needed] = np.arange(len(needed))
    pair_unit = key_row[pair_key]
    unit_key, unit_chunk = np.arange(len(needed)), key_chunk[needed]
    elsewhere = np.nonzero(pair_chunk != key_chunk[pair_key])[0]
    if len(elsewhere):
        chunks = len(rows)
        extra, inverse = np.unique(pair_unit[elsewhere] * chunks + pair_chunk[elsewhere], return_inverse=True)
        pair_unit[elsewhere] = len(needed) + inverse
        unit_key, unit_chunk = np.concatenate([unit_key, extra // chunks]), np.concatenate([unit_chunk, extra % chunks])
    # the keys asked about, hashed by byte length (a matrix per length)
    data, starts, lengths = key_bytes(pc.take(keys, pa.array(needed)))
    groups = [(KeyMatrix(data, starts[members], length), members) for length, members in length_groups(lengths)]
    widths = np.unique(width)
    nbytes = (filters[0].vector_size + 7) // 8
    end_lane = first_lane + row_count
    for lanes in widths.tolist():  # the chunks of one width probed together
        members = np.nonzero(width == lanes)[0]
        slot = np.full(len(rows), -1, dtype=np.int64)
        slot[members] = np.arange(len(members))
        placed = np.flatnonzero(used & (slot[chunk_of] >= 0))
        row_filter = np.repeat(placed, row_count[placed])
        row_index = np.arange(len(row_filter)) - np.repeat(np.cumsum(row_count[placed]) - row_count[placed],
                                                           row_count[placed])
        table = _interleaved([filters[f].rows[r].packed() for f, r in zip(row_filter.tolist(), row_index.tolist())],
                             len(members), slot[chunk_of[row_filter]], first_lane[row_filter] + row_index, lanes)
        units = np.nonzero(width[unit_chunk] == lanes)[0] if len(widths) > 1 else np.arange(len(unit_key))
        found = np.zeros((len(units), lanes), dtype=np.uint8)
        for matrix, keyed in groups:
            local = np.full(len(needed), -1, dtype=np.int64)
            local[keyed] = np.arange(len(keyed))
            at = np.nonzero(local[unit_key[units]] >= 0)[0] if len(groups) > 1 else np.arange(len(units))
            held, bits = _rounds(matrix, local[unit_key[units[at]]], slot[unit_chunk[units[at]]] * nbytes, table,
                                 filters[0].num_hashes, np.int32(filters[0].vector_size))
            found[at[held]] = bits.view(np.uint8).reshape(len(held), lanes)
        # a pair's answer: whether a lane of its filter's rows [first, end) is set, from the lanes' running
        # count (the rows of a filter are adjacent lanes)
        running = np.zeros((len(found), lanes + 1), dtype=np.uint8 if lanes < 256 else np.int32)
        for lane in range(lanes):  # a column at a time: numpy's cumsum along short rows is slower
            np.add(running[:, lane], found[:, lane], out=running[:, lane + 1])
        counts = running.ravel()
        if len(widths) == 1:  # every unit and pair: no subsets taken
            at = pair_unit * (lanes + 1)
            return counts[at + end_lane[pair_filter]] != counts[at + first_lane[pair_filter]]
        place = np.full(len(unit_key), -1, dtype=np.int64)  # a unit's row of ``found``
        place[units] = np.arange(len(units))
        pairs = np.nonzero(width[pair_chunk] == lanes)[0]
        at, filters_of = place[pair_unit[pairs]] * (lanes + 1), pair_filter[pairs]
        maybe[pairs] = counts[at + end_lane[filters_of]] != counts[at + first_lane[filters_of]]
    return maybe


def positives(filters: Sequence[BloomFilter], filter_group: np.ndarray, keys: pa.Array, key_group: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """(pair key, pair filter): the (key, filter) pairs the filters may hold, each key probed against every
    filter of its group (``key_group[i]``: key ``i``'s group, -1 for none; ``filter_group[f]``: filter
    ``f``'s), sorted by filter, then key. Every filter has the geometry of the first. No (key, filter) pair
    is materialised: a unit is a key and a chunk of its group's filters, and only the lanes still set
    after the rounds (the stored keys and the false positives) become pairs."""
    none = np.empty(0, dtype=np.int64)
    needed = np.flatnonzero(key_group >= 0)
    if not len(needed) or not len(filters):
        return none, none
    nbytes = (filters[0].vector_size + 7) // 8
    groups = int(max(filter_group.max(), key_group.max())) + 1
    apart = np.bincount(key_group[needed], minlength=groups) * APART_BYTES_PER_KEY < nbytes
    # the filter rows (filter, row) of each group, in order, as lanes of chunks: those of a group with few
    # keys each a chunk of its own, the others' filters cut into chunks of at most CHUNK_ROWS rows (a wider
    # filter: a chunk of its own)
    entries: list[tuple[int, int, int, int]] = []  # (filter, row, chunk, lane)
    chunk_group: list[int] = []
    filled = CHUNK_ROWS + 1
    for f in np.argsort(filter_group, kind="stable").tolist():
        group, rows = int(filter_group[f]), len(filters[f].rows)
        if apart[group] or not chunk_group or chunk_group[-1] != group or filled + rows > CHUNK_ROWS:
            chunk_group.append(group)
            filled = 0
        for row in range(rows):
            if apart[group] and row:
                chunk_group.append(group)
            entries.append((f, row, len(chunk_group) - 1, 0 if apart[group] else filled + row))
        filled = CHUNK_ROWS + 1 if apart[group] else filled + rows
    entry_filter, entry_row, entry_chunk, entry_lane = (np.array(column, dtype=np.int64) for column in zip(*entries))
    chunks_of_group = np.bincount(chunk_group, minlength=groups)
    first_chunk = np.concatenate([[0], np.cumsum(chunks_of_group)[:-1]])
    rows = np.bincount(entry_chunk, minlength=len(chunk_group))
    width = np.where(rows <= 8, 1 << np.ceil(np.log2(np.maximum(rows, 1))).astype(np.int64), -(-rows // 8) * 8)
    lane_filter = np.full((len(chunk_group), int(width.max())), -1, dtype=np.int64)
    lane_filter[entry_chunk, entry_lane] = entry_filter
    # the units: every key with each chunk of its group (a key of a group without filters has none)
    per_key = chunks_of_group[key_group[needed]]
    unit_key = np.repeat(np.arange(len(needed)), per_key)
    unit_chunk = np.repeat(first_chunk[key_group[needed]] - np.cumsum(per_key) + per_key, per_key) + np.arange(len(unit_key))
    data, starts, lengths = key_bytes(pc.take(keys, pa.array(needed)))
    matrices = [(KeyMatrix(data, starts[members], length), members) for length, members in length_groups(lengths)]
    found_unit, found_lane = [], []
    for lanes in np.unique(width).tolist():  # the chunks of one width probed together
        members = np.flatnonzero(width == lanes)
        slot = np.full(len(chunk_group), -1, dtype=np.int64)
        slot[members] = np.arange(len(members))
        mine = np.flatnonzero(width[entry_chunk] == lanes)
        table = _interleaved([filters[f].rows[r].packed() for f, r in zip(entry_filter[mine].tolist(),
                                                                            entry_row[mine].tolist())],
                             len(members), slot[entry_chunk[mine]], entry_lane[mine], lanes)
        units = np.flatnonzero(width[unit_chunk] == lanes)
        for matrix, keyed in matrices:
            local = np.full(len(needed), -1, dtype=np.int64)
            local[keyed] = np.arange(len(keyed))
            at = units[local[unit_key[units]] >= 0] if len(matrices) > 1 else units
            held, bits = _rounds(matrix, local[unit_key[at]], slot[unit_chunk[at]] * nbytes, table,
                                 filters[0].num_hashes, np.int32(filters[0].vector_size))
            unit, lane = np.nonzero(bits.view(np.uint8).reshape(len(held), lanes))
            found_unit.append(at[held[unit]])
            found_lane.append(lane)
    unit, lane = np.concatenate(found_unit), np.concatenate(found_lane)
    # a filter may hold a key any of its rows holds: one pair per (key, filter)
    code = np.sort(lane_filter[unit_chunk[unit], lane] * len(keys) + needed[unit_key[unit]])
    first = np.ones(len(code), dtype=bool)  # a sort, not np.unique: several times faster
    first[1:] = code[1:] != code[:-1]
    code = code[first]
    return code % len(keys), code // len(keys)


def _chunks(row_count: np.ndarray, pair_key: np.ndarray, pair_filter: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The chunk of each filter and the lane of its first row in it. A filter's group is the first filter
    of any of its keys (the files of a partition share their keys, so they share a group even when key
    ranges took some keys off some files); a chunk holds filters of one group, cut at ``CHUNK_ROWS``
    rows (a filter with more rows is a chunk of its own). The grouping only saves work: any grouping
    answers the same. A filter without pairs is in no chunk (-1)."""
    # the pairs by filter (key ranges make them so: then no sort); written in reverse, the last write to a
    # key, which numpy keeps, is its first filter (a scattered ``np.minimum.at`` takes several times longer)
    by_key, by_filter = pair_key, pair_filter
    if not (pair_filter[1:] >= pair_filter[:-1]).all():
        order = np.argsort(pair_filter, kind="stable")
        by_key, by_filter = pair_key[order], pair_filter[order]
    key_first = np.full(int(pair_key.max()) + 1, _NO_PAIR)
    key_first[by_key[::-1]] = by_filter[::-1]
    starts = np.searchsorted(by_filter, np.arange(len(row_count)), side="left")
    paired = np.nonzero(np.searchsorted(by_filter, np.arange(len(row_count)), side="right") > starts)[0]
    group = np.full(len(row_count), _NO_PAIR)
    group[paired] = np.minimum.reduceat(key_first[by_key], starts[paired])
    chunk_of = np.full(len(row_count), -1, dtype=np.int64)
    first_lane = np.zeros(len(row_count), dtype=np.int64)
    chunk, filled, previous = -1, 0, None
    for f in np.argsort(group, kind="stable").tolist():
        if group[f] == _NO_PAIR:
            break
        rows = int(row_count[f])
        if group[f] != previous or filled + rows > CHUNK_ROWS:
            chunk, filled, previous = chunk + 1, 0, group[f]
        chunk_of[f], first_lane[f] = chunk, filled
        filled += rows
    return chunk_of, first_lane


def _interleaved(rows: Sequence[np.ndarray], chunks: int, slot: np.ndarray, lane: np.ndarray, lanes: int
                 ) -> np.ndarray:
    """(chunks x bytes, words): row ``slot * bytes + b`` holds byte ``b`` of every filter row of the chunk in
    slot ``slot`` (``rows[i]``, packed bits, is in slot ``slot[i]``, byte lane ``lane[i]``; lanes of no row
    are zero: never a "maybe"); words of ``lanes`` bytes up to 4, else 64-bit words. A chunk of one lane is
    its row's bytes as stored: no interleaving. Each row is written straight into its lane (a strided copy:
    stacking the rows, then transposing them, took half as long again)."""
    nbytes = len(rows[0]) if len(rows) else 0
    table = np.zeros((chunks, nbytes, lanes), dtype=np.uint8)
    for packed, at, j in zip(rows, slot.tolist(), lane.tolist()):
        table[at, :, j] = packed
    return table.reshape(-1, lanes).view(_WORDS.get(lanes, np.uint64))


def _rounds(matrix: KeyMatrix, unit_key: np.ndarray, unit_base: np.ndarray, table: np.ndarray, num_hashes: int,
            size: np.int32) -> tuple[np.ndarray, np.ndarray]:
    """The units still in after every round, and their lanes (bit 0 of byte lane ``j`` set where row ``j``
    holds every bit of the key): ``unit_key`` is a unit's row of ``matrix``, ``unit_base`` the row of
    ``table`` where its chunk starts."""
    unit = np.arange(len(unit_key))
    hashed = np.bincount(unit_key, minlength=len(matrix)) > 0
    if not hashed.all():  # only the keys of these units are hashed
        unit_key, matrix = (np.cumsum(hashed) - 1)[unit_key], matrix.take(np.flatnonzero(hashed))
    lane_type = table.dtype.type
    acc = np.full((len(unit_key), table.shape[1]), np.frombuffer(b"\x01" * table.itemsize, lane_type)[0],
                  dtype=lane_type)  # bit 0 of every byte lane
    seeds = np.zeros(len(matrix), np.uint32)
    same = len(unit_key) == len(matrix) and bool((unit_key == unit).all())  # a unit per key, in key order
    for done in range(1, num_hashes + 1):
        seeds = matrix.hash(seeds)
        position = np.abs(np.fmod(seeds.view(np.int32), size))
        if not same:
            position = position[unit_key]
        acc &= np.take(table, unit_base + (position >> 3), axis=0) >> (position & 7).astype(lane_type)[:, None]
        live = acc[:, 0] != 0
        for word in range(1, acc.shape[1]):
            live |= acc[:, word] != 0
        kept = int(np.count_nonzero(live))
        if kept == 0 or done == num_hashes:
            break
        if kept < _SHRINK * len(unit):  # go on with the units still in, and hash only their keys
            unit, unit_key, unit_base, acc = unit[live], unit_key[live], unit_base[live], acc[live]
            hashed = np.bincount(unit_key, minlength=len(seeds)) > 0 if not same else live
            if not same:
                unit_key = (np.cumsum(hashed) - 1)[unit_key]
            matrix, seeds = matrix.take(np.nonzero(hashed)[0]), seeds[hashed]
    live = np.nonzero(live)[0]
    return unit[live], acc[live]
