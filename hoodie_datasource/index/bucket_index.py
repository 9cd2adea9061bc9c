"""Apache Hudi's simple bucket index (``HoodieSimpleBucketIndex``): a record's file group is its bucket's, found
by hashing its key.

As ``HoodieSimpleBucketIndex.tagLocation``: each partition's bucket -> file group map comes from the file ids of
its latest file slices (``loadBucketIdToFileIdMappingForPartition``, the bucket number parsed from the file id);
a record whose bucket has a file group is sent to it (no bloom filter and no key read: the merge into that group
decides insert or update), and a record of a bucket without one goes to a new file group named after the bucket.
Every operation that writes records places them so, inserts and bulk inserts too (Hudi's
``HoodieBucketIndex.requiresTagging``).

The bucket count a table was written with is kept in its commits: Apache Hudi keeps nothing of a simple bucket
index in ``hoodie.properties`` (only the partition-level bucket index has a hashing config, under
``.hoodie/.bucket_index/partition_bucket_index_meta``), and its writers trust ``hoodie.bucket.index.num.buckets``
to be the same at every write. A different count sends existing keys to other buckets, so they would be written a
second time into other file groups: more buckets than the table has file groups for cannot be told from the file
ids. Each of our bucket writes therefore records its count in its commit's ``extraMetadata`` (a free map every
Hudi reader ignores), and a write with another count than the latest write recorded is refused before anything is
written. Tables whose latest write did not record one (written by Apache Hudi) are checked by their file ids
alone (``bucket_file_groups``).
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.config import keys as k
from hoodie_datasource.config.write_operation import WriteOperation
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.index.bucket_id import BUCKET_ID_DIGITS, bucket_id_of_file, bucket_ids, new_bucket_file_id
from hoodie_datasource.index.index import Index, TagScope
from hoodie_datasource.index.key_ranges import FileKeyRange, unranged
from hoodie_datasource.index.lookup import IndexCounts
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.meta_columns import (
    FILE_ID_COLUMN,
    IS_DELETE_COLUMN,
    LOCATION_PARTITION_COLUMN,
    PARTITION_PATH_COLUMN,
    RECORD_KEY_COLUMN,
)
from hoodie_datasource.timeline.timeline import Timeline

BUCKET_COUNT_KEY = k.BUCKET_NUM_BUCKETS.key
TABLE_SERVICE_OPERATIONS = frozenset({"COMPACT", "LOG_COMPACT", "CLUSTER"})  # Hudi's WriteOperationType names


def bucket_file_groups(files: Sequence[FileKeyRange], num_buckets: int) -> dict[tuple[str, int], str]:
    """(partition, bucket) -> file id of the table's file groups. A file id whose bucket is not below
    ``num_buckets`` means the table was written with more buckets: its count cannot change."""
    groups: dict[tuple[str, int], str] = {}
    for f in files:
        if not f.file_id[:BUCKET_ID_DIGITS].isdigit():
            raise HoodieConfigError(
                f"hoodie.index.type=BUCKET but file group {f.file_id} in partition {f.partition!r} carries no "
                "bucket number: the table was written with another index, which cannot change to BUCKET")
        bucket = bucket_id_of_file(f.file_id)
        if bucket >= num_buckets:
            raise HoodieConfigError(
                f"hoodie.bucket.index.num.buckets={num_buckets} but the table has file group {f.file_id} of "
                f"bucket {bucket} in partition {f.partition!r}, so it was written with at least {bucket + 1} "
                "buckets, or with another index (a random file id may begin with 8 digits): the bucket count "
                "of a simple bucket index table cannot change, nor can another index change to BUCKET")
        other = groups.setdefault((f.partition, bucket), f.file_id)
        if other != f.file_id:
            raise HoodieConfigError(
                f"Partition {f.partition!r} has two file groups of bucket {bucket}: {other} and {f.file_id}")
    return groups


class BucketIndex(Index):
    places_by_hash = True

    def requires_tagging(self, operation: WriteOperation) -> bool:
        """Every operation that writes records (Hudi's list: insert, insert_overwrite, upsert, delete and bulk_insert;
        an insert_overwrite_table goes to its buckets' new file groups alike)."""
        return not operation.drops_partitions

    def file_ranges(self, storage: Storage, slices: Sequence[FileSlice]) -> list[FileKeyRange]:
        """Every slice, its footers unread (file ids alone place records; a slice of log files only is its bucket's
        file group, as in Hudi's ``HoodieSimpleBucketIndex.loadPartitionBucketIdFileIdMapping``), checked against
        the bucket count before anything is written (``bucket_file_groups``)."""
        files = [unranged(s) for s in slices]
        bucket_file_groups(files, self.config.num_buckets)
        return files

    def tag(self, records: pa.Table, files: Sequence[FileKeyRange], scope: TagScope
            ) -> tuple[pa.Table, IndexCounts | None]:
        """``records`` with the file id of their bucket's file group (a new one when the bucket has none) and, for
        an existing group, its partition as the location. A delete of a bucket without a file group has nothing to
        delete: its file id stays null, so routing drops it. An overwrite writes every bucket into a new file group,
        as the groups of ``files`` are replaced (Hudi's ``SparkBucketIndexPartitioner.getBucketInfo``: "Insert
        overwrite always generates new bucket file id"). Any slice of a batch is tagged alike; nothing is counted."""
        groups = {} if scope.overwrite else bucket_file_groups(files, self.config.num_buckets)
        buckets = bucket_ids(records.column(RECORD_KEY_COLUMN), self.config.bucket_hash_fields, self.config.num_buckets)
        parts = records.column(PARTITION_PATH_COLUMN).combine_chunks()
        pairs = pc.binary_join_element_wise(parts, pc.cast(pa.array(buckets), pa.string()), "\x00")
        encoded = pc.dictionary_encode(pairs)
        file_ids: list[str | None] = []
        located: list[str | None] = []
        for joined in encoded.dictionary.to_pylist():  # one per (partition, bucket), not per record
            partition, bucket = joined.split("\x00")
            existing = groups.get((partition, int(bucket)))
            file_ids.append(existing or new_bucket_file_id(scope.instant, partition, int(bucket)))
            located.append(partition if existing else None)
        codes = encoded.indices
        file_id = pc.take(pa.array(file_ids, pa.string()), codes)
        location = pc.take(pa.array(located, pa.string()), codes)
        deletes = pc.fill_null(records.column(IS_DELETE_COLUMN).combine_chunks(), False)
        file_id = pc.if_else(pc.and_(deletes, pc.is_null(location)), pa.scalar(None, pa.string()), file_id)
        tagged = records.append_column(FILE_ID_COLUMN, file_id).append_column(LOCATION_PARTITION_COLUMN, location)
        return tagged, None

    def check_table(self, timeline: Timeline) -> None:
        """Refuse a write whose bucket count differs from the one the latest completed write recorded. Reads the
        latest completed write's instant file (and those of the table services completed after it: compaction
        and clustering record no count and are passed over)."""
        for instant in reversed(timeline.completed()):
            metadata = timeline.read_metadata(instant)
            if metadata.get("operationType") in TABLE_SERVICE_OPERATIONS:
                continue
            recorded = (metadata.get("extraMetadata") or {}).get(BUCKET_COUNT_KEY)
            if recorded is not None and int(recorded) != self.config.num_buckets:
                raise HoodieConfigError(
                    f"hoodie.bucket.index.num.buckets={self.config.num_buckets} but the table was written with "
                    f"{recorded} buckets (commit {instant.timestamp}): the bucket count of a simple bucket index "
                    f"table cannot change; write with hoodie.bucket.index.num.buckets={recorded}")
            return

    def commit_metadata(self) -> dict[str, str]:
        """The bucket count, which the next write checks (``check_table``)."""
        return {BUCKET_COUNT_KEY: str(self.config.num_buckets)}
