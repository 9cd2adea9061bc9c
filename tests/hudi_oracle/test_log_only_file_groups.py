"""Merge-on-read file groups of log files only, as Apache Hudi writes them (0.15.0, and 1.1.1 writing table
version 6): its in-memory index (``hoodie.index.type=INMEMORY``, ``HoodieInMemoryHashIndex``) can index log files
(``HoodieIndex.canIndexLogFiles``), so its merge-on-read inserts go to new file groups as log files
(``BaseSparkDeltaCommitActionExecutor.handleInsert``), as under its HBase index.

Java writes such a table (an insert, an upsert, a delete; its default metadata table on); we read its snapshot,
read-optimized (no rows: no base file), incremental and time-travel queries as Java does, locally and through our
Spark datasource, and hudi-rs reads its snapshot and time travel alike. Our upsert tags the keys of the log-only
groups through the record index we build from their merged logs (a bloom index, which reads base files only, is
refused); our compaction gives each group a base file written from its logs alone (none for a group whose logs
merge to no record, as Hudi's ``HoodieCompactor``); our cleaner removes the compacted slices; Java reads what we
wrote; ``validate`` finds nothing wrong. A CDC query of such a table, which Java 0.15 fails, gives every change.

Java's in-memory index is the JVM's, shared by every table a Java process writes: each table here has keys of a
prefix of its own, which no other test writes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig, resolve_read_config
from hoodie_datasource.errors import HoodieConfigError, HoodieIndexError
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.table.file_names import BASE_FILE, LOG_FILE
from tests.conftest import require_module
from tests.hudi_oracle import HUDI_0_15, HudiOracle, HudiOracleError, assert_same_table, cdc_changes, skip_hudi_1_mor_cdc
from tests.hudi_oracle.test_hudi_reads_ours import our_options, rows
from tests.hudi_oracle.test_we_read_hudis import hudi_options
from tests.metadata_checks import assert_metadata_table_true, assert_record_index_true
from tests.unit.test_cli import as_json

pytestmark = pytest.mark.hudi_oracle

INMEMORY = {"hoodie.index.type": "INMEMORY", "hoodie.compact.inline": "false"}


def data_files(path: str) -> tuple[list[str], list[str]]:
    """The table's base files and log files (partition/name)."""
    names = [p.relative_to(path).as_posix() for p in Path(path).glob("*/*") if p.parent.name != ".hoodie"]
    return (sorted(n for n in names if BASE_FILE.match(Path(n).name)),
            sorted(n for n in names if LOG_FILE.match(Path(n).name)))


@pytest.fixture(scope="module")
def java_table(hudi: HudiOracle, tmp_path_factory) -> tuple[str, list[str]]:
    """Java writes the table: an insert into three partitions, an upsert (an update, a key of a new partition), a
    delete (the only key of ``nyc``); its path and instants."""
    path = str(tmp_path_factory.mktemp(f"log-only-{hudi.version}") / "trips")
    options = {**hudi_options(hudi, "MERGE_ON_READ"), **INMEMORY}
    hudi.write(path, rows(["lo-a", "lo-b", "lo-c", "lo-e"], [1] * 4, ["sf", "nyc", "sf", "la"], [1.0, 2.0, 3.0, 4.0]),
               {**options, "hoodie.datasource.write.operation": "insert"}, mode="overwrite")
    hudi.write(path, rows(["lo-a", "lo-d"], [2, 2], ["sf", "sea"], [1.5, 4.0]),
               {**options, "hoodie.datasource.write.operation": "upsert"})
    instants = hudi.write(path, rows(["lo-b"], [3], ["nyc"], [0.0]),
                          {**options, "hoodie.datasource.write.operation": "delete"})
    bases, logs = data_files(path)
    assert bases == [] and {n.split("/")[0] for n in logs} == {"sf", "nyc", "la", "sea"}, (bases, logs)
    return path, [i.split(".")[0] for i in instants]


def keys_and_ts(table: pa.Table) -> list[tuple[str, int]]:
    return sorted(zip(table.column("_hoodie_record_key").to_pylist(), table.column("ts").to_pylist()))


