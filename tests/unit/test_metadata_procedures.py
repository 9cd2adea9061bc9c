"""What the metadata table lists, shown and checked through ``HoodieTable`` and Hudi's procedures
(``show_metadata_table_*``, ``validate_metadata_table_files``, ``create/init/delete_metadata_table``) on tables the
local engine writes: partitions and files equal to a listing of storage (sizes too), column ranges equal to the
data's minimum and maximum, and a file deleted, added or resized behind the table's back named by the validation.
No JVM."""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.errors import MetadataTableError, MetadataTableExistsError, MetadataTableNotReadyError
from hoodie_datasource.metadata.validation import FileListingDifference
from hoodie_datasource.procedures import call
from hoodie_datasource.procedures.metadata_procedures import _java_float
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.metadata_table import METADATA_TABLE, PARTITIONS_KEY
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.transitions import create_requested
from tests.metadata_checks import assert_metadata_table_true, committed_listing

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}
STATS = {"hoodie.metadata.index.column.stats.enable": "true"}


def rows(items: list[tuple[str, int, str, float]]) -> pa.Table:
    ids, ts, ps, vs = zip(*items)
    return pa.table({"id": list(ids), "ts": list(ts), "p": list(ps), "v": list(vs)})


def history(path: str, table_type: str = "COPY_ON_WRITE", **extra: str) -> None:
    opts = {**OPTS, "table.type": table_type, **extra}
    write_local(path, rows([("a", 1, "x", 1.5), ("b", 1, "y", 2.5), ("c", 1, "x", -3.0), ("d", 1, "z", 7.25)]), opts)
    write_local(path, rows([("a", 2, "x", 10.0), ("e", 2, "y", 0.125)]), opts)


def procedure(name: str, path: str, **args: str) -> list[dict]:
    return call(name, path, {"table": path, **args}, []).to_pylist()


def ready(path: str) -> str:
    return dict(HoodieTable(path).config.raw)[PARTITIONS_KEY]


def storage_files(path: str) -> dict[str, dict[str, int]]:
    return committed_listing(Table.load(open_storage(path)))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_partitions_and_files_are_a_listing_of_storage(tmp_path, table_type):
    path = str(tmp_path / "t")
    history(path, table_type)
    table = HoodieTable(path)
    listed = storage_files(path)
    assert table.metadata_partitions() == sorted(listed) == ["x", "y", "z"]
    assert procedure("show_metadata_table_partitions", path) == [{"partition": p} for p in ["x", "y", "z"]]
    for partition, files in listed.items():
        assert table.metadata_files(partition) == dict(sorted(files.items()))
        names = procedure("show_metadata_table_files", path, partition=partition)
        assert [r["file_path"] for r in names] == sorted(files)
    if table_type == "MERGE_ON_READ":
        assert any(".log." in name for name in listed["x"]), "the update of x went to a log file"
    assert len(listed["x"]) == 2
    assert [r["file_path"] for r in procedure("show_metadata_table_files", path, partition="x", limit="1")] == \
        sorted(listed["x"])[:1]
    assert table.metadata_files("nope") == {} and table.metadata_files() == {}  # as Hudi: nothing listed


def test_a_non_partitioned_table_lists_its_one_partition(tmp_path):
    path = str(tmp_path / "t")
    history(path, **{"partitionpath.field": "", "hoodie.datasource.write.keygenerator.class":
                     "org.apache.hudi.keygen.NonpartitionedKeyGenerator"})
    table = HoodieTable(path)
    assert table.metadata_partitions() == [""]
    assert table.metadata_files() == storage_files(path)[""] and len(table.metadata_files()) == 2
    assert [r["file_path"] for r in procedure("show_metadata_table_files", path)] == sorted(table.metadata_files())


def _latest_base_files(path: str) -> dict[str, str]:
    """file name -> partition of the latest base file of each file group, from a listing of storage."""
    view = Table.load(open_storage(path)).fs_view
    return {s.base_file.name: s.partition_path for s in view.latest_file_slices()}


