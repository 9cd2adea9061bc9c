"""Tables Apache Hudi itself writes (0.15.0, and 1.1.1 with ``hoodie.write.table.version=6``) that we then
continue: we upsert, delete, compact (MOR) and clean, and Java reads exactly what we read.

Hudi-side options of every case (DataSourceWriteOptions and HoodieWriteConfig names), beyond Hudi's
defaults (metadata table on, bloom index, ...):

- every Java write: ``JAVA_TABLE`` (``test_we_read_hudis.hudi_options``: table name, record key, precombine
  field, partition path field ``city``, table type, and on 1.x ``hoodie.write.table.version=6``);
- the bucket table: ``BUCKET`` (``hoodie.index.type=BUCKET`` with 4 buckets hashed on ``id``), given to
  our writes too;
- the CDC table: ``hoodie.table.cdc.enabled=true`` (its default logging mode, DATA_BEFORE_AFTER);
- clustering: ``CALL run_clustering(table => ...)`` with Hudi's default plan (SparkSizeBasedClusteringPlanStrategy:
  every small file group of a partition into one), then ``CALL create_savepoint(table => ..., commit_time =>
  <the clustering's replacecommit>)`` and, after our writes and clean, ``CALL rollback_to_savepoint``;
- each procedure under the session settings ``procedure_conf`` (on 1.x ``hoodie.write.table.version=6``,
  or Hudi 1.x upgrades the table to version 9 first).

Java reads with ``hoodie.metadata.enable=true`` (the default of 1.x readers, not of 0.15's): our writes
record themselves in the metadata table Java built, which lists exactly the committed files after them, and
Java plans its reads from it.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.services.cleaner import savepointed_files
from hoodie_datasource.table.file_names import BASE_FILE, LOG_FILE
from tests.hudi_oracle import (
    HUDI_0_15,
    HudiOracle,
    HudiOracleError,
    assert_same_table,
    cdc_changes,
    skip_hudi_1_mor_cdc,
)
from tests.hudi_oracle.test_hudi_reads_ours import our_options, rows
from tests.hudi_oracle.test_we_read_hudis import hudi_options as java_table_options
from tests.metadata_checks import assert_metadata_table_true

pytestmark = pytest.mark.hudi_oracle

BUCKET = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4",
          "hoodie.bucket.index.hash.field": "id"}
CDC = {"hoodie.table.cdc.enabled": "true"}
READ = {"hoodie.metadata.enable": "true"}
RETAIN_ONE = {"hoodie.cleaner.commits.retained": "1"}

KEYS = [f"k{i}" for i in range(8)]
CITIES = ["sf", "nyc"] * 4


def java_writes(hudi: HudiOracle, path: str, table_type: str, extra: dict) -> str:
    """Java creates the table: one insert of ``KEYS``; its instant time."""
    options = {**java_table_options(hudi, table_type), **extra, "hoodie.datasource.write.operation": "insert"}
    instants = hudi.write(path, rows(KEYS, [1] * len(KEYS), CITIES, [1.0] * len(KEYS)), options, mode="overwrite")
    assert (Path(path) / ".hoodie" / "metadata").is_dir(), "Java's defaults build the metadata table"
    assert_table_version_6(path)
    return instants[-1].split(".")[0]


def assert_table_version_6(path: str) -> None:
    properties = (Path(path) / ".hoodie" / "hoodie.properties").read_text().splitlines()
    assert "hoodie.table.version=6" in properties


def our_writes(path: str, table_type: str, extra: dict) -> list[str]:
    """Our upsert (two of Java's keys updated, one new), a delete of a Java key, for MOR a compaction of
    the log files, and one more upsert; the instants."""
    options = {**our_options(table_type, partitioned=True), **extra}
    instants = [
        write_local(path, rows(["k0", "k1", "n0"], [5, 5, 5], ["sf", "nyc", "sf"], [5.0] * 3),
                    {**options, "hoodie.datasource.write.operation": "upsert"}),
        write_local(path, rows(["k2"], [6], ["sf"], [0.0]), {**options, "hoodie.datasource.write.operation": "delete"}),
    ]
    assert_metadata_table_true(path)
    if table_type == "MERGE_ON_READ":
        assert [p for p in Path(path).rglob(".*.log.*") if ".hoodie" not in p.parts], \
            "our upsert into MOR appends log files to Java's file groups"
        instants += HoodieTable(path).compact(**{"hoodie.compact.inline.max.delta.commits": "1"})
        assert len(instants) == 3, "our compaction of the log files"
    instants.append(write_local(path, rows(["k3", "n1"], [7, 7], ["nyc", "nyc"], [7.0, 7.0]),
                                {**options, "hoodie.datasource.write.operation": "upsert"}))
    return instants


EXPECTED = [("k0", 5), ("k1", 5), ("k3", 7), ("k4", 1), ("k5", 1), ("k6", 1), ("k7", 1), ("n0", 5), ("n1", 7)]


def key_ts(table) -> list[tuple]:
    return sorted(zip(table.column("id").to_pylist(), table.column("ts").to_pylist()))


def incremental(begin: str) -> tuple[dict, ReadConfig]:
    """An incremental query after ``begin``: Java's options and our config."""
    return ({"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": begin},
            ReadConfig(query_type="incremental", begin_instant=begin))


def assert_java_reads_as_we_do(hudi: HudiOracle, path: str, java_instant: str, ours: list[str]) -> None:
    """Java's incremental query of our commits, then (after our clean) its snapshot and its incremental
    query of our last commit, each as ours."""
    java_options, config = incremental(java_instant)
    assert_same_table(hudi.read(path, {**READ, **java_options}), read_table(path, config))
    before = {p.name for p in Path(path).rglob("*.parquet")}
    assert HoodieTable(path).clean(**RETAIN_ONE) is not None
    assert {p.name for p in Path(path).rglob("*.parquet")} < before, "our clean deleted Java's older slices"
    java = hudi.read(path, READ)
    assert key_ts(java) == EXPECTED
    assert_same_table(java, read_table(path))
    java_options, config = incremental(ours[-2])
    assert_same_table(hudi.read(path, {**READ, **java_options}), read_table(path, config))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_we_continue_hudis_table(hudi, tmp_path, table_type):
    """Java's defaults (metadata table on, bloom index: our bloom index finds Java's keys in its parquet footers)."""
    path = str(tmp_path / "trips")
    java_instant = java_writes(hudi, path, table_type, {})
    assert_java_reads_as_we_do(hudi, path, java_instant, our_writes(path, table_type, {}))


def file_groups_by_bucket(path: str) -> dict[tuple[str, int], set[str]]:
    """(partition, bucket) -> the file group ids of the base and log files there (the bucket is the file
    id's first 8 digits, BucketIdentifier.bucketIdFromFileId)."""
    groups: dict[tuple[str, int], set[str]] = defaultdict(set)
    for file in Path(path).rglob("*"):
        match = BASE_FILE.match(file.name) or LOG_FILE.match(file.name)
        if match and ".hoodie" not in file.parts:
            groups[(file.parent.name, int(match.group(1)[:8]))].add(match.group(1))
    return dict(groups)


def test_we_continue_hudis_bucket_table(hudi, tmp_path):
    """Java's MOR bucket table: our upserts and deletes land in Java's file group of each record's bucket,
    never in a second one; our compaction and clean keep them."""
    path = str(tmp_path / "trips")
    java_instant = java_writes(hudi, path, "MERGE_ON_READ", BUCKET)
    java_groups = file_groups_by_bucket(path)
    assert all(len(ids) == 1 for ids in java_groups.values()), java_groups
    ours = our_writes(path, "MERGE_ON_READ", BUCKET)
    groups = file_groups_by_bucket(path)
    assert all(len(ids) == 1 for ids in groups.values()), f"a bucket with two file groups: {groups}"
    assert {key: groups[key] for key in java_groups} == java_groups
    assert_java_reads_as_we_do(hudi, path, java_instant, ours)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_we_continue_hudis_cdc_table(hudi, tmp_path, table_type):
    """Java's table with CDC on: our rewrites of its base files write CDC logs (MOR log appends need none),
    and Java's CDC query over Java's and our commits, interleaved, returns our changes as we do."""
    skip_hudi_1_mor_cdc(hudi, table_type)
    path = str(tmp_path / "trips")
    java_instant = java_writes(hudi, path, table_type, CDC)
    options = {**our_options(table_type, partitioned=True), **CDC}
    upsert = write_local(path, rows(["k0", "n0"], [5, 5], ["sf", "sf"], [5.0, 5.0]),
                         {**options, "hoodie.datasource.write.operation": "upsert"})
    write_local(path, rows(["k1"], [6], ["nyc"], [0.0]), {**options, "hoodie.datasource.write.operation": "delete"})
    java = {**java_table_options(hudi, table_type), **CDC, "hoodie.datasource.write.operation": "upsert"}
    hudi.write(path, rows(["k0", "k2"], [7, 7], ["sf", "sf"], [7.0, 7.0]), java)
    if table_type == "COPY_ON_WRITE":
        stats = HoodieTable(path).commit_metadata(upsert)["partitionToWriteStats"]["sf"]
        assert any(s.get("cdcStats") for s in stats), "our rewrite of Java's base file wrote a CDC log"
    cdc = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.query.incremental.format": "cdc",
           "hoodie.datasource.read.begin.instanttime": java_instant}
    java = hudi.read(path, cdc)
    ours = read_table(path, ReadConfig(query_type="incremental", begin_instant=java_instant, incremental_format="cdc"))
    assert sorted(r[0] for r in cdc_changes(java)) == ["d", "i", "u", "u", "u"]
    assert cdc_changes(ours) == cdc_changes(java)


