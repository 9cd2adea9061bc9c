"""NaN in float and double columns through a shim session: SQL ``WHERE`` and DataFrame ``filter`` on a hoodie
table answer as Spark does on the same rows (NaN = NaN, NaN above every other value, nulls unknown), on
copy-on-write and merge-on-read tables (the update in a log file), with native reads (Spark's parquet scan of
our base files, its row-group filter included) and with the Python reader alone; on base files as we write
them and as earlier versions did (min/max leaving NaN out). The filtering reader on its own, every kind of
pushed filter: tests/spark/test_nan_filters.py."""

from __future__ import annotations

import functools

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.write import base_file_writer

pytestmark = pytest.mark.spark

NAN = float("nan")
SCHEMA = "id int, ts bigint, d double, e float, p string"
FIRST = [(1, 1, 2.0, 2.0, "a"), (2, 1, NAN, NAN, "a"), (3, 1, 3.0, 3.0, "a"), (4, 1, 0.0, 0.0, "a"),
         (5, 1, 0.5, 0.5, "a"), (6, 1, None, None, "a")]
UPDATE = [(3, 2, 3.5, 3.5, "a"), (4, 2, NAN, NAN, "a")]  # merge-on-read: in a log file
PREDICATES = [
    "d > 1.0", "d >= 2.5", "NOT (d <= 1.0)", "d < 1.0", "d = double('NaN')", "d <> 1.0", "d IN (double('NaN'), 1.0)",
    "isnan(d)", "d <=> double('NaN')", "d < double('NaN')", "e > float(1.0)", "e = float('NaN')",
]
OPTS = {"table.name": "t", "recordkey.field": "id", "precombine.field": "ts", "partitionpath.field": "p"}


@pytest.fixture(scope="module")
def spark_answers(sql) -> dict[str, list[int]]:
    """Per predicate, the ids of the rows Spark keeps: evaluated by Spark on the same rows in memory."""
    rows = {r[0]: r for r in FIRST + UPDATE}
    columns = [F.expr(p).alias(f"c{i}") for i, p in enumerate(PREDICATES)]
    answers = sql.createDataFrame(list(rows.values()), SCHEMA).select("id", *columns).collect()
    return {p: sorted(r.id for r in answers if r[f"c{i}"] is True) for i, p in enumerate(PREDICATES)}


def _assert_answers(sql, spark_answers, name: str, location: str) -> None:
    """Every predicate in a SQL ``WHERE`` and a DataFrame ``filter``, natively and by the Python reader alone: one
    query of a branch per predicate (each a scan of its own, planned with its filter) for each."""
    df = sql.read.format("hoodie").load(location)
    for native in ("true", "false"):
        sql.conf.set("spark.hoodie.read.native", native)
        try:
            where = " UNION ALL ".join(f"SELECT {i} AS predicate, id FROM {name} WHERE {p}"
                                       for i, p in enumerate(PREDICATES))
            filtered = [df.filter(p).select(F.lit(i).alias("predicate"), "id") for i, p in enumerate(PREDICATES)]
            for kind, query in (("WHERE", sql.sql(where)), ("filter", functools.reduce(DataFrame.unionAll, filtered))):
                rows = query.collect()
                for i, predicate in enumerate(PREDICATES):
                    assert sorted(r.id for r in rows if r.predicate == i) == spark_answers[predicate], \
                        (native, kind, predicate)
        finally:
            sql.conf.unset("spark.hoodie.read.native")


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("statistics", ["written now", "NaN-less min/max"])
def test_filters_answer_as_spark_on_the_same_rows(sql, spark_answers, name, location, table_type, statistics,
                                                  monkeypatch):
    if statistics == "NaN-less min/max":  # as earlier versions wrote base files: every column with min/max
        monkeypatch.setattr(base_file_writer, "statistics_columns",
                            lambda schema, rows, skip=(): [n for n in schema.names if n not in skip])
    for rows in (FIRST, UPDATE):
        columns = list(zip(*rows))
        write_local(location, pa.table({"id": pa.array(columns[0], pa.int32()), "ts": columns[1],
                                        "d": pa.array(columns[2], pa.float64()),
                                        "e": pa.array(columns[3], pa.float32()), "p": columns[4]}),
                    {**OPTS, "table.type": table_type})
    sql.sql(f"CREATE TABLE {name} USING hoodie LOCATION '{location}'")
    _assert_answers(sql, spark_answers, name, location)
