"""A merge-on-read write takes the next log version of a slice from its file-system view, which, built from the
metadata table, shows committed log files only: a write still pending (its writer at work, or dead with its
heartbeat not yet expired) may hold that version. The new log then rolls over to the next free version, as Hudi's
``HoodieLogFormatWriter`` does where the file exists, and its marker of the taken name goes, so that neither this
write's commit nor a rollback of it deletes the other write's file."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hoodie_datasource import fault_points
from hoodie_datasource.client import local_engine
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.client.write_client import start_write
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.file_names import LogFileName
from hoodie_datasource.table.markers import marked_files

OPTIONS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
           "hoodie.datasource.write.table.type": "MERGE_ON_READ"}


def batch(value: str, ts: int, keys: tuple[str, ...] = ("a",)) -> pa.Table:
    return pa.table({"k": list(keys), "ts": [ts] * len(keys), "v": [value] * len(keys), "p": ["x"] * len(keys)})


class Stopped(Exception):
    pass


def logs(storage) -> dict[int, str]:
    return {parsed.version: f.name for f in storage.list_dir("x").files if (parsed := LogFileName.parse(f.name))}


def snapshot(path: str, metadata: bool) -> list[tuple]:
    out = read_table(path, ReadConfig(metadata_enable=metadata))
    return sorted(zip(out.column("k").to_pylist(), out.column("v").to_pylist()))


def test_a_log_version_a_pending_write_holds_rolls_over(tmp_path, monkeypatch):
    path = str(tmp_path / "t")
    storage = open_storage(path, {})
    write_local(path, batch("first", 1, ("a", "b")), OPTIONS)
    write_local(path, batch("second", 2), OPTIONS)
    assert list(logs(storage)) == [1]

    # a write that stops before its commit point, its heartbeat left alive: its log file (version 2) stays, and the
    # metadata table does not list it
    def stop_before_commit(point: str, **context) -> None:
        if point == fault_points.BEFORE_COMMIT:
            raise Stopped
    pending = start_write(storage, OPTIONS, batch("pending", 3).schema)
    monkeypatch.setattr(fault_points, "reach", stop_before_commit)
    with pytest.raises(Stopped):
        local_engine._run(pending, batch("pending", 3))
    monkeypatch.undo()
    pending.transactions.stop_heartbeat(delete=False)
    assert list(logs(storage)) == [1, 2]

    write_local(path, batch("fourth", 4), OPTIONS)  # plans version 2 from the metadata table, writes version 3
    versions = logs(storage)
    assert list(versions) == [1, 2, 3]
    assert marked_files(storage, pending.instant_time) == [f"x/{versions[2]}"]
    assert snapshot(path, True) == snapshot(path, False) == [("a", "fourth"), ("b", "first")]

    pending.abort()  # its rollback deletes its own log file, not the one that rolled over past it
    assert list(logs(storage)) == [1, 3]
    assert snapshot(path, True) == snapshot(path, False) == [("a", "fourth"), ("b", "first")]
