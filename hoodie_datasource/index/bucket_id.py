"""Apache Hudi's simple bucket index: a record's bucket and the file ids that carry it.

Hudi's ``BucketIdentifier`` (hudi-client-common, org.apache.hudi.index.bucket):

    getBucketId(hashKeys, n)  = (hashKeys.hashCode() & Integer.MAX_VALUE) % n
    getHashKeys(recordKey, f) = KeyGenUtils.extractRecordKeysByFields(recordKey, f)
    bucketIdFromFileId(id)    = Integer.parseInt(id.substring(0, 8))
    newBucketFileIdPrefix(b)  = FSUtils.createNewFileIdPfx() (a UUID) with its first 8 chars
                                replaced by String.format("%08d", b); the file id is that + "-0"

``KeyGenUtils.extractRecordKeysByFields`` splits the record key on "," and each part on its first
":"; a part without ":" is a value (a simple key), taken as it is; a "field:value" part counts only when
its field is a hash field, and there the placeholders ``__null__`` / ``__empty__`` stand for null / "". The values
keep the record key's order. (This is the String.split form of Hudi 0.14/0.15, the table version
we write; Hudi 1.1 rewrote it to scan for separators, which hashes a key lacking either "," or ":"
whole, e.g. a single-field ComplexKeyGenerator key "id:1", and lets values hold ",".)
``List.hashCode`` is ``h = 31 * h + (e == null ? 0 : e.hashCode())`` from 1, and
``String.hashCode`` the same fold, from 0, over UTF-16 code units (``table.string_hash``); both wrap at 32 bits.
Everything here runs on whole Arrow arrays with numpy (no Python loop per record).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.table.file_names import new_file_id
from hoodie_datasource.table.string_hash import java_string_hashes

NULL_PLACEHOLDER = "__null__"  # KeyGenUtils.NULL_RECORDKEY_PLACEHOLDER
EMPTY_PLACEHOLDER = "__empty__"  # KeyGenUtils.EMPTY_RECORDKEY_PLACEHOLDER
BUCKET_ID_DIGITS = 8


def hash_key_values(record_keys: pa.Array | pa.ChunkedArray, hash_fields: Sequence[str]
                    ) -> tuple[pa.Array, np.ndarray]:
    """``extractRecordKeysByFields`` over every key: the flat hash values (null for ``__null__``)
    and each value's record (row) number, in record key order."""
    if isinstance(record_keys, pa.ChunkedArray):
        record_keys = record_keys.combine_chunks()
    if record_keys.null_count == 0 and not pc.any(pc.match_substring_regex(record_keys, "[,:]")).as_py():
        # no key has a separator: each is its one value, taken as it is
        return record_keys, np.arange(len(record_keys), dtype=np.int64)
    parts = pc.split_pattern(record_keys, ",")
    rows = pc.list_parent_indices(parts).to_numpy(zero_copy_only=False)
    flat = pc.list_flatten(parts)
    # Java's String.split drops trailing empty strings ("a," -> ["a"], "," -> []) unless nothing
    # was split ("" -> [""])
    counts = pc.list_value_length(parts).to_numpy(zero_copy_only=False).astype(np.int64)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    position = np.arange(len(rows), dtype=np.int64) - starts[rows]
    last_filled = np.full(len(counts), -1, dtype=np.int64)
    filled = pc.greater(pc.utf8_length(flat), 0).to_numpy(zero_copy_only=False)
    np.maximum.at(last_filled, rows[filled], position[filled])
    kept = (position <= last_filled[rows]) | (counts[rows] == 1)
    flat, rows = pc.filter(flat, pa.array(kept)), rows[kept]
    has_field = pc.match_substring(flat, ":")
    field = pc.replace_substring_regex(flat, "(?s):.*$", "", max_replacements=1)
    value = pc.if_else(has_field, pc.replace_substring_regex(flat, "^[^:]*:", "", max_replacements=1), flat)
    keep = pc.or_(pc.invert(has_field), pc.is_in(field, value_set=pa.array(list(hash_fields), pa.string())))
    # the placeholders stand for "" and null only in a "field:value" part; a bare value is taken as it is
    value = pc.if_else(pc.and_(has_field, pc.equal(value, EMPTY_PLACEHOLDER)), "", value)
    value = pc.if_else(pc.and_(has_field, pc.equal(value, NULL_PLACEHOLDER)), pa.scalar(None, pa.string()), value)
    keep_np = keep.to_numpy(zero_copy_only=False)
    return pc.filter(value, keep), rows[keep_np]


def bucket_ids(record_keys: pa.Array | pa.ChunkedArray, hash_fields: Sequence[str], num_buckets: int) -> np.ndarray:
    """``BucketIdentifier.getBucketId(recordKey, hashFields, numBuckets)`` of every record key (int32)."""
    n = len(record_keys)
    values, rows = hash_key_values(record_keys, hash_fields)
    element = java_string_hashes(values).astype(np.uint64)
    # List.hashCode unrolled: 31^k + sum(e_i * 31^(k-1-i)) over a list of k elements, mod 2^32
    counts = np.bincount(rows, minlength=n).astype(np.int64)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    position = np.arange(len(rows), dtype=np.int64) - starts[rows]
    longest = int(counts.max()) if n else 0
    powers = np.ones(longest + 1, dtype=np.uint64)
    for i in range(1, longest + 1):
        powers[i] = (powers[i - 1] * np.uint64(31)) & np.uint64(0xFFFFFFFF)
    terms = (element * powers[counts[rows] - 1 - position]) & np.uint64(0xFFFFFFFF)
    total = powers[counts].copy()
    np.add.at(total, rows, terms)
    hashes = (total & np.uint64(0x7FFFFFFF)).astype(np.int64)  # & Integer.MAX_VALUE drops the sign bit
    return (hashes % num_buckets).astype(np.int32)


def bucket_id_of_file(file_id: str) -> int:
    """``BucketIdentifier.bucketIdFromFileId``: the file id's first 8 characters as a number."""
    return int(file_id[:BUCKET_ID_DIGITS])


def new_bucket_file_id(instant: str, partition: str, bucket: int) -> str:
    """A new file group id for ``bucket``: a UUID file id (derived from the instant, partition and
    bucket, so a retried task names the same file) whose first 8 characters are the zero-padded
    bucket number, as ``BucketIdentifier.newBucketFileIdPrefix`` + ``FSUtils.createNewFileId`` make."""
    return f"{bucket:0{BUCKET_ID_DIGITS}d}" + new_file_id(instant, partition, bucket)[BUCKET_ID_DIGITS:]
