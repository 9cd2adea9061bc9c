"""Tables we write (the local engine, ``write_local``) read by Apache Hudi itself (0.15.0 and 1.1.1 on
Spark 3.5): every column, the ``_hoodie_*`` meta columns included, as our reader returns them, for
snapshot, read-optimized, incremental and time-travel queries, COW and MOR, partitioned or not.

Hudi-side read options, as Hudi names them (DataSourceReadOptions): ``hoodie.datasource.query.type``
(snapshot, read_optimized, incremental), ``hoodie.datasource.read.begin.instanttime`` and
``as.of.instant``; nothing else, so Hudi reads with its defaults (the metadata table is not there, as we
do not write one, and Hudi lists the files)."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.table_reader import read_table
from tests.hudi_oracle import HUDI_0_15, HudiOracle, assert_same_table, cdc_changes, skip_hudi_1_mor_cdc
from tests.metadata_checks import assert_metadata_table_true

pytestmark = pytest.mark.hudi_oracle


def rows(ids, ts, cities, fares):
    return pa.table({
        "id": pa.array(ids, pa.string()),
        "ts": pa.array(ts, pa.int64()),
        "city": pa.array(cities, pa.string()),
        "fare": pa.array(fares, pa.float64()),
        "seats": pa.array([len(i) for i in ids], pa.int32()),
        "paid": pa.array([f > 1.5 for f in fares], pa.bool_()),
    })


def our_options(table_type: str, partitioned: bool) -> dict:
    options = {
        "hoodie.table.name": "trips",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": table_type,
    }
    if partitioned:
        options["hoodie.datasource.write.partitionpath.field"] = "city"
    return options


def write_history(path: str, options: dict) -> list[str]:
    """Three commits: an insert, an upsert (an update and a new key), a delete; their instants."""
    t1 = write_local(path, rows(["a", "b", "c"], [1, 1, 1], ["sf", "nyc", "sf"], [1.0, 2.0, 3.0]),
                     {**options, "hoodie.datasource.write.operation": "insert"})
    t2 = write_local(path, rows(["a", "dd"], [2, 2], ["sf", "la"], [1.5, 4.0]),
                     {**options, "hoodie.datasource.write.operation": "upsert"})
    t3 = write_local(path, rows(["b"], [3], ["nyc"], [0.0]),
                     {**options, "hoodie.datasource.write.operation": "delete"})
    return [t1, t2, t3]


@pytest.mark.parametrize("partitioned", [True, False], ids=["partitioned", "non_partitioned"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_hudi_reads_our_snapshot_time_travel_and_incremental(hudi, tmp_path, table_type, partitioned):
    path = str(tmp_path / "trips")
    t1, t2, t3 = write_history(path, our_options(table_type, partitioned))

    java = hudi.read(path)
    assert sorted(java.column("id").to_pylist()) == ["a", "c", "dd"]
    assert_same_table(java, read_table(path))

    for instant in (t1, t2, t3):
        assert_same_table(hudi.read(path, {"as.of.instant": instant}),
                          read_table(path, ReadConfig(as_of_instant=instant)))

    incremental = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": t1}
    java = hudi.read(path, incremental)
    assert sorted(java.column("id").to_pylist()) == ["a", "dd"]
    assert_same_table(java, read_table(path, ReadConfig(query_type="incremental", begin_instant=t1)))
    window = {**incremental, "hoodie.datasource.read.end.instanttime": t2}
    assert_same_table(hudi.read(path, window),
                      read_table(path, ReadConfig(query_type="incremental", begin_instant=t1, end_instant=t2)))


@pytest.mark.parametrize("partitioned", [True, False], ids=["partitioned", "non_partitioned"])
def test_hudi_reads_our_mor_read_optimized(hudi, tmp_path, partitioned):
    path = str(tmp_path / "trips")
    write_history(path, our_options("MERGE_ON_READ", partitioned))
    java = hudi.read(path, {"hoodie.datasource.query.type": "read_optimized"})
    ours = read_table(path, ReadConfig(query_type="read_optimized"))
    # the base files only: the delete of b is a delete block in a log file, so b is still there
    assert "b" in java.column("id").to_pylist()
    assert_same_table(java, ours)


COLUMN_ORDER_0_15 = ("column order: Hudi 0.15 on Spark 3.5 returns the partition column last (id, ts, fare, seats, "
                     "paid, city: Spark's HadoopFsRelation appends the partition schema to the data schema); our "
                     "reader keeps the table schema's order (id, ts, city, fare, seats, paid), as Hudi 1.1 does")


def test_column_order_as_hudi(hudi, tmp_path, request):
    if hudi.version == HUDI_0_15:
        request.applymarker(pytest.mark.xfail(strict=True, reason=COLUMN_ORDER_0_15))
    path = str(tmp_path / "trips")
    write_history(path, our_options("COPY_ON_WRITE", partitioned=True))
    assert read_table(path).schema.names == hudi.read(path).schema.names


def java_options(hudi: HudiOracle, metadata: bool) -> dict:
    """Hudi-side write options: ours (``our_options``, COW, partitioned), Hudi's defaults otherwise but
    ``hoodie.metadata.enable``, and for Hudi 1.x ``hoodie.write.table.version=6``."""
    options = {**our_options("COPY_ON_WRITE", partitioned=True), "hoodie.metadata.enable": str(metadata).lower()}
    if hudi.version != HUDI_0_15:
        options["hoodie.write.table.version"] = "6"
    return options


@pytest.mark.parametrize("metadata", [False, True], ids=["no_metadata_table", "metadata_table"])
def test_hudi_reads_our_upsert_into_its_table(hudi, tmp_path, metadata):
    """Java creates the table with its defaults (with the metadata table, or without); our upsert records itself
    in Java's metadata table, or builds one (``hoodie.metadata.enable``, on by default, as Java's writers have
    it), so Java, reading with the metadata table on, plans from it and sees our update and insert."""
    path = str(tmp_path / "trips")
    options = java_options(hudi, metadata)
    hudi.write(path, rows(["a", "b", "c"], [1, 1, 1], ["sf", "nyc", "sf"], [1.0, 2.0, 3.0]),
               {**options, "hoodie.datasource.write.operation": "insert"}, mode="overwrite")
    write_local(path, rows(["a", "dd"], [2, 2], ["sf", "la"], [1.5, 4.0]),
                {**our_options("COPY_ON_WRITE", partitioned=True), "hoodie.datasource.write.operation": "upsert"})
    # the read uses the metadata table when there is one: Hudi 1.x does by default, 0.15 only when asked
    # (HoodieMetadataConfig.DEFAULT_METADATA_ENABLE_FOR_READERS is false in 0.15)
    assert_metadata_table_true(path)
    java = hudi.read(path, {"hoodie.metadata.enable": str(metadata).lower()})
    assert sorted(zip(java.column("id").to_pylist(), java.column("ts").to_pylist())) == [
        ("a", 2), ("b", 1), ("c", 1), ("dd", 2)]
    assert_same_table(java, read_table(path))


@pytest.mark.parametrize("metadata", [None, "false"], ids=["hudi_default", "no_metadata_table"])
def test_hudi_cleans_our_table_and_we_read_and_write_after(hudi, tmp_path, metadata):
    """Java's cleaner (``CALL run_clean``, RunCleanProcedure, with ``hoodie.cleaner.commits.retained=1``)
    removes the older file slices of our commits; both read the same after it, and we write on. With Hudi's
    default (``hoodie.metadata.enable`` true for writers) the cleaner records the clean in our metadata table;
    with it off, it deletes it and our next write builds it again: either way Java, reading with the metadata
    table on, sees that write, and the metadata table lists exactly the committed files."""
    path = str(tmp_path / "trips")
    options = our_options("COPY_ON_WRITE", partitioned=True)
    for ts in (1, 2, 3):
        write_local(path, rows(["a", "b"], [ts, ts], ["sf", "sf"], [float(ts), float(ts)]), options)
    before = sorted(p.name for p in (tmp_path / "trips" / "sf").glob("*.parquet"))
    clean_options = {"hoodie.cleaner.commits.retained": "1"}
    if metadata is not None:
        clean_options["hoodie.metadata.enable"] = metadata
    instants = hudi.clean(path, clean_options)
    if metadata == "false":
        assert not (tmp_path / "trips" / ".hoodie" / "metadata").exists()
    elif hudi.version == HUDI_0_15:  # Hudi 1.1.1's clean, not told hoodie.write.table.version=6, builds a
        assert_metadata_table_true(path)  # version-9 metadata table of its own, which our next write builds anew
    assert instants[-1].endswith(".clean"), instants
    after = sorted(p.name for p in (tmp_path / "trips" / "sf").glob("*.parquet"))
    assert len(before) == 3 and len(after) < len(before) and set(after) <= set(before)
    assert_same_table(hudi.read(path), read_table(path))

    write_local(path, rows(["a"], [4], ["sf"], [4.0]), options)
    assert_metadata_table_true(path)
    java = hudi.read(path, {"hoodie.metadata.enable": "true"})
    assert sorted(zip(java.column("id").to_pylist(), java.column("ts").to_pylist())) == [("a", 4), ("b", 3)]
    assert_same_table(java, read_table(path))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_hudi_reads_our_cdc(hudi, tmp_path, table_type):
    """Our writes with ``hoodie.table.cdc.enabled=true`` (its default logging mode, DATA_BEFORE_AFTER);
    Hudi's CDC query (``hoodie.datasource.query.incremental.format=cdc``) from the first commit on."""
    skip_hudi_1_mor_cdc(hudi, table_type)
    path = str(tmp_path / "trips")
    t1, _, _ = write_history(path, {**our_options(table_type, partitioned=True), "hoodie.table.cdc.enabled": "true"})
    cdc = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.query.incremental.format": "cdc",
           "hoodie.datasource.read.begin.instanttime": t1}
    java = hudi.read(path, cdc)
    ours = read_table(path, ReadConfig(query_type="incremental", begin_instant=t1, incremental_format="cdc"))
    assert sorted(r[0] for r in cdc_changes(java)) == ["d", "i", "u"]
    assert cdc_changes(ours) == cdc_changes(java)


