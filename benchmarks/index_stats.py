"""What tagging a batch costs in index work, counted with the library's index modules.

A commit's metadata holds only tagging's time, so the counts are taken here by running the two
index steps (``hoodie_datasource.index.lookup``) over the table's latest base files as an upsert
does: key-range pruning of (key, file) pairs within each partition, then bloom filter probes, then
exact checks of the bloom positives against the stored keys (which tells false positives apart).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from benchmarks.workload import KEY, PARTITION
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.index.key_ranges import load_key_ranges
from hoodie_datasource.index.lookup import bloom_check, range_candidates, stored_key_check
from hoodie_datasource.read.planner import plan_read
from hoodie_datasource.storage.registry import open_storage


@dataclass(frozen=True)
class IndexCounts:
    keys: int
    files: int  # base files in the partitions the batch touches
    pairs_by_partition: int  # (key, file) pairs to check without key ranges
    pairs_in_range: int  # pairs left after key-range pruning: bloom filter probes
    files_probed: int  # files with at least one pair left
    bloom_positives: int
    false_positives: int  # bloom positives whose key the file does not hold
    stored: int  # keys found in a file (the batch's updates)

    @property
    def files_pruned(self) -> int:
        return self.files - self.files_probed

    @property
    def pairs_pruned(self) -> int:
        return self.pairs_by_partition - self.pairs_in_range


def count(table: Path, batch: pa.Table) -> IndexCounts:
    base_path = open_storage(str(table), {})
    files = load_key_ranges(base_path, list(plan_read(base_path, ReadConfig()).slices))
    keys, partitions = batch.column(KEY).combine_chunks(), batch.column(PARTITION).combine_chunks()
    touched = set(pc.unique(partitions).to_pylist())
    by_partition, _ = range_candidates(keys, partitions, files, prune_by_ranges=False, global_index=False)
    rows, positions = range_candidates(keys, partitions, files, prune_by_ranges=True, global_index=False)
    positives = false_positives = stored = 0
    for position in np.unique(positions):
        base_file = files[position].base_file
        candidates = pc.take(keys, pa.array(rows[positions == position]))
        maybe = bloom_check(base_path, base_file, candidates)
        if maybe is not None:
            candidates = candidates.filter(pa.array(maybe))
        held = stored_key_check(base_path, base_file, candidates)
        positives += len(candidates)
        stored += int(held.sum())
        false_positives += int((~held).sum())
    return IndexCounts(batch.num_rows, sum(f.partition in touched for f in files), len(by_partition), len(rows),
                       len(np.unique(positions)), positives, false_positives, stored)
