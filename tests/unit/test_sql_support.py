"""What the SQL shim relies on in the Python core: Hudi's SQL table properties as options, CREATE TABLE
without a commit, and a per-row delete marker so one MERGE is one commit."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie_datasource import HoodieConfigError, HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.client.write_client import create_table
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.config.write_config import resolve_write_config
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.meta_columns import IS_DELETE_COLUMN
from tests.unit.small_tables import batch
from tests.unit.small_tables import read_pairs as read

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}


@pytest.mark.parametrize(("given", "table_type"), [("cow", "COPY_ON_WRITE"), ("MOR", "MERGE_ON_READ")])
def test_sql_table_properties_are_options(given, table_type):
    cfg = resolve_write_config({"hoodie.table.name": "t", "primaryKey": "id", "preCombineField": "ts", "type": given}, None)
    assert (cfg.keygen.record_key_fields, cfg.precombine_field, cfg.table_type) == (("id",), "ts", table_type)


def test_a_bad_sql_table_type_names_every_spelling():
    with pytest.raises(HoodieConfigError, match="'xyz' for option 'type'.*COPY_ON_WRITE, MERGE_ON_READ, cow, mor"):
        resolve_write_config({"hoodie.table.name": "t", "primaryKey": "id", "type": "xyz"}, None)


def test_create_table_writes_properties_and_no_commit(tmp_path):
    path = str(tmp_path / "t")
    schema = batch([("a", 1, "x", 1)]).schema
    create_table(open_storage(path), OPTS, schema)
    table = HoodieTable(path)
    assert table.completed_commits() == []
    assert table.config.record_key_fields == ("id",)
    empty = read_table(path, ReadConfig())
    assert empty.num_rows == 0 and {"id", "ts", "p", "v"} <= set(empty.column_names)

    create_table(open_storage(path), OPTS, schema)  # an existing table that agrees is left alone
    with pytest.raises(HoodieConfigError):  # one that does not is an error, and nothing changes
        create_table(open_storage(path), {**OPTS, "recordkey.field": "v"}, schema)
    assert HoodieTable(path).config.record_key_fields == ("id",)


def test_delete_marker_deletes_flagged_rows_in_the_same_upsert(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "x", 2), ("c", 1, "y", 3)]), OPTS)
    changes = batch([("a", 2, "x", 10), ("b", 2, "x", 0), ("z", 2, "y", 0), ("n", 2, "y", 7)])
    changes = changes.append_column(IS_DELETE_COLUMN, pa.array([False, True, True, None]))
    t2 = write_local(path, changes, OPTS)
    # a updated, b deleted, z (an unknown key flagged as delete) not inserted, n (null flag) inserted
    assert read(path) == [("a", 10), ("c", 3), ("n", 7)]
    assert HoodieTable(path).completed_commits()[-1] == t2
    for file in (tmp_path / "t").rglob("*.parquet"):
        assert IS_DELETE_COLUMN not in pq.read_schema(file).names  # the marker is never stored