def test_column_stats_are_the_data_min_and_max(tmp_path):
    path = str(tmp_path / "t")
    history(path, **STATS)
    table = HoodieTable(path)
    latest = _latest_base_files(path)
    for column in ("ts", "v", "id"):
        stats = table.metadata_column_stats(column)
        assert dict(zip(stats.column("file_name").to_pylist(), stats.column("partition").to_pylist())) == latest
        for row in stats.to_pylist():
            data = pq.read_table(Path(path) / row["partition"] / row["file_name"]).column(column)
            assert (row["min_value"], row["max_value"]) == (pc.min(data).as_py(), pc.max(data).as_py())
            assert (row["null_count"], row["value_count"]) == (0, len(data))
    only_x = table.metadata_column_stats("v", ["x"])
    assert only_x.column("partition").to_pylist() == ["x"]
    assert (only_x.column("min_value").to_pylist(), only_x.column("max_value").to_pylist()) == ([-3.0], [10.0])

    shown = procedure("show_metadata_table_column_stats", path, partition="x,y", targetColumns="v,ts")
    by_file = {name: partition for name, partition in latest.items() if partition in ("x", "y")}
    assert [r["column_name"] for r in shown] == ["ts"] * 2 + ["v"] * 2  # sorted by column, as Hudi's
    assert {r["file_name"] for r in shown} == set(by_file)
    texts = {(by_file[r["file_name"]], r["column_name"]): (r["min_value"], r["max_value"], r["null_number"])
             for r in shown}
    assert texts == {("x", "ts"): ("1", "2", 0), ("x", "v"): ("-3.0", "10.0", 0),
                     ("y", "ts"): ("1", "2", 0), ("y", "v"): ("0.125", "2.5", 0)}
    lowered = procedure("show_metadata_table_column_stats", path, partition="x", targetcolumns="v")  # as SQL passes it
    assert [(r["min_value"], r["max_value"]) for r in lowered] == [("-3.0", "10.0")]
    every = procedure("show_metadata_table_column_stats", path)  # every column the partition indexes
    assert {r["column_name"] for r in every} >= {"_hoodie_record_key", "id", "ts", "v", "p"}


def test_column_stats_of_a_log_file_are_its_updates(tmp_path):
    path = str(tmp_path / "t")
    history(path, "MERGE_ON_READ", **STATS)
    stats = HoodieTable(path).metadata_column_stats("v", ["x"]).to_pylist()
    names = sorted(storage_files(path)["x"])
    assert [r["file_name"] for r in stats] == names and len(names) == 2  # the base file and its log file
    base, log = (next(r for r in stats if (".log." in r["file_name"]) == is_log) for is_log in (False, True))
    assert (base["min_value"], base["max_value"], base["value_count"]) == (-3.0, 1.5, 2)
    assert (log["min_value"], log["max_value"], log["value_count"]) == (10.0, 10.0, 1)  # the update of a


def test_bounds_print_as_java_prints_them():
    assert [_java_float(v, False) for v in (1e10, 0.001, 1e-4, 1234567.0, 12345678.0, -2.5e-7, 0.0, 100.0)] == \
        ["1.0E10", "0.001", "1.0E-4", "1234567.0", "1.2345678E7", "-2.5E-7", "0.0", "100.0"]
    assert [_java_float(v, True) for v in (1.1, math.nan, -math.inf)] == ["1.1", "NaN", "-Infinity"]


def test_stats_count_the_metadata_tables_files(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, rows([("a", 1, "x", 1.0), ("b", 1, "y", 2.0)]), {**OPTS, "hoodie.metadata.enable": "false"})
    table = HoodieTable(path)
    assert table.create_metadata_table(**STATS) == ["files", "column_stats"]
    stats = table.metadata_stats()
    for partition in ("files", "column_stats"):  # a partition just built is one slice: each file of its folder
        folder = Path(path) / METADATA_TABLE / partition
        bases = [f.stat().st_size for f in folder.iterdir() if f.suffix == ".hfile"]
        logs = [f.stat().st_size for f in folder.iterdir() if ".log." in f.name]
        assert bases and logs
        assert [stats[f"{partition}.{k}"] for k in ("baseFileCount", "totalBaseFileSizeInBytes", "logFileCount",
                                                     "totalLogFileSizeInBytes")] == \
            [len(bases), sum(bases), len(logs), sum(logs)]
    assert [stats[f"record_index.{k}"] for k in ("baseFileCount", "logFileCount")] == [0, 0]
    assert stats["partitionCount"] == 2
    shown = procedure("show_metadata_table_stats", path)
    assert {r["stat_key"]: r["stat_value"] for r in shown} == {k: str(v) for k, v in stats.items()}


