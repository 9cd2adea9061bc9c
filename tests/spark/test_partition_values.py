"""Partition values taken from the data, as a new user has them (URLs, paths, user input), through
``format("hoodie")`` on COW and MOR, hive style and url encoding on and off: each value that is not a plain
relative path is written under one escaped partition path inside the table (Hudi's
``PartitionPathEncodeUtils.escapePathName``), so every committed row reads back exactly once, an upsert
replaces it and a delete removes it, in our reader and in hudi-rs; ``.`` and ``..`` are refused before
anything is written, and no file ever lands outside the table."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.errors import InvalidRecordError
from tests.conftest import require_module, table_listing

hudi = require_module("hudi")
from hudi import HudiTableBuilder  # noqa: E402

OPTS = {"table.name": "pv", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}
SCHEMA = "id string, ts int, p string, v int"
VALUES = ["a//b", "a/", "/tmp/somewhere", "../escape", "a/./b", "p/1/", "new york", "50%", "x=1", "é/ü", ".net"]


def write(spark, path, rows, mode="upsert", **extra):
    spark.createDataFrame(rows, SCHEMA).write.format("hoodie").options(**OPTS, **extra).mode(mode).save(path)


def ours(spark, path):
    return sorted(tuple(r) for r in spark.read.format("hoodie").load(path).select("id", "p", "v").collect())


def theirs(path):
    data = pa.Table.from_batches(HudiTableBuilder.from_base_uri(path).build().read())
    return sorted(tuple(r.values()) for r in data.select(["id", "p", "v"]).to_pylist()) if data.num_rows else []


def outside(root: Path, table: Path) -> list[str]:
    return sorted(str(p) for p in root.rglob("*") if p.is_file() and table not in p.parents)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("extra", [{}, {"hive_style_partitioning": "true"}, {"partitionpath.urlencode": "true"}],
                         ids=["plain", "hive", "urlencode"])
def test_values_read_back_once_and_follow_upserts_and_deletes(spark, tmp_path, table_type, extra):
    table = tmp_path / "t"
    opts = {"table.type": table_type, **extra}
    keys = [f"k{i}" for i in range(len(VALUES))]
    write(spark, str(table), [(k, 1, p, 1) for k, p in zip(keys, VALUES)], **opts)
    expected = sorted((k, p, 1) for k, p in zip(keys, VALUES))
    assert ours(spark, str(table)) == expected == theirs(str(table))
    write(spark, str(table), [(k, 2, p, 2) for k, p in zip(keys, VALUES)], **opts)
    expected = sorted((k, p, 2) for k, p in zip(keys, VALUES))
    assert ours(spark, str(table)) == expected == theirs(str(table))
    write(spark, str(table), [(k, 3, p, 0) for k, p in zip(keys[:6], VALUES[:6])], mode="delete", **opts)
    expected = sorted((k, p, 2) for k, p in zip(keys[6:], VALUES[6:]))
    assert ours(spark, str(table)) == expected == theirs(str(table))
    assert outside(tmp_path, table) == []
    # one partition folder per value, holding every file of its rows (a log file's name starts with a dot)
    folders = {p.rsplit("/", 1)[0] for p in table_listing(str(table)) if not p.startswith(".hoodie/")}
    assert len(folders) == len(VALUES)


@pytest.mark.parametrize("value", [".", ".."])
def test_dot_values_are_refused_before_anything_is_written(spark, tmp_path, value):
    table = tmp_path / "t"
    write(spark, str(table), [("a", 1, "x", 1)])
    commits = HoodieTable(str(table)).completed_commits()
    data = {p for p in table_listing(str(table)) if not p.startswith(".hoodie/")}
    with pytest.raises(InvalidRecordError, match=f"'p' has the value '{value}'"):
        write(spark, str(table), [("b", 2, value, 2), ("a", 2, "x", 2)])
    assert HoodieTable(str(table)).completed_commits() == commits
    assert {p for p in table_listing(str(table)) if not p.startswith(".hoodie/")} == data
    assert outside(tmp_path, table) == []
    assert ours(spark, str(table)) == [("a", "x", 1)] == theirs(str(table))