def test_we_read_javas_log_only_groups_as_java_does(hudi, java_table):
    path, (t1, t2, t3) = java_table
    snapshot = read_table(path)
    assert keys_and_ts(snapshot) == [("lo-a", 2), ("lo-c", 1), ("lo-d", 2), ("lo-e", 1)]
    assert_same_table(hudi.read(path), snapshot)
    listed = read_table(path, ReadConfig(metadata_enable=False))
    assert_same_table(hudi.read(path, {"hoodie.metadata.enable": "true"}), snapshot)
    assert_same_table(hudi.read(path, {"hoodie.metadata.enable": "false"}), listed)
    # a slice with no base file has no rows in a read-optimized query
    optimized = read_table(path, ReadConfig(query_type="read_optimized"))
    assert optimized.num_rows == 0
    assert_same_table(hudi.read(path, {"hoodie.datasource.query.type": "read_optimized"}), optimized)
    for begin, end in ((t1, t3), ("000", t2), (t1, t2)):
        ours = read_table(path, ReadConfig(query_type="incremental", begin_instant=begin, end_instant=end))
        java = hudi.read(path, {"hoodie.datasource.query.type": "incremental",
                                "hoodie.datasource.read.begin.instanttime": begin,
                                "hoodie.datasource.read.end.instanttime": end})
        assert ours.num_rows > 0
        assert_same_table(java, ours)
    for instant, expected in ((t1, [("lo-a", 1), ("lo-b", 1), ("lo-c", 1), ("lo-e", 1)]),
                              (t2, [("lo-a", 2), ("lo-b", 1), ("lo-c", 1), ("lo-d", 2), ("lo-e", 1)])):
        ours = read_table(path, ReadConfig(as_of_instant=instant))
        assert keys_and_ts(ours) == expected
        assert_same_table(hudi.read(path, {"as.of.instant": instant}), ours)


def test_our_spark_datasource_reads_javas_log_only_groups_as_java_does(spark, hudi, java_table):
    path, (t1, t2, t3) = java_table
    for options in ({}, {"hoodie.datasource.query.type": "read_optimized"}, {"as.of.instant": t1},
                    {"as.of.instant": t2},
                    {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": t1,
                     "hoodie.datasource.read.end.instanttime": t3}):
        ours = spark.read.format("hoodie").options(**options).load(path).toArrow()
        local = read_table(path, resolve_read_config(options))
        assert ours.num_rows == local.num_rows and (local.num_rows > 0) == ("read_optimized" not in options.values())
        assert_same_table(hudi.read(path, options), ours)


def test_our_spark_upsert_of_log_only_groups_java_reads_back(spark, hudi, java_table, tmp_path):
    path = str(tmp_path / "trips")
    shutil.copytree(java_table[0], path)
    options = {**our_options("MERGE_ON_READ", True), "hoodie.datasource.write.operation": "upsert"}
    update = spark.createDataFrame(
        rows(["lo-a", "lo-e", "lo-y"], [7, 7, 7], ["sf", "la", "nyc"], [7.0, 7.0, 7.0]).to_pandas())
    before = HoodieTable(path).completed_commits()
    with pytest.raises(Exception, match="hoodie.index.type=BLOOM looks keys up in base files only"):
        update.write.format("hoodie").options(**options).mode("append").save(path)
    assert HoodieTable(path).completed_commits() == before
    by_record_index = {**options, "hoodie.index.type": "RECORD_INDEX", "hoodie.metadata.record.index.enable": "true"}
    update.write.format("hoodie").options(**by_record_index).mode("append").save(path)
    expected = [("lo-a", 7), ("lo-c", 1), ("lo-d", 2), ("lo-e", 7), ("lo-y", 7)]
    assert keys_and_ts(read_table(path)) == expected
    assert keys_and_ts(spark.read.format("hoodie").load(path).toArrow()) == expected
    assert_same_table(hudi.read(path), read_table(path))
    assert_record_index_true(path)


def hudi_rs_keys_and_ts(path: str, as_of: str | None = None) -> list[tuple[str, int]]:
    """hudi-rs's snapshot (as of ``as_of``), an independent reader."""
    hudi_rs = require_module("hudi")
    table = hudi_rs.HudiTableBuilder.from_base_uri(path).build()
    batches = table.read(hudi_rs.HudiReadOptions().with_as_of_timestamp(as_of)) if as_of else table.read()
    return keys_and_ts(pa.Table.from_batches(batches)) if batches else []


def test_hudi_rs_reads_javas_log_only_groups_as_we_do(java_table):
    path, (t1, t2, _) = java_table
    assert hudi_rs_keys_and_ts(path) == keys_and_ts(read_table(path))
    for instant in (t1, t2):
        assert hudi_rs_keys_and_ts(path, instant) == keys_and_ts(read_table(path, ReadConfig(as_of_instant=instant)))