def test_validation_names_what_changed_behind_the_tables_back(tmp_path):
    path = str(tmp_path / "t")
    history(path)
    table = HoodieTable(path)
    assert table.validate_metadata() == [] and procedure("validate_metadata_table_files", path) == []
    listed = storage_files(path)
    everything = table.validate_metadata(verbose=True)
    assert [(d.partition, d.file_name, d.storage_size) for d in everything] == \
        sorted((p, n, s) for p, files in listed.items() for n, s in files.items())
    assert all(d.matches for d in everything)

    gone_name, gone_size = sorted(listed["x"].items())[0]
    (Path(path) / "x" / gone_name).unlink()
    resized_name, resized_size = next(iter(listed["y"].items()))
    with open(Path(path) / "y" / resized_name, "ab") as f:
        f.write(b"12345")
    stray = "0bad0bad-0000-0000-0000-000000000000-0_0-0-0_20250101000000000.parquet"
    (Path(path) / "z" / stray).write_bytes(b"not parquet")
    (Path(path) / "z" / "notes.txt").write_bytes(b"not a data file")
    expected = [FileListingDifference("x", gone_name, False, True, 0, gone_size),
                FileListingDifference("y", resized_name, True, True, resized_size + 5, resized_size),
                FileListingDifference("z", stray, True, False, 11, 0)]
    assert table.validate_metadata() == expected
    assert procedure("validate_metadata_table_files", path) == [
        {"partition": d.partition, "file_name": d.file_name, "is_present_in_fs": d.in_storage,
         "is_present_in_metadata": d.in_metadata, "fs_size": d.storage_size, "metadata_size": d.metadata_size}
        for d in expected]
    assert len(procedure("validate_metadata_table_files", path, verbose="true")) == len(everything) + 1


def test_without_a_metadata_table_or_a_ready_partition_the_error_names_it(tmp_path):
    path = str(tmp_path / "t")
    history(path, **{"hoodie.metadata.enable": "false"})
    table = HoodieTable(path)
    for ask in (table.metadata_partitions, table.metadata_files, table.metadata_stats, table.validate_metadata,
                lambda: table.metadata_column_stats("v")):
        with pytest.raises(MetadataTableNotReadyError, match=f"Table {path} has no metadata table.*create_metadata"):
            ask()
    for name in ("show_metadata_table_partitions", "show_metadata_table_files", "show_metadata_table_stats",
                 "show_metadata_table_column_stats", "validate_metadata_table_files"):
        with pytest.raises(MetadataTableNotReadyError, match="hoodie.table.metadata.partitions=none"):
            procedure(name, path)
    table.create_metadata_table()  # files only
    with pytest.raises(MetadataTableNotReadyError, match="no ready 'column_stats' partition \\(ready: files\\)"):
        table.metadata_column_stats("v")
    with pytest.raises(MetadataTableNotReadyError, match="'column_stats'"):
        procedure("show_metadata_table_column_stats", path, targetColumns="v")


def test_create_init_and_delete(tmp_path):
    path = str(tmp_path / "t")
    history(path, **{"hoodie.metadata.enable": "false"})
    with pytest.raises(MetadataTableNotReadyError, match="Metadata directory .* does not exist"):
        procedure("init_metadata_table", path)
    (result,) = procedure("create_metadata_table", path)
    assert result["result"].startswith(f"Created Metadata Table in {path}/{METADATA_TABLE} (duration=")
    assert_metadata_table_true(path)
    with pytest.raises(MetadataTableExistsError, match="not empty"):
        procedure("create_metadata_table", path)
    assert procedure("init_metadata_table", path, read_only="true")[0]["result"].startswith("Opened Metadata Table")
    assert ready(path) == "files"
    assert call("init_metadata_table", path, {"table": path}, [], STATS).to_pylist()[0]["result"].startswith("Initialized")
    assert ready(path) == "column_stats,files"  # the session's options
    assert HoodieTable(path).validate_metadata() == []

    assert procedure("delete_metadata_table", path) == [{"result": f"Deleted Metadata Table at '{path}/{METADATA_TABLE}'"}]
    assert not (Path(path) / METADATA_TABLE).exists()
    assert ready(path) == ""
    assert HoodieTable(path).delete_metadata_table() is False
    assert HoodieTable(path).create_metadata_table() == ["files"]
    write_local(path, rows([("f", 3, "x", 4.0)]), OPTS)  # writes keep it from then on
    assert_metadata_table_true(path)


def test_create_is_refused_while_an_instant_is_pending(tmp_path):
    path = str(tmp_path / "t")
    history(path, **{"hoodie.metadata.enable": "false"})
    create_requested(Table.load(open_storage(path)), "20990101000000000", "commit")
    with pytest.raises(MetadataTableError, match="while instants are pending: 20990101000000000 \\(commit\\)"):
        HoodieTable(path).create_metadata_table()
    assert not (Path(path) / METADATA_TABLE / "files").exists()
