"""NaN in float and double columns: the filtering reader answers every pushed filter as Spark does on the same
rows (NaN = NaN, NaN above every other value, comparisons with null unknown, also under Not), on copy-on-write
and merge-on-read tables (an update in a log file), on base files whose statistics leave NaN out as those of
earlier versions did (pyarrow's scanner must not skip NaN rows by them), and Spark's own parquet reader and
hudi-rs read our base files' NaN rows. SQL and DataFrame reads through the jvm-shim: tests/sql/test_sql_nan_filters.py."""

from __future__ import annotations

import glob
import os

import pyarrow as pa
import pytest
from pyspark.sql import functions as F
from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    LessThan,
    LessThanOrEqual,
    Not,
)

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.planner import plan_read
from hoodie_datasource.spark.reader import FilteringReader
from hoodie_datasource.table.table import Table
from hoodie_datasource.write import base_file_writer
from tests.conftest import require_module

NAN = float("nan")
OPTS = {"table.name": "t", "recordkey.field": "id", "precombine.field": "ts", "partitionpath.field": "p"}
SCHEMA = "id string, ts bigint, d double, e float, s string, p string"
FIRST = [("1", 1, 2.0, 2.0, "x", "a"), ("2", 1, NAN, NAN, "y", "a"), ("3", 1, 3.0, 3.0, None, "a"),
         ("4", 1, 0.0, 0.0, "z", "a"), ("5", 1, 0.5, 0.5, "x", "a"), ("6", 1, None, None, None, "a")]
UPDATE = [("3", 2, 3.5, 3.5, "y", "a"), ("4", 2, NAN, NAN, "x", "a")]  # merge-on-read: in a log file
FILTERS = [
    (GreaterThan(("d",), 1.0), "d > 1.0"),
    (GreaterThanOrEqual(("d",), 2.5), "d >= 2.5"),
    (LessThan(("d",), 1.0), "d < 1.0"),
    (LessThanOrEqual(("d",), 2.0), "d <= 2.0"),
    (Not(LessThanOrEqual(("d",), 1.0)), "NOT (d <= 1.0)"),
    (Not(GreaterThan(("d",), 1.0)), "NOT (d > 1.0)"),
    (Not(LessThan(("d",), 1.0)), "NOT (d < 1.0)"),
    (EqualTo(("d",), NAN), "d = double('NaN')"),
    (Not(EqualTo(("d",), NAN)), "d <> double('NaN')"),
    (EqualTo(("d",), 2.0), "d = 2.0"),
    (Not(EqualTo(("d",), 1.0)), "d <> 1.0"),
    (GreaterThan(("d",), NAN), "d > double('NaN')"),
    (GreaterThanOrEqual(("d",), NAN), "d >= double('NaN')"),
    (LessThan(("d",), NAN), "d < double('NaN')"),
    (LessThanOrEqual(("d",), NAN), "d <= double('NaN')"),
    (Not(LessThanOrEqual(("d",), NAN)), "NOT (d <= double('NaN'))"),
    (EqualNullSafe(("d",), NAN), "d <=> double('NaN')"),
    (Not(EqualNullSafe(("d",), NAN)), "NOT (d <=> double('NaN'))"),
    (In(("d",), (NAN, 1.0)), "d IN (double('NaN'), 1.0)"),
    (Not(In(("d",), (NAN, 2.0))), "NOT (d IN (double('NaN'), 2.0))"),
    (Not(In(("d",), (0.5, 2.0))), "NOT (d IN (0.5, 2.0))"),
    (GreaterThan(("e",), 1.0), "e > float(1.0)"),
    (EqualTo(("e",), NAN), "e = float('NaN')"),
    (Not(In(("s",), ("x", "z"))), "NOT (s IN ('x', 'z'))"),
]


