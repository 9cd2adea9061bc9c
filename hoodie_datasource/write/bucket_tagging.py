"""Tagging under Hudi's simple bucket index: a record's file group is its bucket's, found by hashing.

As Hudi's ``HoodieSimpleBucketIndex.tagLocation``: each partition's bucket -> file group map comes
from the file ids of its latest file slices (``loadBucketIdToFileIdMappingForPartition``, the
bucket number parsed from the file id); a record whose bucket has a file group is sent to it (no
bloom filter and no key read: the merge into that group decides insert or update), and a record of
a bucket without one goes to a new file group named after the bucket. Every operation places
records so, inserts and bulk inserts too.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.config.write_config import IndexConfig
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.index.bucket_id import BUCKET_ID_DIGITS, bucket_id_of_file, bucket_ids, new_bucket_file_id
from hoodie_datasource.index.key_ranges import FileKeyRange
from hoodie_datasource.table.meta_columns import (
    FILE_ID_COLUMN,
    IS_DELETE_COLUMN,
    LOCATION_PARTITION_COLUMN,
    PARTITION_PATH_COLUMN,
    RECORD_KEY_COLUMN,
)


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


def bucket_tag(records: pa.Table, files: Sequence[FileKeyRange], index: IndexConfig, instant: str,
               overwrite: bool = False) -> pa.Table:
    """``records`` with the file id of their bucket's file group (a new one when the bucket has none)
    and, for an existing group, its partition as the location. A delete of a bucket without a file
    group has nothing to delete: its file id stays null, so routing drops it. An ``overwrite`` writes
    every bucket into a new file group, as the groups of ``files`` are replaced (Hudi's
    ``SparkBucketIndexPartitioner.getBucketInfo``: "Insert overwrite always generates new bucket file id")."""
    groups = bucket_file_groups(files, index.num_buckets)
    if overwrite:
        groups = {}
    buckets = bucket_ids(records.column(RECORD_KEY_COLUMN), index.bucket_hash_fields, index.num_buckets)
    parts = records.column(PARTITION_PATH_COLUMN).combine_chunks()
    pairs = pc.binary_join_element_wise(parts, pc.cast(pa.array(buckets), pa.string()), "\x00")
    encoded = pc.dictionary_encode(pairs)
    file_ids: list[str | None] = []
    located: list[str | None] = []
    for joined in encoded.dictionary.to_pylist():  # one per (partition, bucket), not per record
        partition, bucket = joined.split("\x00")
        existing = groups.get((partition, int(bucket)))
        file_ids.append(existing or new_bucket_file_id(instant, partition, int(bucket)))
        located.append(partition if existing else None)
    codes = encoded.indices
    file_id = pc.take(pa.array(file_ids, pa.string()), codes)
    location = pc.take(pa.array(located, pa.string()), codes)
    deletes = pc.fill_null(records.column(IS_DELETE_COLUMN).combine_chunks(), False)
    file_id = pc.if_else(pc.and_(deletes, pc.is_null(location)), pa.scalar(None, pa.string()), file_id)
    return records.append_column(FILE_ID_COLUMN, file_id).append_column(LOCATION_PARTITION_COLUMN, location)