def procedure_conf(hudi: HudiOracle) -> dict[str, str]:
    """Session settings for Java's procedures: Hudi 1.x writes table version 6 only when told."""
    return {} if hudi.version == HUDI_0_15 else {"hoodie.write.table.version": "6"}


@contextmanager
def session_conf(hudi: HudiOracle, conf: dict[str, str]) -> Iterator[None]:
    """``SET`` the Hudi configs ``conf`` in Java's session (its procedures take them from there), then ``RESET``."""
    for key, value in conf.items():
        hudi.sql(f"SET {key}={value}")
    try:
        yield
    finally:
        for key in conf:
            hudi.sql(f"RESET {key}")


def register(hudi: HudiOracle, path: str, name: str) -> str:
    """A catalog table over ``path`` (the procedures take a table); its name."""
    hudi.sql(f"CREATE TABLE {name} USING hudi LOCATION '{path}'")
    return name


@pytest.fixture(scope="module")
def savepointed(hudi, tmp_path_factory):
    """Java writes three commits, clusters them (a replacecommit replacing every file group) and savepoints the
    clustering; then we read it (as of each instant too), upsert twice and clean with one commit retained. The
    table's path, the savepoint's time and the rows as of it."""
    path = str(tmp_path_factory.mktemp("savepointed") / "trips")
    java_writes(hudi, path, "COPY_ON_WRITE", {})
    options = {**java_table_options(hudi, "COPY_ON_WRITE"), "hoodie.datasource.write.operation": "upsert"}
    hudi.write(path, rows(["k0", "k1"], [2, 2], ["sf", "nyc"], [2.0, 2.0]), options)
    hudi.write(path, rows(["k8"], [2], ["sf"], [2.0]), {**options, "hoodie.datasource.write.operation": "insert"})
    table = register(hudi, path, f"savepointed_{hudi.version.replace('.', '_')}")
    with session_conf(hudi, procedure_conf(hudi)):
        hudi.sql(f"CALL run_clustering(table => '{table}')")
        clustering = HoodieTable(path).latest_commit()
        assert HoodieTable(path).timeline().find(clustering).action == "replacecommit"
        hudi.sql(f"CALL create_savepoint(table => '{table}', commit_time => '{clustering}')")
    assert_table_version_6(path)
    assert [s.timestamp for s in HoodieTable(path).timeline().savepoints] == [clustering]
    assert_same_table(hudi.read(path, READ), read_table(path))
    before = HoodieTable(path).completed_commits()[-2]  # the file groups the clustering replaced
    assert_same_table(hudi.read(path, {**READ, "as.of.instant": before}),
                      read_table(path, ReadConfig(as_of_instant=before)))
    at_savepoint = read_table(path)
    assert len(at_savepoint) == 9

    ours = our_options("COPY_ON_WRITE", partitioned=True)
    write_local(path, rows(KEYS, [5] * 8, CITIES, [5.0] * 8), {**ours, "hoodie.datasource.write.operation": "upsert"})
    write_local(path, rows(["k8", "n0"], [6, 6], ["sf", "sf"], [6.0, 6.0]),
                {**ours, "hoodie.datasource.write.operation": "upsert"})
    held = savepointed_files(HoodieTable(path).timeline())
    assert HoodieTable(path).clean(**RETAIN_ONE) is not None
    present = {p.name for p in Path(path).rglob("*.parquet")}
    assert held and held <= present, "our cleaner kept the savepoint's files"
    return path, clustering, at_savepoint