def test_our_upsert_and_compaction_of_log_only_groups_java_reads_back(hudi, java_table, tmp_path):
    path = str(tmp_path / "trips")
    shutil.copytree(java_table[0], path)
    upsert = {**our_options("MERGE_ON_READ", True), "hoodie.datasource.write.operation": "upsert"}
    before = HoodieTable(path).completed_commits()
    # a bloom index sees base files only (Hudi's too): the keys of the log-only groups would be stored twice
    with pytest.raises(HoodieIndexError, match="log files only"):
        write_local(path, rows(["lo-a", "lo-z"], [5, 5], ["sf", "nyc"], [5.0, 5.0]), upsert)
    assert HoodieTable(path).completed_commits() == before
    # the record index, built from the merged logs, locates them: updates append to the log-only groups
    by_record_index = {**upsert, "hoodie.index.type": "RECORD_INDEX", "hoodie.metadata.record.index.enable": "true"}
    groups = {p.name.split("_")[0] for p in Path(path).glob("sf/.*.log.*")}
    write_local(path, rows(["lo-a", "lo-c", "lo-z"], [5, 0, 5], ["sf", "sf", "nyc"], [5.0, 0.5, 5.0]), by_record_index)
    assert {p.name.split("_")[0] for p in Path(path).glob("sf/.*.log.*")} == groups, "no new group for sf's keys"
    expected = [("lo-a", 5), ("lo-c", 1), ("lo-d", 2), ("lo-e", 1), ("lo-z", 5)]  # lo-c's ts 0 loses to 1
    assert keys_and_ts(read_table(path)) == expected
    assert_same_table(hudi.read(path), read_table(path))
    assert_record_index_true(path)
    # compaction: every group with records gets a base file made from its logs; nyc's (lo-b deleted) none
    assert HoodieTable(path).compact()
    bases, _ = data_files(path)
    assert {b.split("/")[0] for b in bases} == {"sf", "la", "sea", "nyc"}
    assert len([b for b in bases if b.startswith("nyc/")]) == 1, "lo-z's new group only"
    assert keys_and_ts(read_table(path)) == expected
    assert keys_and_ts(read_table(path, ReadConfig(query_type="read_optimized"))) == expected
    for options in ({}, {"hoodie.datasource.query.type": "read_optimized"}, {"hoodie.metadata.enable": "true"}):
        assert_same_table(hudi.read(path, options), read_table(path, ReadConfig(
            query_type=options.get("hoodie.datasource.query.type", "snapshot"))))
    assert_metadata_table_true(path)
    # the cleaner takes a log-only slice for a file version like any other: once a write after the compaction
    # is the only one retained, the compacted groups' logs go; nyc's group, whose latest slice they are, keeps them
    write_local(path, rows(["lo-e"], [6], ["la"], [6.0]), by_record_index)
    expected = [("lo-a", 5), ("lo-c", 1), ("lo-d", 2), ("lo-e", 6), ("lo-z", 5)]
    _, java_logs = data_files(java_table[0])
    assert HoodieTable(path).clean(**{"hoodie.cleaner.commits.retained": "1"})
    _, logs = data_files(path)
    assert sorted(set(java_logs) & set(logs)) == [n for n in java_logs if n.startswith("nyc/")]
    assert keys_and_ts(read_table(path)) == expected
    assert_same_table(hudi.read(path), read_table(path))
    assert hudi_rs_keys_and_ts(path) == expected
    assert as_json("validate", path) == {"valid": True, "problems": []}


def insert_upsert_delete(hudi: HudiOracle, path: str, options: dict[str, str], prefix: str) -> None:
    """Java writes three rows, updates one and inserts another, then deletes one: keys ``<prefix>-a`` to ``-d``."""
    keys = [f"{prefix}-{k}" for k in "abcd"]
    hudi.write(path, rows(keys[:3], [1] * 3, ["sf", "nyc", "sf"], [1.0, 2.0, 3.0]),
               {**options, "hoodie.datasource.write.operation": "insert"}, mode="overwrite")
    hudi.write(path, rows([keys[0], keys[3]], [2, 2], ["sf", "sea"], [1.5, 4.0]),
               {**options, "hoodie.datasource.write.operation": "upsert"})
    hudi.write(path, rows([keys[1]], [3], ["nyc"], [0.0]), {**options, "hoodie.datasource.write.operation": "delete"})


def test_we_read_hudi_1s_own_log_only_groups_as_it_does(hudi, tmp_path):
    """Hudi 1.1.1 writing its own table version (9, timeline layout 2), where a log file is named after the
    deltacommit that wrote it, not its slice's: a group of log files only is a slice of its committed logs."""
    if hudi.version == HUDI_0_15:
        pytest.skip("Hudi 0.15 writes table version 6 only (the module's other tests)")
    path = str(tmp_path / "trips")
    options = {k: v for k, v in hudi_options(hudi, "MERGE_ON_READ").items() if k != "hoodie.write.table.version"}
    options.update(INMEMORY)
    insert_upsert_delete(hudi, path, options, "v9")
    t1, t2, _ = HoodieTable(path).completed_commits()
    properties = (Path(path) / ".hoodie" / "hoodie.properties").read_text().splitlines()
    assert "hoodie.table.version=9" in properties and "hoodie.timeline.layout.version=2" in properties
    bases, logs = data_files(path)
    assert bases == [] and any(f"_{t2}.log." in n for n in logs), "layout 2 names a log after its own deltacommit"
    snapshot = read_table(path)
    assert keys_and_ts(snapshot) == [("v9-a", 2), ("v9-c", 1), ("v9-d", 2)]
    assert_same_table(hudi.read(path), snapshot)
    assert read_table(path, ReadConfig(query_type="read_optimized")).num_rows == 0
    assert hudi.read(path, {"hoodie.datasource.query.type": "read_optimized"}).num_rows == 0
    for instant in (t1, t2):
        assert_same_table(hudi.read(path, {"as.of.instant": instant}), read_table(path, ReadConfig(as_of_instant=instant)))
    # incremental reads range by completion time on this table version (tests/hudi_oracle/test_completion_time_reads)
    for begin in (t1, HoodieTable(path).timeline().find(t1).completion):
        incremental = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": begin}
        assert_same_table(hudi.read(path, incremental),
                          read_table(path, ReadConfig(query_type="incremental", begin_instant=begin)))


