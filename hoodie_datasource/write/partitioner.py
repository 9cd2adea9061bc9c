"""Workload profile -> where inserts go (Hudi's UpsertPartitioner idea).

Updates stay in the file group that holds their key. Inserts of a partition first fill that
partition's small files (base files under ``hoodie.parquet.small.file.limit``), smallest first, up to
``hoodie.parquet.max.file.size``, then go to new file groups of at most that size. Merge-on-read
tables fill at most ``hoodie.merge.small.file.group.candidates.limit`` small files a partition (Hudi's
``SparkUpsertDeltaCommitPartitioner``: a small file there is rewritten whole by its inserts); the record
size comes from the last commit's write stats. Each insert is sent to a bucket by a hash of its
key, so a retried task recomputes exactly the same assignment.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.config.write_config import FileSizing
from hoodie_datasource.index.key_ranges import FileKeyRange
from hoodie_datasource.table.file_names import new_file_id
from hoodie_datasource.write.targets import WriteTarget

KeyHash = Callable[[pa.Array], np.ndarray]


@dataclass(frozen=True)
class InsertBuckets:
    targets: tuple[WriteTarget, ...]
    cumulative_weights: tuple[float, ...]  # last one is 1.0


@dataclass(frozen=True)
class InsertPlan:
    by_partition: Mapping[str, InsertBuckets]

    def assign(self, partitions: pa.Array, keys: pa.Array, key_hash: KeyHash) -> pa.Array:
        """The target file id of each insert record."""
        n = len(keys)
        if n == 0:
            return pa.array([], pa.string())
        spread = (key_hash(keys).astype(np.int64) & 0x7FFFFFFF) % 10_000 / 10_000.0
        encoded = pc.dictionary_encode(partitions)
        if isinstance(encoded, pa.ChunkedArray):
            encoded = encoded.combine_chunks()
        codes = encoded.indices.to_numpy(zero_copy_only=False)
        result_codes = np.zeros(n, dtype=np.int64)
        ids: list[str] = []
        for code, partition in enumerate(encoded.dictionary.to_pylist()):
            buckets = self.by_partition[partition]
            rows = codes == code
            chosen = np.searchsorted(np.asarray(buckets.cumulative_weights), spread[rows], side="right")
            chosen = np.minimum(chosen, len(buckets.targets) - 1)
            result_codes[rows] = len(ids) + chosen
            ids.extend(t.file_id for t in buckets.targets)
        return pc.take(pa.array(ids, pa.string()), pa.array(result_codes))

    def target(self, partition: str, file_id: str) -> WriteTarget | None:
        buckets = self.by_partition.get(partition)
        if buckets is None:
            return None
        for t in buckets.targets:
            if t.file_id == file_id:
                return t
        return None


NO_INSERTS = InsertPlan({})  # a bucket index's plan: every record's file group is its bucket's


def plan_inserts(
    insert_counts: Mapping[str, int],
    files: Sequence[FileKeyRange],
    avg_record_size: int,
    sizing: FileSizing,
    instant: str,
    id_factory: Callable[[str, str, int], str] = new_file_id,
    candidates: int | None = None,
) -> InsertPlan:
    """Where each partition's ``insert_counts`` go: ``files`` that are small, smallest first (at most
    ``candidates`` of them a partition; None: all), then new file groups."""
    per_file_capacity = max(1, sizing.max_file_size // max(1, avg_record_size))
    small: dict[str, list[FileKeyRange]] = {}
    for f in files:
        if f.size < sizing.small_file_limit:
            small.setdefault(f.partition, []).append(f)
    plan: dict[str, InsertBuckets] = {}
    for partition, count in sorted(insert_counts.items()):
        if count <= 0:
            continue
        remaining = count
        targets: list[WriteTarget] = []
        shares: list[int] = []
        for f in sorted(small.get(partition, []), key=lambda f: f.size)[:candidates]:
            room = (sizing.max_file_size - f.size) // max(1, avg_record_size)
            take = min(room, remaining)
            if take <= 0:
                continue
            targets.append(WriteTarget(partition, f.file_id, f.base_file, f.base_instant, base_size=f.size))
            shares.append(take)
            remaining -= take
            if remaining == 0:
                break
        if remaining > 0:
            buckets = math.ceil(remaining / per_file_capacity)
            base, extra = divmod(remaining, buckets)
            for i in range(buckets):
                targets.append(WriteTarget(partition, id_factory(instant, partition, i)))
                shares.append(base + (1 if i < extra else 0))
        weights = np.cumsum(shares) / float(count)
        weights[-1] = 1.0
        plan[partition] = InsertBuckets(tuple(targets), tuple(float(w) for w in weights))
    return InsertPlan(plan)


def average_record_size(stats: Sequence[Mapping], default: int) -> int:
    """Bytes a record takes in a file, from a commit's write stats.

    Hudi (``AverageRecordSizeUtils``) divides the bytes written by the records written, which charges
    each file's fixed part (footer, bloom filter, parquet metadata: kilobytes) to its records: for the
    files of a few dozen rows a bulk insert in NONE mode leaves, it is most of their size, and the small
    files inserts fill would be filled to a fraction of ``hoodie.parquet.max.file.size``, round after
    round. Where the files' record counts differ enough (the largest at least twice the smallest), the
    bytes a record adds is taken instead: the slope of bytes over records (least squares), when it is
    positive and below the plain ratio."""
    pairs = [(int(s.get("numWrites") or 0), int(s.get("totalWriteBytes") or 0)) for s in stats]
    pairs = [(records, size) for records, size in pairs if records > 0 and size > 0]
    if not pairs:
        return default
    records, sizes = (np.array(column, dtype=np.float64) for column in zip(*pairs))
    ratio = max(1, int(sizes.sum() // records.sum()))
    if records.max() < 2 * records.min():
        return ratio
    slope = float(np.polyfit(records, sizes, 1)[0])
    return max(1, int(slope)) if 0 < slope < ratio else ratio