def _write(path: str, table_type: str) -> None:
    opts = {**OPTS, "table.type": table_type}
    for rows in (FIRST, UPDATE):
        columns = list(zip(*rows))
        write_local(path, pa.table({"id": columns[0], "ts": columns[1], "d": pa.array(columns[2], pa.float64()),
                                    "e": pa.array(columns[3], pa.float32()), "s": pa.array(columns[4], pa.string()),
                                    "p": columns[5]}), opts)


def _final_rows() -> list[tuple]:
    rows = {r[0]: r for r in FIRST}
    rows.update({r[0]: r for r in UPDATE})
    return list(rows.values())


def _filtered(path: str, pushed) -> list[str]:
    plan = plan_read(Table.load(path), ReadConfig())
    reader = FilteringReader(plan, ReadConfig(), plan.schema)
    assert list(reader.pushFilters([pushed])) == []  # taken: Spark will not check it again
    return sorted(i for p in reader.partitions() for b in reader.read(p) for i in b.column("id").to_pylist())


@pytest.fixture(params=["COPY_ON_WRITE", "MERGE_ON_READ"])
def table_type(request) -> str:
    return request.param


@pytest.fixture(params=["written now", "written with NaN-less statistics"])
def nan_table(request, tmp_path, monkeypatch, table_type) -> str:
    if request.param != "written now":  # as earlier versions wrote base files: every column with min/max
        monkeypatch.setattr(base_file_writer, "statistics_columns",
                            lambda schema, rows, skip=(): [n for n in schema.names if n not in skip])
    path = str(tmp_path / "t")
    _write(path, table_type)
    return path


@pytest.fixture(scope="module")
def spark_answers(spark) -> dict[str, list[str]]:
    """Per predicate of ``FILTERS``, the ids of the rows Spark keeps: the predicates evaluated by Spark on the
    same rows in memory, in one query."""
    columns = [F.expr(predicate).alias(f"c{i}") for i, (_, predicate) in enumerate(FILTERS)]
    rows = spark.createDataFrame(_final_rows(), SCHEMA).select("id", *columns).collect()
    return {predicate: sorted(r.id for r in rows if r[f"c{i}"] is True) for i, (_, predicate) in enumerate(FILTERS)}


def test_pushed_filters_answer_as_spark_on_the_same_rows(spark_answers, nan_table):
    for pushed, predicate in FILTERS:
        assert _filtered(nan_table, pushed) == spark_answers[predicate], predicate


def test_spark_reads_the_nan_rows_of_our_base_files(spark, tmp_path, table_type):
    """A plain parquet read of our newest base file answers as Spark does on the same rows in memory: its
    row-group filter finds no min/max to skip the NaN rows by."""
    path = str(tmp_path / "t")
    _write(path, table_type)
    latest = max(glob.glob(os.path.join(path, "a", "*.parquet")), key=os.path.getmtime)
    stored = spark.read.parquet(latest).select("_hoodie_record_key", "d", "e").toDF("id", "d", "e")
    same_rows = spark.createDataFrame([tuple(r) for r in stored.collect()], "id string, d double, e float")
    for predicate in ("d = double('NaN')", "d > 3.0", "d IN (double('NaN'))", "e = float('NaN')", "e >= float(3.5)"):
        expected = sorted(r.id for r in same_rows.filter(predicate).collect())
        assert "2" in expected  # a NaN row of the first write, in every base file
        assert sorted(r.id for r in stored.filter(predicate).collect()) == expected, predicate


def test_hudi_rs_reads_the_same_rows(spark, tmp_path, table_type):
    require_module("hudi")
    from hudi import HudiTableBuilder

    path = str(tmp_path / "t")
    _write(path, table_type)
    data = pa.Table.from_batches(HudiTableBuilder.from_base_uri(path).build().read())
    theirs = sorted(zip(data.column("id").to_pylist(), data.column("d").to_pylist()))
    ours = sorted((r.id, r.d) for r in spark.createDataFrame(_final_rows(), SCHEMA).collect())
    assert [i for i, _ in theirs] == [i for i, _ in ours]
    assert [repr(d) for _, d in theirs] == [repr(d) for _, d in ours]  # nan and None as they are