def test_we_read_javas_consistent_hashing_bucket_groups_of_log_files_only(hudi, tmp_path):
    """Hudi's consistent-hashing bucket index (merge-on-read only) names a key's file group before it exists
    (``ConsistentBucketIndexLocationMapper``), so its inserts are appends: every group starts as log files only.
    We read it as Java does; a write of ours refuses the engine (only SIMPLE is supported)."""
    path = str(tmp_path / "trips")
    options = {**hudi_options(hudi, "MERGE_ON_READ"), "hoodie.index.type": "BUCKET",
               "hoodie.index.bucket.engine": "CONSISTENT_HASHING", "hoodie.bucket.index.num.buckets": "2",
               "hoodie.bucket.index.hash.field": "id", "hoodie.compact.inline": "false"}
    hudi.write(path, rows(["ch-a", "ch-b", "ch-c"], [1] * 3, ["sf", "nyc", "sf"], [1.0, 2.0, 3.0]),
               {**options, "hoodie.datasource.write.operation": "upsert"}, mode="overwrite")
    instants = hudi.write(path, rows(["ch-a", "ch-d"], [2, 2], ["sf", "sf"], [1.5, 4.0]),
                          {**options, "hoodie.datasource.write.operation": "upsert"})
    t1, _ = (i.split(".")[0] for i in instants)
    bases, logs = data_files(path)
    assert bases == [] and logs
    snapshot = read_table(path)
    assert keys_and_ts(snapshot) == [("ch-a", 2), ("ch-b", 1), ("ch-c", 1), ("ch-d", 2)]
    assert_same_table(hudi.read(path), snapshot)
    assert read_table(path, ReadConfig(query_type="read_optimized")).num_rows == 0
    assert_same_table(hudi.read(path, {"as.of.instant": t1}), read_table(path, ReadConfig(as_of_instant=t1)))
    with pytest.raises(HoodieConfigError, match="CONSISTENT_HASHING"):
        write_local(path, rows(["ch-a"], [3], ["sf"], [3.0]), {**our_options("MERGE_ON_READ", True), **options})


def test_our_cdc_query_of_javas_log_only_groups(hudi, tmp_path):
    """A CDC query of a table whose groups are log files only (no ``.cdc`` file: Java's append handle writes none
    for them): every change with its images, derived from the merged slices before and after each write. Java 0.15
    fails this query on its own table: ``HoodieCDCRDD.loadFileSlice`` opens the before slice's base file, which is
    absent, as a parquet file at the partition's path (Hudi's bug)."""
    skip_hudi_1_mor_cdc(hudi, "MERGE_ON_READ")
    path = str(tmp_path / "trips")
    options = {**hudi_options(hudi, "MERGE_ON_READ"), **INMEMORY, "hoodie.table.cdc.enabled": "true"}
    insert_upsert_delete(hudi, path, options, "cdc")
    t1, t2, t3 = HoodieTable(path).completed_commits()
    bases, logs = data_files(path)
    assert bases == [] and not [n for n in logs if n.endswith(".cdc")]

    def image(key, city, fare, ts):
        return [("city", city), ("fare", fare), ("id", key), ("paid", fare > 1.5), ("seats", len(key)), ("ts", ts)]

    changes = cdc_changes(read_table(path, ReadConfig(query_type="incremental", begin_instant=t1,
                                                      incremental_format="cdc")))
    assert changes == [("d", t3, image("cdc-b", "nyc", 2.0, 1), None), ("i", t2, None, image("cdc-d", "sea", 4.0, 2)),
                       ("u", t2, image("cdc-a", "sf", 1.0, 1), image("cdc-a", "sf", 1.5, 2))]
    with pytest.raises(HudiOracleError, match="Is a directory"):
        hudi.read(path, {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.query.incremental.format": "cdc",
                         "hoodie.datasource.read.begin.instanttime": t1})
