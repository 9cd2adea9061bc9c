"""Timestamp-based and custom key generators against Apache Hudi 0.15 itself: Java writes the same rows with the
same options as we do, and every record has the same record key and partition path in both tables (read from the
base files: Hudi 0.15's own reader cannot read a timestamp-partitioned table whose partition column is not a
string, a ClassCastException); ``hoodie.properties`` records the same key generator, fields and options; then
Java upserts our table (updates and new keys) and no key is held twice.

Hudi-side options: ``TimestampBasedAvroKeyGenerator``'s (``hoodie.keygen.timebased.*``) and the datasource's
(DataSourceWriteOptions), the metadata table off on both sides (``hoodie.metadata.enable=false``)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.properties_file import parse_properties
from hoodie_datasource.read.table_reader import read_table
from tests.hudi_oracle import HUDI_0_15

pytestmark = pytest.mark.hudi_oracle

P = "hoodie.keygen.timebased."
BASE = {"hoodie.table.name": "events", "hoodie.datasource.write.precombine.field": "seq",
        "hoodie.metadata.enable": "false", "hoodie.datasource.write.operation": "upsert"}
CASES = {
    # epoch milliseconds, formatted to the hour in India, hive style
    "timestamp": {**BASE, "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
                  "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "ms",
                  P + "timestamp.type": "EPOCHMILLISECONDS", P + "output.dateformat": "yyyy/MM/dd/HH",
                  P + "output.timezone": "Asia/Kolkata", "hoodie.datasource.write.hive_style_partitioning": "true"},
    # a string field as it is, then local New York times (two formats) printed in UTC; a complex record key
    "custom": {**BASE, "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator",
               "hoodie.datasource.write.recordkey.field": "id,region",
               "hoodie.datasource.write.partitionpath.field": "region:SIMPLE,local:TIMESTAMP",
               P + "timestamp.type": "DATE_STRING", P + "input.dateformat": "yyyy-MM-dd HH:mm:ss,yyyy-MM-dd",
               P + "input.timezone": "America/New_York", P + "output.dateformat": "yyyyMMdd'T'HH",
               P + "output.timezone": "UTC"},
    # seconds, in the default zone (the JVM's and ours: the machine's), url encoded
    "unix_seconds": {**BASE, "hoodie.datasource.write.keygenerator.class":
                     "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
                     "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field":
                     "secs", P + "timestamp.type": "UNIX_TIMESTAMP", P + "output.dateformat": "yyyy-MM-dd HH:mm",
                     "hoodie.datasource.write.partitionpath.urlencode": "true"},
}


def rows(ids: list[int], seq: int) -> pa.Table:
    n = len(ids)
    ms = [None if i % 7 == 3 else 1_700_000_000_000 + i * 3_517_000_123 for i in ids]
    local = [None if i % 5 == 4 else (f"2024-03-{1 + i % 28:02d} {i % 24:02d}:30:00" if i % 3 else
                                      f"2024-11-{1 + i % 28:02d}") for i in ids]
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "region": [None if i % 6 == 5 else ["sf", "new york", "a/b"][i % 3] for i in ids],
        "ms": pa.array(ms, pa.int64()),
        "secs": pa.array([None if m is None else m // 1000 for m in ms], pa.int64()),
        "local": local,
        "seq": pa.array([seq] * n, pa.int64()),
    })


def keys_and_paths(path: Path) -> list[tuple[str, str]]:
    """(record key, partition path) of every record in the table's parquet files (one commit: all current)."""
    files = [f for f in path.rglob("*.parquet") if ".hoodie" not in f.relative_to(path).parts]
    return sorted((k, p) for f in files for k, p in zip(
        *(pq.read_table(f, columns=["_hoodie_record_key", "_hoodie_partition_path"]).column(c).to_pylist()
          for c in ("_hoodie_record_key", "_hoodie_partition_path"))))


def recorded(path: Path) -> dict[str, str]:
    props = parse_properties((path / ".hoodie" / "hoodie.properties").read_text("latin-1"))
    return {k: v for k, v in props.items() if k.startswith(("hoodie.keygen.", "hoodie.table.keygenerator",
                                                           "hoodie.table.partition.fields", "hoodie.table.recordkey",
                                                           "hoodie.datasource.write."))}


@pytest.mark.parametrize("hudi", [HUDI_0_15], indirect=True)
def test_java_hudi_makes_the_same_keys_and_paths_and_upserts_ours(hudi, tmp_path):
    first = rows(list(range(40)), 1)
    for name, options in CASES.items():
        java, ours = tmp_path / f"java_{name}", tmp_path / f"ours_{name}"
        hudi.write(str(java), first, options)
        write_local(str(ours), first, options)
        expected = keys_and_paths(java)
        assert len(expected) == first.num_rows and len({p for _, p in expected}) > 10, name
        assert keys_and_paths(ours) == expected, name
        assert recorded(ours) == recorded(java), name

        # Java upserts our table: half the keys again (same partition values, a new seq), and new keys
        again = rows(list(range(20, 60)), 2)
        hudi.write(str(ours), again, options)
        table = read_table(str(ours))
        stored_keys = table.column("_hoodie_record_key").to_pylist()
        assert len(stored_keys) == len(set(stored_keys)) == 60, name
        seqs = dict(zip(table.column("id").to_pylist(), table.column("seq").to_pylist()))
        assert seqs == {i: 1 if i < 20 else 2 for i in range(60)}, name
        # and its paths for the new keys are ours: Java's and our rendering of them, the same
        write_local(str(java), again, options)
        java_table = read_table(str(java))
        assert sorted(zip(java_table.column("_hoodie_record_key").to_pylist(),
                          java_table.column("_hoodie_partition_path").to_pylist())) == \
            sorted(zip(stored_keys, table.column("_hoodie_partition_path").to_pylist())), name
