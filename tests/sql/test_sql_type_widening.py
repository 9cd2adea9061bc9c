"""A table whose column a write widened (int files and bigint files side by side) read through SQL, where
base files stored as the table declares go to Spark's parquet scan and the others to the casting reader."""

from __future__ import annotations

import pytest

from tests.sql.helpers import assert_rows

pytestmark = pytest.mark.spark

OPTS = {"table.name": "w", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_widened_column_reads_through_sql(sql, location, table_type):
    def write(rows, schema):
        sql.createDataFrame(rows, schema).write.format("hoodie").options(**OPTS, **{"storage.type": table_type}) \
            .mode("upsert").save(location)

    write([("a", 1, "x", 1), ("b", 1, "y", 2)], "id string, ts int, p string, n int")
    write([("a", 2, "x", 2**40), ("c", 2, "z", 3)], "id string, ts int, p string, n bigint")
    assert_rows(sql, f"SELECT id, n FROM hoodie.`{location}`", [("a", 2**40), ("b", 2), ("c", 3)],
                "id string, n bigint")
    assert_rows(sql, f"SELECT id, n FROM hoodie.`{location}` WHERE n < 10", [("b", 2), ("c", 3)],
                "id string, n bigint")
