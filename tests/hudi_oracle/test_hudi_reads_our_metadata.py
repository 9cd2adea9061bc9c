"""The metadata table our writes keep, judged by Apache Hudi itself (0.15.0, and 1.1.1 on table version 6):

* Java reads our tables with ``hoodie.metadata.enable=true`` (planning from our ``files`` partition) and gets our
  rows; ``CALL validate_metadata_table_files`` (Hudi's ``ValidateMetadataTableFilesProcedure``: the metadata
  table's listing against a listing of storage, file by file with sizes) finds every file alike, and
  ``show_metadata_table_partitions`` our partitions. The tables went through inserts, updates, deletes, an
  overwrite, compaction (MOR), cleaning, a failed write rolled back and the rollback of a completed commit, with
  the metadata table compacting every three deltacommits (its clean and archival, and the data table's archival
  it bounds, run too).
* Java continues such a table with its metadata table on: it writes to ours (our first deltacommit is still
  there after it), reads through it and validates it; then we continue Java's, and Java validates again.
* Java upserts with ``hoodie.index.type=RECORD_INDEX`` through the record index we keep: its updates land in
  our file groups (no key stored twice), and the index holds exactly the table's keys after its write and ours.
* Java skips files by our ``column_stats`` (``hoodie.enable.data.skipping``) and gets the rows it gets listing
  every file.

A procedure names a catalog table, and Hudi 0.15's ``CREATE TABLE ... LOCATION`` rewrites ``hoodie.properties``,
so they run on a copy."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hoodie_datasource import HoodieTable, fault_points
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.metadata.layout import metadata_storage
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.table import Table
from tests.hudi_oracle import HUDI_0_15, HudiOracle, HudiOracleError, assert_same_table
from tests.hudi_oracle.test_hudi_continues_ours import NON_PARTITIONED
from tests.hudi_oracle.test_hudi_reads_ours import our_options, rows
from tests.metadata_checks import (
    assert_column_stats_true,
    assert_metadata_table_true,
    assert_record_index_true,
    committed_listing,
    table_keys,
)

pytestmark = pytest.mark.hudi_oracle

METADATA = {"hoodie.metadata.compact.max.delta.commits": "3", "hoodie.keep.min.commits": "2",
            "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1"}
CASES = [("COPY_ON_WRITE", True), ("MERGE_ON_READ", False)]
IDS = ["cow-partitioned", "mor-non_partitioned"]


class InjectedFault(RuntimeError):
    pass


def fail(point: str, **context: object) -> None:
    raise InjectedFault(point)


def options(table_type: str, partitioned: bool) -> dict:
    return {**our_options(table_type, partitioned), **({} if partitioned else NON_PARTITIONED), **METADATA}


def java_options(hudi: HudiOracle, table_type: str, partitioned: bool) -> dict:
    java = {**options(table_type, partitioned), "hoodie.metadata.enable": "true", "hoodie.compact.inline": "false"}
    if hudi.version != HUDI_0_15:
        java["hoodie.write.table.version"] = "6"
    return java


def write_our_history(path: str, table_type: str, partitioned: bool, monkeypatch) -> None:
    opts = options(table_type, partitioned)
    write_local(path, rows(["a", "b", "c", "d"], [1] * 4, ["sf", "nyc", "sf", "la"], [1.0, 2.0, 3.0, 4.0]), opts)
    write_local(path, rows(["a", "e"], [2, 2], ["sf", "nyc"], [1.5, 5.0]), opts)
    write_local(path, rows(["b"], [3], ["nyc"], [0.0]), {**opts, "hoodie.datasource.write.operation": "delete"})
    if partitioned:
        write_local(path, rows(["f"], [4], ["la"], [6.0]), {**opts, "hoodie.datasource.write.operation": "insert_overwrite"})
    if table_type == "MERGE_ON_READ":
        HoodieTable(path).compact()
    monkeypatch.setenv(fault_points.ENV_VAR, f"{fault_points.BEFORE_COMMIT}={__name__}:fail")
    fault_points._hooks.cache_clear()
    with pytest.raises(InjectedFault):
        write_local(path, rows(["g"], [5], ["sf"], [7.0]), opts)  # it rolls itself back
    monkeypatch.delenv(fault_points.ENV_VAR)
    fault_points._hooks.cache_clear()
    for ts in (6, 7, 8):
        write_local(path, rows(["a", "h"], [ts, ts], ["sf", "la"], [float(ts)] * 2), opts)
    last = write_local(path, rows(["c"], [9], ["sf"], [9.0]), opts)
    HoodieTable(path).rollback(last)
    HoodieTable(path).clean(**METADATA)
    write_local(path, rows(["i"], [10], ["nyc"], [10.0]), opts)
    assert_metadata_table_true(path)


def java_validates(hudi: HudiOracle, path: str, copies: Path) -> None:
    """Java's listing of the metadata table file by file against storage: all alike, our committed files."""
    copies.mkdir(exist_ok=True)
    copy = copies / f"copy{len(list(copies.iterdir()))}"
    shutil.copytree(path, copy)
    name = f"mdt_{copy.name}"
    hudi.sql(f"CREATE TABLE {name} USING hudi LOCATION '{copy}'")
    try:
        checked = hudi.sql(f"CALL validate_metadata_table_files(table => '{name}', verbose => true)", result=True)
        partitions = hudi.sql(f"CALL show_metadata_table_partitions(table => '{name}')", result=True)
    finally:
        hudi.sql(f"DROP TABLE IF EXISTS {name}")
    found = checked.to_pylist()
    differing = [r for r in found if not (r["is_present_in_fs"] and r["is_present_in_metadata"])
                 or r["fs_size"] != r["metadata_size"]]
    assert not differing, f"Java finds the metadata table and storage differ: {differing}"
    ours = committed_listing(Table.load(open_storage(path)))
    assert {(r["partition"], r["file_name"]) for r in found} == {(p, n) for p, files in ours.items() for n in files}
    assert {r["partition"] for r in partitions.to_pylist()} == {p for p, files in ours.items() if files}


