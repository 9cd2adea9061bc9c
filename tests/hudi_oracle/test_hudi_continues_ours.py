"""Tables we write, continued by Apache Hudi itself (0.15.0, and 1.1.1 with ``hoodie.write.table.version=6``):
Java upserts, deletes, compacts (MOR) and cleans them, with its metadata table off and on (then Java builds
one on our table and reads through it); our reader, hudi-rs and Java then agree row for row, every column
included, and again after we write on (our writer continues the metadata table Java kept, or builds one where
Java's writer deleted it, and it lists exactly the committed files). On a bucket-index table Java's records land
in our file groups.

Hudi-side options (DataSourceWriteOptions and HoodieWriteConfig names): every Java write and service takes
``java_options``: ours (``test_hudi_reads_ours.our_options``: table name, record key ``id``, precombine
field ``ts``, table type, partition path field ``city`` or none), ``hoodie.metadata.enable`` as the case
says, ``hoodie.compact.inline=false`` (a MOR write would otherwise compact by itself every 5 delta commits:
the compaction here is Java's ``CALL run_compaction(op => 'scheduleandexecute')`` with
``hoodie.compact.inline.max.delta.commits=1``), and on 1.x ``hoodie.write.table.version=6``; the cleaner
(``CALL run_clean``) keeps one commit, ``hoodie.cleaner.commits.retained=1``; the bucket table adds
``BUCKET`` on both sides. Java reads with ``hoodie.metadata.enable`` as it wrote."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.read.table_reader import read_table
from tests.hudi_oracle import HUDI_0_15, HudiOracle, assert_same_table
from tests.hudi_oracle.test_hudi_reads_ours import our_options, rows, write_history
from tests.hudi_oracle.test_we_continue_hudis import BUCKET, assert_table_version_6, file_groups_by_bucket, key_ts
from tests.hudi_tables import hudi_rs
from tests.metadata_checks import assert_metadata_table_true

pytestmark = pytest.mark.hudi_oracle

NON_PARTITIONED = {"hoodie.datasource.write.partitionpath.field": "",
                   "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator"}


def java_options(hudi: HudiOracle, table_type: str, partitioned: bool, metadata: bool) -> dict:
    options = {**our_options(table_type, partitioned), "hoodie.metadata.enable": str(metadata).lower(),
               "hoodie.compact.inline": "false"}
    if not partitioned:
        options.update(NON_PARTITIONED)
    if hudi.version != HUDI_0_15:
        options["hoodie.write.table.version"] = "6"
    return options


def assert_all_read_alike(hudi: HudiOracle, path: str, metadata: bool, expected: list[tuple]) -> None:
    java = hudi.read(path, {"hoodie.metadata.enable": str(metadata).lower()})
    assert key_ts(java) == expected
    assert_same_table(java, read_table(path))
    assert_same_table(java, hudi_rs(path))


# (table type, partitioned, Java's metadata table): every value of each, in two tables
CASES = [("COPY_ON_WRITE", True, False), ("MERGE_ON_READ", False, True)]


@pytest.mark.parametrize("table_type,partitioned,metadata", CASES,
                         ids=["cow-partitioned-no_metadata_table", "mor-non_partitioned-metadata_table"])
def test_hudi_continues_our_table(hudi, tmp_path, table_type, partitioned, metadata):
    path = str(tmp_path / "trips")
    hoodie = tmp_path / "trips" / ".hoodie"
    write_history(path, our_options(table_type, partitioned))  # a, c, dd left (b deleted)
    options = java_options(hudi, table_type, partitioned, metadata)
    services = {key: options[key] for key in options if key.startswith(("hoodie.metadata", "hoodie.write.table"))}
    hudi.write(path, rows(["a", "c", "e"], [7, 7, 7], ["sf", "sf", "nyc"], [7.0] * 3),
               {**options, "hoodie.datasource.write.operation": "upsert"})
    hudi.write(path, rows(["c"], [8], ["sf"], [0.0]), {**options, "hoodie.datasource.write.operation": "delete"})
    if table_type == "MERGE_ON_READ":
        assert [p for p in Path(path).rglob(".*.log.*") if ".hoodie" not in p.parts]
        instants = hudi.compact(path, {**services, "hoodie.compact.inline.max.delta.commits": "1"})
        assert instants[-1].endswith(".commit"), f"Java compacted our log files: {instants}"
        hudi.write(path, rows(["e"], [9], ["nyc"], [9.0]), {**options, "hoodie.datasource.write.operation": "upsert"})
    before = {p.name for p in Path(path).rglob("*.parquet")}
    instants = hudi.clean(path, {**services, "hoodie.cleaner.commits.retained": "1"})
    assert instants[-1].endswith(".clean") and {p.name for p in Path(path).rglob("*.parquet")} < before
    assert_table_version_6(path)
    if metadata:
        partitions = dict(line.split("=", 1) for line in (hoodie / "hoodie.properties").read_text().splitlines()
                          if "=" in line and not line.startswith("#"))["hoodie.table.metadata.partitions"]
        assert "files" in partitions.split(",") and (hoodie / "metadata" / "files").is_dir(), \
            "Java kept the metadata table of our table"
        assert_metadata_table_true(path)
    else:
        assert not (hoodie / "metadata").exists(), "Java's writer with it off deleted our metadata table"
    e = 9 if table_type == "MERGE_ON_READ" else 7
    assert_all_read_alike(hudi, path, metadata, [("a", 7), ("dd", 2), ("e", e)])

    write_local(path, rows(["a", "f"], [10, 10], ["sf", "la"], [10.0] * 2), our_options(table_type, partitioned))
    assert_metadata_table_true(path)
    assert_all_read_alike(hudi, path, True, [("a", 10), ("dd", 2), ("e", e), ("f", 10)])


def bucket_rows(keys: list[str], ts: int) -> pa.Table:
    return rows(keys, [ts] * len(keys), ["sf" if int(k[1:]) % 2 else "nyc" for k in keys], [float(ts)] * len(keys))


def test_hudi_upserts_into_our_bucket_file_groups(hudi, tmp_path):
    """Our MOR table with the bucket index (``BUCKET``); Java's upsert, with the same bucket options,
    appends its records to our file group of each bucket, and a key of a bucket we never wrote gets one
    new file group; we upsert after it into Java's new group too."""
    path = str(tmp_path / "trips")
    ours = {**our_options("MERGE_ON_READ", partitioned=True), **BUCKET}
    write_local(path, bucket_rows([f"k{i}" for i in range(6)], 1), ours)
    ours_groups = file_groups_by_bucket(path)
    options = {**java_options(hudi, "MERGE_ON_READ", partitioned=True, metadata=False), **BUCKET,
               "hoodie.datasource.write.operation": "upsert"}
    new_keys = [f"k{i}" for i in range(6, 40)]
    hudi.write(path, bucket_rows(["k0", "k1", "k2", *new_keys], 2), options)
    groups = file_groups_by_bucket(path)
    assert all(len(ids) == 1 for ids in groups.values()), f"a bucket with two file groups: {groups}"
    assert {key: groups[key] for key in ours_groups} == ours_groups
    assert len(groups) > len(ours_groups), "Java opened the buckets we left empty"
    write_local(path, bucket_rows(["k3", *new_keys], 3), ours)
    assert file_groups_by_bucket(path) == groups
    expected = sorted([(k, 2) for k in ("k0", "k1", "k2")] + [(k, 1) for k in ("k4", "k5")]
                      + [(k, 3) for k in ("k3", *new_keys)])
    assert_all_read_alike(hudi, path, False, expected)


