"""Tables we write (``write_local``) with each of Hudi's indexes but BLOOM (``test_hudi_reads_ours``), read by
Apache Hudi itself (0.15.0 and 1.1.1 on Spark 3.5): snapshot, read-optimized, time travel, incremental and the
CDC query, every column compared, ``_hoodie_*`` included (``test_hudi_reads_ours`` reads a begin/end window and
every instant of the same history on BLOOM tables).

Each table is COW and MOR, with its own shape and CDC supplemental logging mode, so each of the three modes is
read on both table types:

* GLOBAL_BLOOM, partitioned by ``city``, ``hoodie.bloom.index.update.partition.path=true``: key ``c`` moves
  from ``sf`` to ``nyc`` (a delete in the old partition, an insert in the new); CDC DATA_BEFORE_AFTER.
* GLOBAL_SIMPLE, the same with ``hoodie.simple.index.update.partition.path=true``; CDC DATA_BEFORE.
* SIMPLE, non-partitioned, complex key ``id,seats``: ``c``'s new city is an update; CDC DATA_BEFORE.
* BUCKET (``hoodie.index.type=BUCKET``, ``hoodie.bucket.index.num.buckets=4``,
  ``hoodie.bucket.index.hash.field=id``), partitioned, complex key ``id,seats``: ``c`` in ``nyc`` is a
  second record beside the one in ``sf``, as with any index that is not global; CDC OP_KEY_ONLY. Java's
  ``BucketIdentifier`` maps each record's key to the bucket its file id names.

Hudi-side read options, as Hudi names them: ``hoodie.datasource.query.type``,
``hoodie.datasource.read.begin.instanttime`` / ``end.instanttime``, ``as.of.instant``,
``hoodie.datasource.query.incremental.format=cdc``; Hudi reads everything else from ``hoodie.properties``."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.table_reader import read_table
from tests.hudi_oracle import HudiOracle, assert_same_table, cdc_changes, skip_hudi_1_mor_cdc
from tests.hudi_oracle.test_hudi_reads_ours import rows

pytestmark = pytest.mark.hudi_oracle

TABLE_TYPES = ["COPY_ON_WRITE", "MERGE_ON_READ"]
BUCKETS = 4
SHAPES = {
    "GLOBAL_BLOOM": ({"hoodie.index.type": "GLOBAL_BLOOM", "hoodie.bloom.index.update.partition.path": "true",
                      "hoodie.datasource.write.partitionpath.field": "city",
                      "hoodie.table.cdc.supplemental.logging.mode": "DATA_BEFORE_AFTER"},
                     [("a", "sf"), ("c", "nyc"), ("dd", "la")]),
    "GLOBAL_SIMPLE": ({"hoodie.index.type": "GLOBAL_SIMPLE", "hoodie.simple.index.update.partition.path": "true",
                       "hoodie.datasource.write.partitionpath.field": "city",
                       "hoodie.table.cdc.supplemental.logging.mode": "DATA_BEFORE"},
                      [("a", "sf"), ("c", "nyc"), ("dd", "la")]),
    "SIMPLE": ({"hoodie.index.type": "SIMPLE", "hoodie.datasource.write.recordkey.field": "id,seats",
                "hoodie.table.cdc.supplemental.logging.mode": "DATA_BEFORE"},
               [("a", "sf"), ("c", "nyc"), ("dd", "la")]),
    "BUCKET": ({"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": str(BUCKETS),
                "hoodie.bucket.index.hash.field": "id", "hoodie.datasource.write.recordkey.field": "id,seats",
                "hoodie.datasource.write.partitionpath.field": "city",
                "hoodie.table.cdc.supplemental.logging.mode": "OP_KEY_ONLY"},
               [("a", "sf"), ("c", "nyc"), ("c", "sf"), ("dd", "la")]),
}
# the changes of the history (op, id) a CDC query from the start returns
CHANGES = {
    "GLOBAL_BLOOM": [("d", "b"), ("d", "c"), ("i", "a"), ("i", "b"), ("i", "c"), ("i", "c"), ("i", "dd"), ("u", "a")],
    "GLOBAL_SIMPLE": [("d", "b"), ("d", "c"), ("i", "a"), ("i", "b"), ("i", "c"), ("i", "c"), ("i", "dd"), ("u", "a")],
    "SIMPLE": [("d", "b"), ("i", "a"), ("i", "b"), ("i", "c"), ("i", "dd"), ("u", "a"), ("u", "c")],
    "BUCKET": [("d", "b"), ("i", "a"), ("i", "b"), ("i", "c"), ("i", "c"), ("i", "dd"), ("u", "a")],
}


@dataclass(frozen=True)
class Written:
    path: str
    instants: list[str]  # insert, upsert, delete


def write_history(path: str, options: dict) -> Written:
    """An insert (a, b, c), an upsert (a updated, dd new, c with another city), a delete (b)."""
    t1 = write_local(path, rows(["a", "b", "c"], [1, 1, 1], ["sf", "nyc", "sf"], [1.0, 2.0, 3.0]),
                     {**options, "hoodie.datasource.write.operation": "insert"})
    t2 = write_local(path, rows(["a", "dd", "c"], [2, 2, 2], ["sf", "la", "nyc"], [1.5, 4.0, 5.0]),
                     {**options, "hoodie.datasource.write.operation": "upsert"})
    t3 = write_local(path, rows(["b"], [3], ["nyc"], [0.0]), {**options, "hoodie.datasource.write.operation": "delete"})
    return Written(path, [t1, t2, t3])


@pytest.fixture(scope="module")
def tables(hudi, tmp_path_factory) -> dict[tuple[str, str], Written]:
    """Every (index, table type) table, written once per Hudi version (a Java read never changes them, but
    each version reads tables no other process opened)."""
    root = tmp_path_factory.mktemp(f"indexes-{hudi.version}")
    out = {}
    for index, (shape, _) in SHAPES.items():
        for table_type in TABLE_TYPES:
            options = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "id",
                       "hoodie.datasource.write.precombine.field": "ts",
                       "hoodie.datasource.write.table.type": table_type, "hoodie.table.cdc.enabled": "true", **shape}
            out[(index, table_type)] = write_history(str(root / f"{index}-{table_type}"), options)
    return out


@pytest.mark.parametrize("table_type", TABLE_TYPES)
@pytest.mark.parametrize("index", list(SHAPES))
def test_hudi_reads_our_index_table(hudi, tables, index, table_type):
    written = tables[(index, table_type)]
    path, (t1, t2, _) = written.path, written.instants
    java = hudi.read(path)
    assert sorted(zip(java.column("id").to_pylist(), java.column("city").to_pylist())) == SHAPES[index][1]
    assert_same_table(java, read_table(path))
    if table_type == "MERGE_ON_READ":
        assert_same_table(hudi.read(path, {"hoodie.datasource.query.type": "read_optimized"}),
                          read_table(path, ReadConfig(query_type="read_optimized")))
    # as of the upsert that moved (or added, or updated) c; incrementally over the upsert and the delete
    assert_same_table(hudi.read(path, {"as.of.instant": t2}), read_table(path, ReadConfig(as_of_instant=t2)))
    incremental = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": t1}
    assert_same_table(hudi.read(path, incremental), read_table(path, ReadConfig(query_type="incremental",
                                                                                begin_instant=t1)))


@pytest.mark.parametrize("table_type", TABLE_TYPES)
@pytest.mark.parametrize("index", list(SHAPES))
def test_hudi_reads_our_cdc_in_each_logging_mode(hudi, tables, index, table_type):
    skip_hudi_1_mor_cdc(hudi, table_type)
    path = tables[(index, table_type)].path
    cdc = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.query.incremental.format": "cdc",
           "hoodie.datasource.read.begin.instanttime": "000"}
    java = cdc_changes(hudi.read(path, cdc))
    ours = cdc_changes(read_table(path, ReadConfig(query_type="incremental", begin_instant="000",
                                                   incremental_format="cdc")))
    assert sorted((op, dict(before or after)["id"]) for op, _, before, after in java) == CHANGES[index]
    assert ours == java


def java_buckets(hudi: HudiOracle, pairs: list[tuple[str, str]]) -> list[tuple[int, int]]:
    """For each (record key, file id): Java's ``BucketIdentifier.getBucketId(key, "id", BUCKETS)`` and
    ``BucketIdentifier.bucketIdFromFileId(file id)``, through Spark SQL's ``reflect``."""
    values = ", ".join(f"('{key}', '{file_id}')" for key, file_id in pairs)
    identifier = "'org.apache.hudi.index.bucket.BucketIdentifier'"
    answer = hudi.sql(f"SELECT reflect({identifier}, 'getBucketId', k, 'id', {BUCKETS}) AS key_bucket, "
                      f"reflect({identifier}, 'bucketIdFromFileId', f) AS file_bucket FROM VALUES {values} AS t(k, f)",
                      result=True)
    return [(int(r["key_bucket"]), int(r["file_bucket"])) for r in answer.to_pylist()]


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_bucket_file_ids_are_the_buckets_java_computes(hudi, tables, table_type):
    """Every record sits in the file group Java's bucket index looks it up in: the bucket its file id names
    (``00000002-<uuid>-0``) is Java's hash of the record key's ``id`` part, for all our records (a Java write
    would otherwise start a second file group for the bucket)."""
    java = hudi.read(tables[("BUCKET", table_type)].path)
    file_ids = [name.split("_")[0] for name in java.column("_hoodie_file_name").to_pylist()]
    keys = java.column("_hoodie_record_key").to_pylist()
    assert all(k.startswith("id:") and ",seats:" in k for k in keys)
    buckets = java_buckets(hudi, list(zip(keys, file_ids)))
    assert all(key_bucket == file_bucket for key_bucket, file_bucket in buckets), list(zip(keys, file_ids, buckets))
    assert len({b for b, _ in buckets}) > 1  # the keys spread over buckets: the check is not one bucket for all
    assert all(f.endswith("-0") and len(f.split("-")[0]) == 8 for f in file_ids)

