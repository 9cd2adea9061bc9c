"""Small tables for the read client's tests (tests/unit/test_read_client.py, tests/spark/test_read_client.py), written
by the local engine under each index, and what a lookup of their keys must answer, worked out from a snapshot read.

``history`` writes keys k00..k29 (even in partition x, odd in y) in three inserts, so a partition has several file
groups (no small-file packing; a bucket index: a group per bucket), then: k00 updated, k03 written with partition x
(a global index moves it; a partition-local one keeps it in y and adds it to x), k30 inserted (a merge-on-read bucket
index puts it in a log file of its bucket's group), k06 deleted. On merge-on-read tables the update and the delete are
log blocks."""

from __future__ import annotations

import pyarrow as pa

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.table.meta_columns import PARTITION_PATH_COLUMN, RECORD_KEY_COLUMN

INDEXES = ("BLOOM", "GLOBAL_BLOOM", "SIMPLE", "GLOBAL_SIMPLE", "BUCKET", "RECORD_INDEX")
TABLE_TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")
SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("p", pa.string()), ("v", pa.int64())])
# (id, p) asked: updated, in its partition and, moved or copied, in another, deleted, new, absent, held and asked
# twice, no key, in a partition it is not in, held, absent and asked twice
ASKED = [("k00", "x"), ("k03", "y"), ("k03", "x"), ("k06", "x"), ("k30", "x"), ("k99", "x"), ("k00", "x"),
         (None, "x"), ("k01", "x"), ("k02", "x"), ("k99", "x")]


def options(index: str, table_type: str) -> dict[str, str]:
    """The table's write options; the index ones are what a lookup takes (``index_options``)."""
    return {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.parquet.small.file.limit": "0",
            **index_options(index)}


# the record index kept in 3 file groups; a key written with another partition moves, as under the other global
# indexes (Hudi's default for the record index updates it where it is)
RECORD_INDEX_OPTIONS = {"hoodie.metadata.record.index.enable": "true", "hoodie.record.index.update.partition.path": "true",
                        "hoodie.metadata.record.index.min.filegroup.count": "3",
                        "hoodie.metadata.record.index.max.filegroup.count": "3"}


def index_options(index: str) -> dict[str, str]:
    return {"hoodie.index.type": index, **({"hoodie.bucket.index.num.buckets": "4"} if index == "BUCKET" else {}),
            **(RECORD_INDEX_OPTIONS if index == "RECORD_INDEX" else {})}


def is_global(index: str) -> bool:
    return index.startswith("GLOBAL") or index == "RECORD_INDEX"


def rows(*records: tuple) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(SCHEMA.names, r)) for r in records], schema=SCHEMA)


def history(path: str, index: str, table_type: str) -> None:
    opts = options(index, table_type)
    for shift in range(3):
        write_local(path, rows(*[(f"k{i:02d}", 1, "xy"[i % 2], i) for i in range(shift, 30, 3)]),
                    {**opts, "hoodie.datasource.write.operation": "insert"})
    write_local(path, rows(("k00", 2, "x", 100), ("k03", 2, "x", 103), ("k30", 2, "x", 130)), opts)
    write_local(path, rows(("k06", 3, "x", 6)), {**opts, "hoodie.datasource.write.operation": "delete"})


def asked(pairs: list[tuple] = ASKED) -> pa.Table:
    """Keys as a lookup takes them: the record key and partition fields."""
    return pa.table({"id": pa.array([i for i, _ in pairs], pa.string()), "p": pa.array([p for _, p in pairs])})


def identities(ids: list, partitions: list, is_global: bool) -> list:
    return list(ids) if is_global else list(zip(ids, partitions))


def expected_records(snapshot: pa.Table, keys: pa.Table, is_global: bool) -> list[dict]:
    """The snapshot's records of ``keys`` (by record key, and partition unless the index is global), sorted."""
    wanted = set(identities(keys.column("id").to_pylist(), keys.column("p").to_pylist(), is_global))
    stored = identities(snapshot.column(RECORD_KEY_COLUMN).to_pylist(),
                        snapshot.column(PARTITION_PATH_COLUMN).to_pylist(), is_global)
    return sorted((r for r, key in zip(snapshot.to_pylist(), stored) if key in wanted), key=_order)


def expected_new(snapshot: pa.Table, records: pa.Table, is_global: bool) -> list[dict]:
    """The rows of ``records`` whose keys the snapshot does not hold, in order."""
    held = set(identities(snapshot.column(RECORD_KEY_COLUMN).to_pylist(),
                          snapshot.column(PARTITION_PATH_COLUMN).to_pylist(), is_global))
    keys = identities(records.column("id").to_pylist(), records.column("p").to_pylist(), is_global)
    return [r for r, key in zip(records.to_pylist(), keys) if key not in held]


def _order(record: dict) -> tuple:
    return record[RECORD_KEY_COLUMN], record[PARTITION_PATH_COLUMN]


def sorted_records(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=_order)