@pytest.mark.parametrize("table_type,partitioned", CASES, ids=IDS)
def test_hudi_reads_through_our_metadata_table(hudi, tmp_path, monkeypatch, table_type, partitioned):
    path = str(tmp_path / "trips")
    write_our_history(path, table_type, partitioned, monkeypatch)
    mdt = Table.load(metadata_storage(open_storage(path)))
    assert any(mdt.timeline.is_compaction(i) for i in mdt.timeline.completed()), "our metadata table compacted"
    java = hudi.read(path, {"hoodie.metadata.enable": "true"})
    assert_same_table(java, read_table(path))
    java_validates(hudi, path, tmp_path / "copies")


@pytest.mark.parametrize("table_type,partitioned", CASES, ids=IDS)
def test_hudi_continues_our_metadata_table_and_we_continue_its(hudi, tmp_path, monkeypatch, table_type, partitioned):
    path = str(tmp_path / "trips")
    write_our_history(path, table_type, partitioned, monkeypatch)
    first = Table.load(metadata_storage(open_storage(path))).timeline.instants[0].timestamp
    java_opts = java_options(hudi, table_type, partitioned)
    hudi.write(path, rows(["a", "j"], [20, 20], ["sf", "la"], [20.0, 21.0]),
               {**java_opts, "hoodie.datasource.write.operation": "upsert"})
    hudi.write(path, rows(["e"], [21], ["nyc"], [0.0]), {**java_opts, "hoodie.datasource.write.operation": "delete"})
    mdt = Table.load(metadata_storage(open_storage(path)))
    assert mdt.timeline.instants[0].timestamp == first, "Java wrote to our metadata table, not one of its own"
    assert_metadata_table_true(path)
    java = hudi.read(path, {"hoodie.metadata.enable": "true"})
    assert_same_table(java, read_table(path))
    java_validates(hudi, path, tmp_path / "copies")

    opts = options(table_type, partitioned)
    write_local(path, rows(["k", "a"], [30, 30], ["sf", "sf"], [30.0, 31.0]), opts)
    write_local(path, rows(["j"], [31], ["la"], [0.0]), {**opts, "hoodie.datasource.write.operation": "delete"})
    assert_metadata_table_true(path)
    assert_same_table(hudi.read(path, {"hoodie.metadata.enable": "true"}), read_table(path))
    java_validates(hudi, path, tmp_path / "copies")
    expected = {"a", "c", "h", "i", "k"} | ({"f"} if partitioned else {"d"})  # partitioned: f's overwrite replaced d
    assert set(read_table(path).column("id").to_pylist()) == expected