GLOBAL_SIMPLE = {"hoodie.index.type": "GLOBAL_SIMPLE", "hoodie.simple.index.update.partition.path": "true"}


def key_city_ts(table) -> list[tuple]:
    return sorted(zip(table.column("id").to_pylist(), table.column("city").to_pylist(), table.column("ts").to_pylist()))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_hudi_and_we_move_keys_of_a_global_simple_table(hudi, tmp_path, table_type):
    """Our partitioned table with the global simple index (``GLOBAL_SIMPLE``, Hudi's ``HoodieGlobalSimpleIndex``,
    ``hoodie.simple.index.update.partition.path=true`` on both sides): Java's upsert finds our stored keys in every
    partition, moving ``c`` from ``sf`` to ``nyc`` and updating ``a`` where it is; ours moves ``c`` back and ``a``
    to ``la``; Java's next upsert moves ``c`` once more (merge-on-read: each move leaves the key in its old base
    file, deleted there by a log block, which the next lookup must see through). After each write every key is
    held once, where its latest write put it, and Java, hudi-rs and we read the same rows."""
    path = str(tmp_path / "trips")
    ours = {**our_options(table_type, partitioned=True), **GLOBAL_SIMPLE}
    java = {**java_options(hudi, table_type, partitioned=True, metadata=False), **GLOBAL_SIMPLE,
            "hoodie.datasource.write.operation": "upsert"}
    write_local(path, rows(["a", "b", "c"], [1, 1, 1], ["sf", "nyc", "sf"], [1.0, 2.0, 3.0]), ours)
    hudi.write(path, rows(["a", "c", "e"], [2, 2, 2], ["sf", "nyc", "la"], [2.0] * 3), java)
    expected = [("a", "sf", 2), ("b", "nyc", 1), ("c", "nyc", 2), ("e", "la", 2)]
    assert key_city_ts(hudi.read(path)) == expected
    assert_all_read_alike(hudi, path, False, [(k, ts) for k, _, ts in expected])
    write_local(path, rows(["a", "c"], [3, 3], ["la", "sf"], [3.0] * 2), ours)
    expected = [("a", "la", 3), ("b", "nyc", 1), ("c", "sf", 3), ("e", "la", 2)]
    assert key_city_ts(hudi.read(path)) == expected
    assert_all_read_alike(hudi, path, False, [(k, ts) for k, _, ts in expected])
    hudi.write(path, rows(["c", "b"], [4, 4], ["nyc", "la"], [4.0] * 2), java)
    expected = [("a", "la", 3), ("b", "la", 4), ("c", "nyc", 4), ("e", "la", 2)]
    assert key_city_ts(hudi.read(path)) == expected
    assert key_city_ts(read_table(path)) == expected
    assert_all_read_alike(hudi, path, False, [(k, ts) for k, _, ts in expected])