def test_we_continue_a_clustered_and_savepointed_table(hudi, savepointed):
    path, _, _ = savepointed
    java = hudi.read(path, READ)
    assert key_ts(java) == sorted([(k, 5) for k in KEYS] + [("k8", 6), ("n0", 6)])
    assert_same_table(java, read_table(path))


RESTORE_WRITES_TO_A_DROPPED_PARTITION = (
    "Hudi 1.1.1 builds its tables with column_stats on (its writers' default); our writes keep Hudi 0.15's default "
    "(off) and so delete that partition, as Hudi's HoodieTable.deleteMetadataIndexIfNecessary does; 1.1.1's "
    "restore then writes column statistics to it without building it first and fails: 'Partition column_stats "
    "should be part of inflight metadata partitions here []' (HoodieBackedTableMetadataWriter.tagRecordsWithLocation)")


def test_hudi_restores_our_continuation_with_its_defaults(hudi, savepointed, tmp_path, request):
    """With our writes keeping the metadata table Java built, Java restores with its defaults (the metadata table
    on): Hudi 0.15 restores the metadata table too and reads the savepoint's rows through it."""
    if hudi.version != HUDI_0_15:
        request.applymarker(pytest.mark.xfail(strict=True, raises=HudiOracleError,
                                              reason=RESTORE_WRITES_TO_A_DROPPED_PARTITION))
    path, clustering, at_savepoint = savepointed
    copy = str(tmp_path / "trips")
    shutil.copytree(path, copy)
    table = register(hudi, copy, f"restore_defaults_{hudi.version.replace('.', '_')}")
    logged = hudi.log_path.stat().st_size
    try:
        with session_conf(hudi, procedure_conf(hudi)):
            hudi.sql(f"CALL rollback_to_savepoint(table => '{table}', instant_time => '{clustering}')")
    except HudiOracleError:
        with open(hudi.log_path, errors="replace") as log:
            log.seek(logged)
            assert "Partition column_stats should be part of inflight metadata partitions" in log.read()
        raise
    assert_same_table(hudi.read(copy, READ), at_savepoint)


def test_hudi_restores_our_continuation_to_its_savepoint(hudi, savepointed):
    """``CALL rollback_to_savepoint`` with ``hoodie.metadata.enable=false`` (the metadata table deleted first)
    rolls back our commits: Java and we read the savepoint's rows."""
    path, clustering, at_savepoint = savepointed
    table = register(hudi, path, f"restore_{hudi.version.replace('.', '_')}")
    with session_conf(hudi, {**procedure_conf(hudi), "hoodie.metadata.enable": "false"}):
        hudi.sql(f"CALL rollback_to_savepoint(table => '{table}', instant_time => '{clustering}')")
    assert_table_version_6(path)
    java = hudi.read(path, READ)
    assert_same_table(java, at_savepoint)
    assert_same_table(java, read_table(path))
