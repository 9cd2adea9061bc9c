"""A table of a version this library reads but does not write (version 8, Apache Hudi 1.x, timeline layout 2)
refuses every change before anything is written, naming the version and what to do; reads keep working."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.errors import UnsupportedTableError
from hoodie_datasource.read.table_reader import read_table
from tests.conftest import table_listing, unzip_table

V8_MOR = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip"
V8_COW = "sample_table/cow/v8_simplekeygen_nonhivestyle.zip"
REFUSAL = "is a Hudi table of version 8 .*writes only table version 6.*nothing was written.*downgrade_table"


def trips_batch(table: pa.Table) -> pa.Table:
    return table.select(["ts", "uuid", "rider", "driver", "fare", "city"]).slice(0, 1)


def test_an_upsert_into_a_version_8_table_is_refused_before_anything_is_written(tmp_path):
    path = str(unzip_table(V8_MOR, tmp_path))
    before = table_listing(path)
    rows = read_table(path, ReadConfig())
    opts = {"table.name": "v8_trips_8i3u1d", "recordkey.field": "uuid", "partitionpath.field": "city",
            "precombine.field": "ts", "hive_style_partitioning": "true", "table.type": "MERGE_ON_READ"}
    with pytest.raises(UnsupportedTableError, match=REFUSAL):
        write_local(path, trips_batch(rows), opts)
    assert table_listing(path) == before
    assert read_table(path, ReadConfig()).num_rows == rows.num_rows == 6


@pytest.mark.parametrize("service", ["clean", "compact", "archive", "rollback", "schedule_compaction"])
def test_services_on_a_version_8_table_are_refused(tmp_path, service):
    path = str(unzip_table(V8_MOR, tmp_path))
    before = table_listing(path)
    table = HoodieTable(path)
    with pytest.raises(UnsupportedTableError, match=REFUSAL):
        getattr(table, service)()
    assert table_listing(path) == before
    assert table.latest_commit() is not None  # reads keep working


def test_a_version_8_copy_on_write_table_is_refused_too(tmp_path):
    path = str(unzip_table(V8_COW, tmp_path))
    before = table_listing(path)
    rows = read_table(path, ReadConfig())
    key = [f for f in rows.column_names if not f.startswith("_hoodie")][0]
    with pytest.raises(UnsupportedTableError, match=REFUSAL):
        write_local(path, rows.slice(0, 1).drop_columns([c for c in rows.column_names if c.startswith("_hoodie")]),
                    {"table.name": "t", "recordkey.field": key, "partitionpath.field": "byteField"})
    assert table_listing(path) == before
