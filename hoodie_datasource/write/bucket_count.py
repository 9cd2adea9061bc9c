"""The bucket count a simple bucket index table was written with, kept in its commits.

Apache Hudi keeps nothing of a simple bucket index in ``hoodie.properties`` (only the partition-level
bucket index has a hashing config, under ``.hoodie/.bucket_index/partition_bucket_index_meta``), and
its writers trust ``hoodie.bucket.index.num.buckets`` to be the same at every write. A different count
sends existing keys to other buckets, so they would be written a second time into other file groups:
more buckets than the table has file groups for cannot be told from the file ids. Each of our bucket
writes therefore records its count in its commit's ``extraMetadata`` (a free map every Hudi reader
ignores), and a write with another count than the latest write recorded is refused before anything is
written. Tables whose latest write did not record one (written by Apache Hudi) are checked by their
file ids alone (``bucket_tagging.bucket_file_groups``)."""

from __future__ import annotations

from hoodie_datasource.config import keys as k
from hoodie_datasource.config.write_config import IndexConfig
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.timeline.timeline import Timeline

BUCKET_COUNT_KEY = k.BUCKET_NUM_BUCKETS.key
TABLE_SERVICE_OPERATIONS = frozenset({"COMPACT", "LOG_COMPACT", "CLUSTER"})  # Hudi's WriteOperationType names


def bucket_count_metadata(index: IndexConfig) -> dict[str, str]:
    """The ``extraMetadata`` entry a write with ``index`` records (none unless a bucket index)."""
    return {BUCKET_COUNT_KEY: str(index.num_buckets)} if index.is_bucket else {}


def check_bucket_count(timeline: Timeline, index: IndexConfig) -> None:
    """Refuse a bucket write whose count differs from the one the latest completed write recorded.
    Reads the latest completed write's instant file (and those of the table services completed after
    it: compaction and clustering record no count and are passed over)."""
    if not index.is_bucket:
        return
    for instant in reversed(timeline.completed()):
        metadata = timeline.read_metadata(instant)
        if metadata.get("operationType") in TABLE_SERVICE_OPERATIONS:
            continue
        recorded = (metadata.get("extraMetadata") or {}).get(BUCKET_COUNT_KEY)
        if recorded is not None and int(recorded) != index.num_buckets:
            raise HoodieConfigError(
                f"hoodie.bucket.index.num.buckets={index.num_buckets} but the table was written with "
                f"{recorded} buckets (commit {instant.timestamp}): the bucket count of a simple bucket index "
                f"table cannot change; write with hoodie.bucket.index.num.buckets={recorded}")
        return