RECORD_INDEX = {"hoodie.metadata.record.index.enable": "true",
                "hoodie.metadata.record.index.min.filegroup.count": "3",
                "hoodie.metadata.record.index.max.filegroup.count": "3"}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_hudi_upserts_through_our_record_index(hudi, tmp_path, table_type):
    """Java's upsert with ``hoodie.index.type=RECORD_INDEX`` over our table finds our keys in our record index
    (every update lands in the file group we wrote the key to: no key is stored twice), and keeps the index; we
    then write on and the index still holds exactly the table's keys."""
    path = str(tmp_path / "trips")
    opts = {**options(table_type, True), **RECORD_INDEX}
    write_local(path, rows([f"k{i}" for i in range(9)], [1] * 9, ["sf", "nyc", "la"] * 3, [1.0] * 9), opts)
    write_local(path, rows(["k1", "n1"], [2, 2], ["nyc", "sf"], [2.0, 2.0]), opts)
    write_local(path, rows(["k2"], [3], ["la"], [0.0]), {**opts, "hoodie.datasource.write.operation": "delete"})
    assert_record_index_true(path)
    before = table_keys(path)
    first = Table.load(metadata_storage(open_storage(path))).timeline.instants[0].timestamp
    java_opts = {**java_options(hudi, table_type, True), **RECORD_INDEX, "hoodie.index.type": "RECORD_INDEX"}
    hudi.write(path, rows(["k0", "k4", "n1", "j1"], [5] * 4, ["sf", "nyc", "sf", "la"], [5.0] * 4),
               {**java_opts, "hoodie.datasource.write.operation": "upsert"})
    assert Table.load(metadata_storage(open_storage(path))).timeline.instants[0].timestamp == first
    after = table_keys(path)
    assert {k: after[k] for k in ("k0", "k4", "n1")} == {k: before[k] for k in ("k0", "k4", "n1")}, \
        "Java's updates went to the file groups our record index names"
    java = hudi.read(path, {"hoodie.metadata.enable": "true"})
    keys = java.column("_hoodie_record_key").to_pylist()
    assert len(keys) == len(set(keys)) == 10, "no key stored twice"
    assert_same_table(java, read_table(path))
    assert_metadata_table_true(path)
    assert_record_index_true(path)

    write_local(path, rows(["j1", "k5", "m1"], [6] * 3, ["la", "la", "nyc"], [6.0] * 3), opts)
    assert_record_index_true(path)
    assert_same_table(hudi.read(path, {"hoodie.metadata.enable": "true"}), read_table(path))
    java_validates(hudi, path, tmp_path / "copies")


FILE_INDEXES = {"hoodie.metadata.index.column.stats.enable": "true", "hoodie.metadata.index.bloom.filter.enable": "true",
                "hoodie.parquet.small.file.limit": "0"}  # each insert a file group of its own: files to skip
SKIPPING = {"hoodie.metadata.enable": "true", "hoodie.enable.data.skipping": "true"}
FILTERS = ["fare > 25.0", "id = 'k7'", "seats = 2 AND city = 'sf'", "ts BETWEEN 2 AND 3", "id IN ('k1', 'n2')",
           "paid AND fare < 12.0", "city = 'la' OR fare = 1.0"]
NO_INDEX_DEFINITIONS = (
    "Hudi 1.1.1 takes the column_stats index's definition from the table's index definitions "
    "(SparkBaseIndexSupport.getCandidateFiles: metaClient.getIndexMetadata.get()), which a version-6 table as "
    "Hudi 0.15 writes it has none of (no hoodie.table.index.defs.path): 1.1.1's strict data skipping fails with "
    "'No value present in Option' on the tables Java 0.15 writes with column_stats as well")


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_hudi_skips_files_by_our_column_stats(hudi, tmp_path, table_type, request):
    """Java reads with ``hoodie.enable.data.skipping=true`` (``HoodieFileIndex`` prunes file slices by our
    ``column_stats``, failing rather than falling back: ``hoodie.fileIndex.dataSkippingFailureMode=strict``)
    and gets, for each filter, the rows it gets listing every file; on merge-on-read the log files' statistics
    count too (an update of a key lands in one)."""
    if hudi.version != HUDI_0_15:
        request.applymarker(pytest.mark.xfail(strict=True, raises=HudiOracleError, reason=NO_INDEX_DEFINITIONS))
    path = str(tmp_path / "trips")
    opts = {**options(table_type, True), **FILE_INDEXES}
    write_local(path, rows([f"k{i}" for i in range(6)], [1] * 6, ["sf", "nyc", "la"] * 2,
                           [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), opts)
    write_local(path, rows([f"n{i}" for i in range(4)], [2] * 4, ["sf", "nyc"] * 2, [10.0, 20.0, 30.0, 40.0]),
                {**opts, "hoodie.datasource.write.operation": "insert"})
    write_local(path, rows(["k1", "n2"], [3, 3], ["nyc", "sf"], [11.0, 50.0]), opts)
    write_local(path, rows(["k7", "k8"], [4, 4], ["la", "sf"], [7.5, 8.5]),
                {**opts, "hoodie.datasource.write.operation": "insert"})
    assert_column_stats_true(path, ["id", "ts", "city", "fare", "seats", "paid"])
    hudi.sql("SET hoodie.fileIndex.dataSkippingFailureMode=strict")
    try:
        for where in FILTERS:
            skipped = hudi.read(path, SKIPPING, where=where)
            listed = hudi.read(path, {"hoodie.metadata.enable": "false"}, where=where)
            assert skipped.num_rows, f"{where}: a filter some rows pass"
            assert_same_table(skipped, listed)
    finally:
        hudi.sql("SET hoodie.fileIndex.dataSkippingFailureMode=fallback")
    assert_same_table(hudi.read(path, SKIPPING), read_table(path))
