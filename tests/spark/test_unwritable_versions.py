"""Every Spark write path refuses a table of a version this library does not write (the version-8 table
``v8_trips_8i3u1d`` of Apache Hudi 1.0) before anything is written, naming the version: the DataFrame
writer (upsert, as a new user would, and bulk_insert) and the streaming sink. Reads keep working."""

from __future__ import annotations

import pytest

from hoodie_datasource.errors import UnsupportedTableError
from tests.conftest import table_listing, unzip_table
from tests.spark.streams import land, stream

pytestmark = pytest.mark.spark

V8 = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip"
OPTS = {"table.name": "v8_trips_8i3u1d", "recordkey.field": "uuid", "partitionpath.field": "city",
        "precombine.field": "ts", "hive_style_partitioning": "true", "table.type": "MERGE_ON_READ"}
REFUSAL = "is a Hudi table of version 8 .*writes only table version 6.*nothing was written"


@pytest.mark.parametrize("operation", ["upsert", "bulk_insert", "delete"])
def test_the_dataframe_writer_refuses_a_version_8_table(spark, tmp_path, operation):
    path = str(unzip_table(V8, tmp_path))
    before = table_listing(path)
    rows = spark.read.format("hoodie").load(path).select("ts", "uuid", "rider", "driver", "fare", "city")
    assert rows.count() == 6
    with pytest.raises(UnsupportedTableError, match=REFUSAL):
        rows.limit(1).write.format("hoodie").options(**OPTS).mode(operation).save(path)
    assert table_listing(path) == before
    assert spark.read.format("hoodie").load(path).count() == 6


def test_the_streaming_sink_refuses_a_version_8_table(spark, tmp_path):
    path = str(unzip_table(V8, tmp_path))
    before = table_listing(path)
    src = tmp_path / "in"
    land(src, "f0", [{"ts": 1, "uuid": "new", "rider": "r", "driver": "d", "fare": 1.0, "city": "sf"}], 0)
    query = stream(spark, src, path, tmp_path / "ckpt", schema="ts long, uuid string, rider string, driver string, "
                   "fare double, city string", **{k: v for k, v in OPTS.items() if k != "table.name"},
                   **{"table.name": "v8_trips_8i3u1d"})
    with pytest.raises(Exception, match=REFUSAL):
        query.awaitTermination(240)
    assert table_listing(path) == before
