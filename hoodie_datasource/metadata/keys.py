"""The keys of the metadata table's records, and the file group of a partition that holds a key.

As Hudi 0.15 makes them (``HoodieMetadataPayload``, ``HoodieTableMetadataUtil``, ``HashID``):

- ``files``: a data partition's path, ``.`` for the table's one partition when it has none
  (``getPartitionIdentifierForFilesPartition``); the list of partitions is the record ``__all_partitions__``.
- ``column_stats``: ``ColumnIndexID + PartitionIndexID + FileIndexID``, each ``asBase64EncodedString``: the column
  name and the partition identifier hashed to 64 bits, the file name to 128 (``getColumnStatsIndexKey``).
- ``bloom_filters``: ``PartitionIndexID + FileIndexID`` (``getBloomFilterRecordKey``).
- ``record_index``: the record key itself.

A 64-bit id is XXHash64 of the UTF-8 bytes, big-endian; its seed is ``HashID.HASH_SEED``, the Java int
``0xdabadaba`` widened to a long, so the seed is ``0xffffffffdabadaba``, not ``0xdabadaba``. A 128-bit id is MD5.
Base64 is Java's standard encoder, with padding.

Which file group of a partition holds a key: ``mapRecordKeyToFileGroupIndex`` folds the key's UTF-16 code units as
``String.hashCode`` does and takes ``abs(abs(h) % n)`` (Java's ``%`` keeps the dividend's sign, and
``Math.abs(Integer.MIN_VALUE)`` is still negative); every partition's writer and reader route keys with it.
File groups are named ``<prefix><index, 4 digits>-0`` (``getFileIDForFileGroup``).

XXHash64 comes from the ``xxhash`` package (python-xxhash: bindings to the reference C library).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import xxhash

from hoodie_datasource.errors import CorruptFileError, HoodieConfigError, InvalidRecordError
from hoodie_datasource.table.string_hash import java_string_hashes

ALL_PARTITIONS_KEY = "__all_partitions__"  # HoodieTableMetadata.RECORDKEY_PARTITION_LIST
NON_PARTITIONED_NAME = "."  # HoodieTableMetadata.NON_PARTITIONED_NAME
HASH_SEED = 0xDABADABA - (1 << 32) + (1 << 64)  # HashID.HASH_SEED: the int -625288518 as an unsigned long
_INT_MIN = -(1 << 31)


def partition_identifier(partition: str) -> str:
    """The name a data partition goes by in the metadata table: ``.`` for ``""`` (the non-partitioned table)."""
    return NON_PARTITIONED_NAME if partition == "" else partition


def _base64(digest: bytes) -> str:
    return base64.b64encode(digest).decode("ascii")


def hash64_id(text: str) -> str:
    """``HashID.hash(text, BITS_64)`` as ``asBase64EncodedString`` gives it (``ColumnIndexID``, ``PartitionIndexID``)."""
    return _base64(xxhash.xxh64(text.encode("utf-8"), seed=HASH_SEED).digest())


def hash128_id(text: str) -> str:
    """``HashID.hash(text, BITS_128)`` (MD5) in base64 (``FileIndexID``)."""
    return _base64(hashlib.md5(text.encode("utf-8"), usedforsecurity=False).digest())


def _column_id(name: str) -> str:
    return hash64_id(name)


def _partition_id(partition: str) -> str:
    return hash64_id(partition_identifier(partition))


def column_stats_key(partition: str, file_name: str, column: str) -> str:
    """The ``column_stats`` key of one column of one file."""
    return _column_id(column) + _partition_id(partition) + hash128_id(file_name)


def column_stats_prefix(column: str, partition: str | None = None) -> str:
    """The start every ``column_stats`` key of ``column`` (in ``partition``, when given) has: what a prefix
    scan of the column's statistics looks for."""
    return _column_id(column) + ("" if partition is None else _partition_id(partition))


def bloom_filter_key(partition: str, file_name: str) -> str:
    """The ``bloom_filters`` key of one base file."""
    return _partition_id(partition) + hash128_id(file_name)


def _hashed(values: pa.Array | pa.ChunkedArray, hash_one: Callable[[str], str]) -> pa.Array:
    """``hash_one`` of every value, computed once per distinct value."""
    encoded = pc.dictionary_encode(values)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    if encoded.null_count:
        raise InvalidRecordError("A metadata-table key cannot be made from a null partition, file or column name")
    distinct = pa.array([hash_one(v) for v in encoded.dictionary.to_pylist()], pa.string())
    return distinct.take(encoded.indices)


def column_stats_keys(partitions: pa.Array, file_names: pa.Array, columns: pa.Array) -> pa.Array:
    """``column_stats_key`` of each row of three equally long string arrays."""
    return pc.binary_join_element_wise(_hashed(columns, _column_id), _hashed(partitions, _partition_id),
                                       _hashed(file_names, hash128_id), "")


def bloom_filter_keys(partitions: pa.Array, file_names: pa.Array) -> pa.Array:
    """``bloom_filter_key`` of each row of two equally long string arrays."""
    return pc.binary_join_element_wise(_hashed(partitions, _partition_id), _hashed(file_names, hash128_id), "")


def file_group_indexes(keys: pa.Array | pa.ChunkedArray, count: int) -> np.ndarray:
    """``mapRecordKeyToFileGroupIndex(key, count)`` of every key (int32): the file group, of a partition's
    ``count``, that holds the key."""
    if count <= 0:
        raise HoodieConfigError(f"A metadata-table partition has {count} file groups; it needs at least one")
    hashes = java_string_hashes(keys).view(np.int32).astype(np.int64)
    magnitude = np.where(hashes == _INT_MIN, hashes, np.abs(hashes))
    return np.abs(np.fmod(magnitude, count)).astype(np.int32)


def file_group_index_of(file_id: str) -> int:
    """The index in a metadata-table file group's id (``getFileGroupIndexFromFileId``): ``files-0000-0`` -> 0,
    and the ``-0`` is optional (0.10 wrote none)."""
    end = len(file_id) - 2 if file_id.endswith("-0") else len(file_id)
    start = file_id.rfind("-", 0, end) + 1
    try:
        return int(file_id[start:end])
    except ValueError:
        raise CorruptFileError(f"{file_id!r} is not the id of a metadata-table file group (<prefix><index>-0)") from None