@pytest.mark.parametrize("operation", ["insert_overwrite", "insert_overwrite_table", "delete_partition"])
def test_hudi_reads_our_overwrites(hudi, tmp_path, operation):
    """After our insert_overwrite (replaces the partitions it writes), insert_overwrite_table (the whole
    table) or delete_partition (``hoodie.datasource.write.partitions.to.delete``): a replacecommit."""
    path = str(tmp_path / "trips")
    options = our_options("COPY_ON_WRITE", partitioned=True)
    write_history(path, options)
    extra = {"hoodie.datasource.write.partitions.to.delete": "sf"} if operation == "delete_partition" else {}
    write_local(path, rows(["e"], [5], ["sf"], [5.0]),
                {**options, **extra, "hoodie.datasource.write.operation": operation})
    java = hudi.read(path)
    expected = {"insert_overwrite": ["dd", "e"], "insert_overwrite_table": ["e"], "delete_partition": ["dd"]}
    assert sorted(java.column("id").to_pylist()) == expected[operation]
    assert_same_table(java, read_table(path))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_hudi_reads_what_our_spark_datasource_writes(spark, hudi, tmp_path, table_type):
    """The user's path: ``df.write.format("hoodie")`` on our Spark 4 session (the distributed write),
    then Java's read and ours (``spark.read.format("hoodie")``) return the same rows."""
    path = str(tmp_path / "trips")
    options = our_options(table_type, partitioned=True)
    for operation, data in (("insert", rows(["a", "b", "c"], [1, 1, 1], ["sf", "nyc", "sf"], [1.0, 2.0, 3.0])),
                            ("upsert", rows(["a", "dd"], [2, 2], ["sf", "la"], [1.5, 4.0])),
                            ("delete", rows(["b"], [3], ["nyc"], [0.0]))):
        (spark.createDataFrame(data).write.format("hoodie").options(**options)
         .option("hoodie.datasource.write.operation", operation).mode("append").save(path))
    java = hudi.read(path)
    assert sorted(java.column("id").to_pylist()) == ["a", "c", "dd"]
    assert_same_table(java, spark.read.format("hoodie").load(path).toArrow())


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_hudi_upserts_into_our_table(hudi, tmp_path, table_type):
    """Java's upsert (its defaults: bloom index, so it must find our keys through the bloom filters and
    key ranges in our parquet footers) updates our rows in place, never adds a second copy of a key."""
    path = str(tmp_path / "trips")
    write_history(path, our_options(table_type, partitioned=True))
    options = {**java_options(hudi, metadata=False), "hoodie.datasource.write.table.type": table_type,
               "hoodie.datasource.write.operation": "upsert"}
    hudi.write(path, rows(["a", "c", "e"], [7, 7, 7], ["sf", "sf", "nyc"], [7.0, 7.0, 7.0]), options)
    java = hudi.read(path)
    assert sorted(zip(java.column("id").to_pylist(), java.column("ts").to_pylist())) == [
        ("a", 7), ("c", 7), ("dd", 2), ("e", 7)]
    assert_same_table(java, read_table(path))


