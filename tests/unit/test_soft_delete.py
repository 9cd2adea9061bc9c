"""Hudi's soft delete (``_hoodie_is_deleted``) and null ordering values, through the core write path
(no JVM): COW and MOR, upsert and insert, combining within a batch."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.errors import InvalidRecordError, SchemaMismatchError
from hoodie_datasource.read.table_reader import read_table

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}


def rows(ids, ts, deleted, p="x"):
    return pa.table({"id": ids, "ts": ts, "p": [p] * len(ids), "v": [f"{i}@{t}" for i, t in zip(ids, ts)],
                     "_hoodie_is_deleted": pa.array(deleted, pa.bool_())})


def contents(path, **cfg):
    out = read_table(path, ReadConfig(**cfg))
    return sorted(zip(out.column("id").to_pylist(), out.column("v").to_pylist(),
                      out.column("_hoodie_is_deleted").to_pylist()))


def last_stats(path):
    table = HoodieTable(path)
    metadata = table.commit_metadata(table.latest_commit())
    stats = [s for group in metadata["partitionToWriteStats"].values() for s in group]
    return {k: sum(s.get(k, 0) for s in stats) for k in ("numDeletes", "numInserts", "numUpdateWrites")}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_soft_delete_upsert_removes_rows_and_keeps_the_column(tmp_path, table_type):
    path = str(tmp_path / "t")
    opts = {**OPTS, "storage.type": table_type}
    write_local(path, rows(["a", "b", "c"], [1, 1, 1], [False, False, False]), opts)
    # b deleted, c updated, z (unknown) soft-deleted: nothing to do for it
    write_local(path, rows(["b", "c", "z"], [2, 2, 2], [True, False, True]), opts)
    assert contents(path) == [("a", "a@1", False), ("c", "c@2", False)]
    assert last_stats(path)["numDeletes"] == 1
    table = HoodieTable(path)
    schema = json.loads(table.commit_metadata(table.latest_commit())["extraMetadata"]["schema"])
    assert "_hoodie_is_deleted" in [f["name"] for f in schema["fields"]]


def test_soft_delete_with_higher_ordering_wins_within_a_batch(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, rows(["a", "b"], [1, 1], [False, False]), OPTS)
    batch = pa.concat_tables([
        rows(["a", "a", "b", "b", "n", "n", "m", "m"], [5, 3, 3, 5, 5, 3, 3, 5],
             [True, False, True, False, True, False, True, False]),
    ])
    write_local(path, batch, OPTS)
    # a: the delete (ts 5) beats the update (ts 3); b: the update (ts 5) beats the delete;
    # n: new key, its delete (ts 5) beats its insert: nothing written; m: the insert (ts 5) wins
    assert contents(path) == [("b", "b@5", False), ("m", "m@5", False)]


def test_soft_delete_in_an_insert_is_not_written(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, rows(["a", "b"], [1, 1], [False, True]), {**OPTS, "operation": "insert"})
    assert contents(path) == [("a", "a@1", False)]


def test_stored_record_with_higher_ordering_survives_a_soft_delete_with_default_payload(tmp_path):
    path = str(tmp_path / "t")
    opts = {**OPTS, "payload.class": "org.apache.hudi.common.model.DefaultHoodieRecordPayload"}
    write_local(path, rows(["a", "b"], [5, 5], [False, False]), opts)
    write_local(path, rows(["a", "b"], [3, 7], [True, True]), opts)
    assert contents(path) == [("a", "a@5", False)]


def test_non_boolean_soft_delete_column_is_refused(tmp_path):
    path = str(tmp_path / "t")
    data = rows(["a"], [1], [False]).set_column(4, "_hoodie_is_deleted", pa.array(["true"]))
    with pytest.raises(SchemaMismatchError, match="_hoodie_is_deleted .*must be boolean"):
        write_local(path, data, OPTS)


def test_null_precombine_value_fails_a_combining_write_and_changes_nothing(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, rows(["a"], [1], [False]), OPTS)
    before = HoodieTable(path).completed_commits()
    bad = rows(["a", "b"], [2, None], [False, False])
    with pytest.raises(InvalidRecordError, match="Precombine field 'ts' is null in 1 record"):
        write_local(path, bad, OPTS)
    assert HoodieTable(path).completed_commits() == before  # the failed instant was rolled back
    assert contents(path) == [("a", "a@1", False)]


def test_null_precombine_value_is_kept_by_a_write_that_does_not_combine(tmp_path):
    # Hudi reads the ordering value only when it combines (hoodie.combine.before.insert is false by default)
    path = str(tmp_path / "t")
    write_local(path, rows(["a", "b"], [1, None], [False, False]), {**OPTS, "operation": "insert"})
    out = read_table(path, ReadConfig())
    assert sorted(zip(out.column("id").to_pylist(), out.column("ts").to_pylist())) == [("a", 1), ("b", None)]
