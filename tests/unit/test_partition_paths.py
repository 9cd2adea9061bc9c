"""Partition values that are not plain relative paths (``a//b``, ``a/``, ``/abs``, ``..``, ``.``) are written
under one canonical, escaped partition path inside the table or refused before anything is written: every
committed row reads back exactly once, upserts and deletes find it, and no file lands outside the table."""

from __future__ import annotations

from pathlib import Path

import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.errors import InvalidRecordError, StorageError
from hoodie_datasource.storage.registry import open_storage
from tests.conftest import table_listing
from tests.unit.small_tables import batch, read_pairs

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}
UNSAFE = ["a//b", "a/", "/tmp/somewhere", "../escape", "a/./b", "p/1/", "tab\tin"]


def outside(tmp_path: Path, table: Path) -> list[str]:
    """Files under ``tmp_path`` but not under the table."""
    return sorted(str(p) for p in tmp_path.rglob("*") if p.is_file() and table not in p.parents)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("extra", [{}, {"hive_style_partitioning": "true"}, {"partitionpath.urlencode": "true"}],
                         ids=["plain", "hive", "urlencode"])
@pytest.mark.parametrize("value", UNSAFE)
def test_unsafe_values_read_back_once_and_follow_upserts_and_deletes(tmp_path, value, table_type, extra):
    table = tmp_path / "t"
    opts = {**OPTS, "table.type": table_type, **extra}
    write_local(str(table), batch([("k", 1, value, 1), ("other", 1, "x", 9)]), opts)
    assert read_pairs(str(table)) == [("k", 1), ("other", 9)]
    write_local(str(table), batch([("k", 2, value, 2)]), opts)
    assert read_pairs(str(table)) == [("k", 2), ("other", 9)]
    write_local(str(table), batch([("k", 3, value, 0)]), {**opts, "operation": "delete"})
    assert read_pairs(str(table)) == [("other", 9)]
    assert outside(tmp_path, table) == []
    partitions = {p.split("/")[0] for p in table_listing(str(table)) if not p.startswith(".hoodie")}
    assert all(".." != part and part for part in partitions)


@pytest.mark.parametrize("value", [".", ".."])
def test_dot_segments_are_refused_before_anything_is_written(tmp_path, value):
    table = tmp_path / "t"
    write_local(str(table), batch([("a", 1, "x", 1)]), OPTS)
    before = table_listing(str(table))
    with pytest.raises(InvalidRecordError, match=f"'p' has the value '{value}'"):
        write_local(str(table), batch([("b", 1, value, 2)]), OPTS)
    assert {p for p in table_listing(str(table)) if not p.startswith(".hoodie/")} == \
        {p for p in before if not p.startswith(".hoodie/")}
    assert outside(tmp_path, table) == []
    assert read_pairs(str(table)) == [("a", 1)]


@pytest.mark.parametrize("rel", ["../x", "a/../../x", "/etc/x", ".."])
def test_storage_refuses_paths_outside_the_table(tmp_path, rel):
    storage = open_storage(str(tmp_path / "t"))
    with pytest.raises(StorageError, match="is not a path inside the table"):
        storage.write(rel, b"1")
    assert outside(tmp_path, tmp_path / "t") == []