def test_hudi_compacts_our_mor_table(hudi, tmp_path):
    """Java's compactor (``CALL run_compaction(op => 'scheduleandexecute')``, RunCompactionProcedure, with
    ``hoodie.compact.inline.max.delta.commits=1`` and ``hoodie.metadata.enable=false``) merges our log
    files (updates and a delete block) into new base files; both read the same after it."""
    path = str(tmp_path / "trips")
    write_history(path, our_options("MERGE_ON_READ", partitioned=True))
    assert [p for p in (tmp_path / "trips").rglob(".*.log.*") if ".hoodie" not in p.parts]
    instants = hudi.compact(path, {"hoodie.compact.inline.max.delta.commits": "1", "hoodie.metadata.enable": "false"})
    assert instants[-1].endswith(".commit"), instants
    java = hudi.read(path, {"hoodie.datasource.query.type": "read_optimized"})
    assert sorted(zip(java.column("id").to_pylist(), java.column("ts").to_pylist())) == [("a", 2), ("c", 1), ("dd", 2)]
    assert_same_table(java, read_table(path, ReadConfig(query_type="read_optimized")))
    assert_same_table(hudi.read(path), read_table(path))


def typed_rows(ids, ts):
    """Rows with the logical and nested types Spark and Hudi map to Avro and parquet in their own ways."""
    n = len(ids)
    return pa.table({
        "id": pa.array(ids, pa.string()),
        "ts": pa.array(ts, pa.int64()),
        "at": pa.array([1_700_000_000_123_456 + t for t in ts], pa.timestamp("us", tz="UTC")),
        "day": pa.array([19_000 + t for t in ts], pa.date32()),
        "amount": pa.array([Decimal(f"{t}.25") for t in ts], pa.decimal128(10, 2)),
        "small": pa.array([t % 100 for t in ts], pa.int16()),
        "ratio": pa.array([t / 4 for t in ts], pa.float32()),
        "blob": pa.array([i.encode() for i in ids], pa.binary()),
        "tags": pa.array([[i, "x"] for i in ids], pa.list_(pa.string())),
        "attrs": pa.array([[(i, t)] for i, t in zip(ids, ts)], pa.map_(pa.string(), pa.int64())),
        "point": pa.array([{"x": float(t), "label": i} for i, t in zip(ids, ts)],
                          pa.struct([("x", pa.float64()), ("label", pa.string())])),
        "maybe": pa.array([None] * n, pa.string()),
    })


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_hudi_reads_our_logical_and_nested_types(hudi, tmp_path, table_type):
    path = str(tmp_path / "typed")
    options = our_options(table_type, partitioned=False)
    write_local(path, typed_rows(["a", "b", "c"], [1, 1, 1]), {**options, "hoodie.datasource.write.operation": "insert"})
    write_local(path, typed_rows(["a", "d"], [2, 2]), {**options, "hoodie.datasource.write.operation": "upsert"})
    java = hudi.read(path)
    assert sorted(zip(java.column("id").to_pylist(), java.column("ts").to_pylist())) == [
        ("a", 2), ("b", 1), ("c", 1), ("d", 2)]
    assert_same_table(java, read_table(path))
