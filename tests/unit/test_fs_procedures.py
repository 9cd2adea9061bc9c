"""``show_fs_path_detail`` over the table's storage: the path is a full path or URI under the table, or a
path relative to it, a glob matches segment by segment, and a path outside the table is refused. No JVM."""

from __future__ import annotations

from pathlib import Path

import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.procedures import call
from tests.unit.small_tables import batch

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}


@pytest.fixture
def table(tmp_path) -> str:
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "y", 1)]), OPTS)
    return path


def _detail(table: str, path: str, **args: str) -> list[dict]:
    return call("show_fs_path_detail", table, {"path": path, **args}, []).to_pylist()


def _files(directory: Path) -> list[Path]:
    return [p for p in directory.rglob("*") if p.is_file()]


def test_the_whole_table_counts_every_file(table):
    files = _files(Path(table))
    (row,) = _detail(table, table)
    size = sum(p.stat().st_size for p in files)
    assert (row["storage_path"], row["file_num"], row["storage_size"]) == (table, len(files), size)
    assert row["path_num"] >= 4  # the table, .hoodie and the two partitions
    assert _detail(table, f"file://{table}") == [row]


def test_entries_under_a_path_relative_to_the_table(table):
    subs = _detail(table, table, is_sub="true")
    assert sorted(Path(r["storage_path"]).name for r in subs) == [".hoodie", "x", "y"]
    (row,) = _detail(table, "x")
    assert row["storage_path"] == f"{table}/x"
    assert (row["path_num"], row["file_num"]) == (1, len(_files(Path(table) / "x")))


def test_a_glob_matches_within_one_directory_level(table):
    names = sorted(p.name for p in Path(table).iterdir() if not p.name.startswith("."))
    rows = _detail(table, f"{table}/*", sort="false")
    assert sorted(Path(r["storage_path"]).name for r in rows) == names
    parquet = [p for p in _files(Path(table)) if p.suffix == ".parquet"]
    rows = _detail(table, "*/*.parquet")
    assert sorted(r["storage_path"] for r in rows) == sorted(str(p) for p in parquet)
    assert all(r["path_num"] == 0 and r["file_num"] == 1 for r in rows)
    (one,) = _detail(table, str(parquet[0]))
    assert (one["storage_path"], one["storage_size"]) == (str(parquet[0]), parquet[0].stat().st_size)


def test_a_path_outside_the_table_is_refused(table, tmp_path):
    with pytest.raises(HoodieConfigError, match=f"{tmp_path / 'other'}.*is not under the table"):
        _detail(table, str(tmp_path / "other"))
