"""Merge-on-read slices read as their base file less the rows the logs replace, plus the log rows that
win (``merged_reader.log_changes``, what the jvm-shim's parquet scan is combined with): the same rows as
the merge of the whole slice, deciding from the base file's key and ordering columns only."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.file_group.base_reader import read_base_file
from hoodie_datasource.file_group.merged_reader import log_changes, read_merged_slice
from hoodie_datasource.read.planned_files import planned_files
from hoodie_datasource.read.planner import plan_read
from hoodie_datasource.table.meta_columns import RECORD_KEY_COLUMN
from hoodie_datasource.table.table import Table
from tests.conftest import unzip_table
from tests.hudi_tables import non_lance_zips
from tests.unit.small_tables import batch, read_pairs

MOR_BUCKET = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
              "storage.type": "MERGE_ON_READ", "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "1"}


def base_file(plan, file_slice) -> pa.Table:
    return pa.Table.from_batches(list(read_base_file(plan.storage, file_slice.base_relative_path, plan.schema)),
                                 plan.schema)


def rebuilt(plan, file_slice) -> pa.Table:
    """The slice as the shim reads it: base file less the replaced rows (by position), plus the winning log rows."""
    changes = log_changes(plan.storage, file_slice, plan.schema, plan.visible_instants, plan.merge_rule)
    base = base_file(plan, file_slice)
    kept = np.ones(base.num_rows, dtype=bool)
    kept[changes.replaced] = False
    kept = base.filter(pa.array(kept))
    return pa.concat_tables([kept, changes.rows]).sort_by(RECORD_KEY_COLUMN)


@pytest.mark.parametrize("payload, replaced, rows, read", [
    # OverwriteWithLatestAvroPayload: the log record replaces the base record whatever its ordering value
    ("OverwriteWithLatestAvroPayload", ["a", "b", "c"], [("a", 10), ("b", 20), ("e", 50)],
     [("a", 10), ("b", 20), ("d", 4), ("e", 50)]),
    # DefaultHoodieRecordPayload: a base record with a greater ordering value stays (a); a tie goes to the log
    ("DefaultHoodieRecordPayload", ["b", "c"], [("b", 20), ("e", 50)], [("a", 1), ("b", 20), ("d", 4), ("e", 50)]),
])
def test_log_changes_decide_ties_lower_ordering_new_keys_and_deletes(tmp_path, payload, replaced, rows, read):
    path = str(tmp_path / "t")
    options = {**MOR_BUCKET, "payload.class": f"org.apache.hudi.common.model.{payload}"}
    write_local(path, batch([("a", 5, "x", 1), ("b", 5, "x", 2), ("c", 5, "x", 3), ("d", 5, "x", 4)]), options)
    # a: a lower ordering value; b: a tie; e: a key only in the logs; c: deleted
    write_local(path, batch([("a", 4, "x", 10), ("b", 5, "x", 20), ("e", 1, "x", 50)]), options)
    write_local(path, batch([("c", 9, "x", 0)]), {**options, "operation": "delete"})
    plan = plan_read(Table.load(path), ReadConfig())
    (file_slice,) = plan.slices
    assert file_slice.base_file is not None and file_slice.log_files
    assert [f.changes for f in planned_files(plan).files] == [True]
    changes = log_changes(plan.storage, file_slice, plan.schema, plan.visible_instants, plan.merge_rule)
    base_keys = base_file(plan, file_slice).column(RECORD_KEY_COLUMN)
    assert sorted(base_keys.take(pa.array(changes.replaced)).to_pylist()) == replaced
    assert sorted(zip(changes.rows.column("id").to_pylist(), changes.rows.column("v").to_pylist())) == rows
    assert read_pairs(path) == read
    merged = read_merged_slice(plan.storage, file_slice, plan.schema, plan.visible_instants, plan.merge_rule)
    assert rebuilt(plan, file_slice).equals(merged.sort_by(RECORD_KEY_COLUMN))


def test_log_records_pre_combine_around_deletes_decided_in_log_order(tmp_path):
    """a: logged 30, a soft delete at 25 is ignored (30 outweighs it), one at 40 counts, then 20 wins after
    it; e: a hard delete (no ordering value) always counts; d: two logged records, the greater one wins."""
    path = str(tmp_path / "t")
    def soft(rows, deleted):
        return batch(rows).append_column("_hoodie_is_deleted", pa.array([r[0] in deleted for r in rows]))
    write_local(path, soft([("a", 10, "x", 1), ("d", 10, "x", 1), ("e", 10, "x", 1)], ()), MOR_BUCKET)
    write_local(path, soft([("a", 30, "x", 2), ("d", 50, "x", 2), ("e", 90, "x", 2)], ()), MOR_BUCKET)
    write_local(path, soft([("a", 25, "x", 3), ("d", 20, "x", 3)], {"a"}), MOR_BUCKET)
    assert read_pairs(path) == [("a", 2), ("d", 2), ("e", 2)]
    write_local(path, batch([("e", 1, "x", 0)]), {**MOR_BUCKET, "operation": "delete"})
    write_local(path, soft([("a", 40, "x", 4)], {"a"}), MOR_BUCKET)
    assert read_pairs(path) == [("d", 2)]
    write_local(path, soft([("a", 20, "x", 5)], ()), MOR_BUCKET)
    assert read_pairs(path) == [("a", 5), ("d", 2)]
    plan = plan_read(Table.load(path), ReadConfig())
    (file_slice,) = plan.slices
    merged = read_merged_slice(plan.storage, file_slice, plan.schema, plan.visible_instants, plan.merge_rule)
    assert rebuilt(plan, file_slice).equals(merged.sort_by(RECORD_KEY_COLUMN))


@pytest.mark.parametrize("zip_name", [z for z in non_lance_zips() if "/mor/" in z or z.startswith("<")])
def test_real_hudi_slices_read_the_same_through_their_log_changes(tmp_path, zip_name):
    """Apache Hudi's own merge-on-read tables (Avro and parquet blocks, deletes, rolled-back blocks)."""
    base = str(unzip_table(zip_name, tmp_path))
    plan = plan_read(Table.load(base), ReadConfig())
    slices = [s for s in plan.slices if s.log_files and s.base_file is not None]
    if RECORD_KEY_COLUMN not in plan.schema.names or not slices:
        pytest.skip(f"{zip_name}: no slice with a base file and log files, or no record key column")
    for file_slice in slices:
        merged = read_merged_slice(plan.storage, file_slice, plan.schema, plan.visible_instants, plan.merge_rule)
        assert rebuilt(plan, file_slice).equals(merged.sort_by(RECORD_KEY_COLUMN)), file_slice.group
