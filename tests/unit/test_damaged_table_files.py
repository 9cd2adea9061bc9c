"""Damaged table files: a corrupt or truncated instant file, commit metadata, base-file footer or
``hoodie.properties``, and an unknown table version. Each read or write fails with a ``HoodieError``
subclass that names the file, and a write leaves the table as it was (same files, same rows). No JVM."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from hoodie_datasource import HoodieError, HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.errors import UnsupportedTableError
from tests.unit.small_tables import batch, read_pairs

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}


def _files(path: str) -> dict[str, bytes]:
    found = {}
    for root, _, names in os.walk(path):
        for name in names:
            full = os.path.join(root, name)
            with open(full, "rb") as handle:
                found[os.path.relpath(full, path)] = handle.read()
    return found


def _damage(path: str, rel: str, change: Callable[[bytes], bytes]) -> str:
    full = os.path.join(path, rel)
    with open(full, "rb") as handle:
        content = handle.read()
    with open(full, "wb") as handle:
        handle.write(change(content))
    return full


def _latest_commit_file(path: str) -> str:
    return os.path.join(".hoodie", f"{HoodieTable(path).latest_commit()}.commit")


def _base_file(path: str) -> str:
    """The base file of the latest commit (its name ends with that instant)."""
    latest = HoodieTable(path).latest_commit()
    return next(os.path.join("x", n) for n in os.listdir(os.path.join(path, "x")) if n.endswith(f"_{latest}.parquet"))


DAMAGES = {
    "commit metadata: not JSON": (_latest_commit_file, lambda b: b[: len(b) // 2], "commit"),
    "commit metadata: binary garbage": (_latest_commit_file, lambda b: b"\x00\xff" * 40, "commit"),
    "base file: truncated footer": (_base_file, lambda b: b[: len(b) - 40], ".parquet"),
    "base file: not parquet": (_base_file, lambda b: b"not a parquet file at all", ".parquet"),
    "hoodie.properties: truncated": (lambda p: os.path.join(".hoodie", "hoodie.properties"),
                                     lambda b: b[: len(b) // 3], "hoodie.properties"),
}


@pytest.fixture
def table(tmp_path) -> str:
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "x", 2)]), OPTS)
    write_local(path, batch([("a", 2, "x", 10)]), OPTS)
    return path


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_damaged_files_fail_reads_and_writes_clearly_and_change_nothing(table: str, damage: str) -> None:
    where, change, named = DAMAGES[damage]
    _damage(table, where(table), change)
    before = _files(table)
    with pytest.raises(HoodieError, match=named.replace(".", r"\.")):
        read_pairs(table)
    with pytest.raises(HoodieError, match=named.replace(".", r"\.")):
        write_local(table, batch([("c", 3, "x", 3)]), OPTS)
    assert _files(table) == before


def test_unknown_table_version_is_refused_naming_it(table: str) -> None:
    _damage(table, os.path.join(".hoodie", "hoodie.properties"),
            lambda b: b.replace(b"hoodie.table.version=6", b"hoodie.table.version=42"))
    before = _files(table)
    for attempt in (lambda: read_pairs(table), lambda: write_local(table, batch([("c", 3, "x", 3)]), OPTS)):
        with pytest.raises(UnsupportedTableError, match="42"):
            attempt()
    assert _files(table) == before


def test_damaged_properties_are_read_from_an_intact_backup(table: str) -> None:
    """Hudi keeps ``hoodie.properties.backup`` while it updates the file and reads it when the file
    fails its checksum: so do we."""
    props = os.path.join(table, ".hoodie", "hoodie.properties")
    with open(props, "rb") as handle, open(props + ".backup", "wb") as backup:
        backup.write(handle.read())
    _damage(table, os.path.join(".hoodie", "hoodie.properties"), lambda b: b[: len(b) // 3])
    assert read_pairs(table) == [("a", 10), ("b", 2)]


def test_missing_properties_are_read_from_the_backup(table: str) -> None:
    """Hudi updates ``hoodie.properties`` by deleting it and writing it again, the backup beside it: a
    table caught in between is read from the backup, as Hudi reads it."""
    props = os.path.join(table, ".hoodie", "hoodie.properties")
    os.replace(props, props + ".backup")
    assert read_pairs(table) == [("a", 10), ("b", 2)]
    write_local(table, batch([("c", 1, "x", 3)]), OPTS)
    assert read_pairs(table) == [("a", 10), ("b", 2), ("c", 3)]
    os.remove(props + ".backup")
    with pytest.raises(HoodieError, match="No Hudi table"):
        read_pairs(table)
