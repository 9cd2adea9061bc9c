"""Errors a person can read: the HoodieError itself, its message first, for a bad read path, a bad
record inside a write task, a misspelt save mode and a missing precombine column; a commit's log
line that tells inserts, updates and deletes from the rows a merge rewrites; and, on Spark Connect, the
write's steps as job tags (classic job descriptions are in ``test_job_descriptions.py``).

Spark Connect runs ``connect_errors.py`` in a subprocess with the other Spark Connect scenarios (it cannot
share this process with the classic session; ``over_spark_connect`` in tests/spark/conftest.py)."""

from __future__ import annotations

import logging
import os

import pytest
from pyspark.errors import AnalysisException, PythonException

from hoodie_datasource import HoodieTable
from hoodie_datasource.errors import (
    HoodieConfigError,
    InvalidRecordError,
    SchemaMismatchError,
    TableNotFoundError,
)
from hoodie_datasource.spark import save_modes

OPTS = {"table.name": "trips", "recordkey.field": "uuid", "partitionpath.field": "city", "precombine.field": "ts"}
SCHEMA = "uuid string, ts long, city string, fare double"


def write(df, path, mode="upsert", **options):
    df.write.format("hoodie").options(**options).mode(mode).save(path)


def files_of(path):
    return sorted(os.path.relpath(os.path.join(root, name), path) for root, _, names in os.walk(path)
                  for name in names)


@pytest.fixture
def seeded(spark, table_path):
    write(spark.createDataFrame([("a", 1, "sf", 1.0), ("b", 1, "nyc", 2.0)], SCHEMA), table_path, **OPTS)
    return table_path


def test_bad_read_path_raises_table_not_found_naming_the_path(spark, tmp_path):
    missing = str(tmp_path / "not_a_table")
    with pytest.raises(TableNotFoundError, match="^No Hudi table at .*not_a_table") as caught:
        spark.read.format("hoodie").load(missing)
    assert not isinstance(caught.value, AnalysisException)
    with pytest.raises(TableNotFoundError, match="not_a_table"):
        spark.read.format("HOODIE").option("path", missing).load()
    with pytest.raises(TableNotFoundError, match="not_a_table"):
        spark.read.load(missing, format="hoodie")


def test_bad_read_option_raises_the_config_error_in_the_caller(spark, seeded):
    with pytest.raises(HoodieConfigError, match="^query=incremental needs option 'begin.instant'"):
        spark.read.format("hoodie").option("query", "incremental").load(seeded)
    with pytest.raises(HoodieConfigError, match="^Unknown option 'begin.instnt'"):
        spark.read.format("hoodie").options(query="incremental", **{"begin.instnt": "000"}).load(seeded)


def test_valid_reads_and_other_formats_are_unchanged(spark, seeded, tmp_path):
    rows = spark.read.format("hoodie").load(seeded).select("uuid", "fare").orderBy("uuid").collect()
    assert [(r.uuid, r.fare) for r in rows] == [("a", 1.0), ("b", 2.0)]
    first = HoodieTable(seeded).latest_commit()
    assert spark.read.load(seeded, format="hoodie", query="incremental", **{"begin.instant": first}).count() == 0
    with pytest.raises(AnalysisException, match="PATH_NOT_FOUND"):
        spark.read.format("parquet").load(str(tmp_path / "nothing"))


def test_bad_record_in_a_task_raises_its_hoodie_error_message_first(spark, seeded):
    before = files_of(seeded)
    bad = spark.createDataFrame([("z", 1, "sf", 1.0), (None, 1, "sf", 1.0)], SCHEMA)
    with pytest.raises(InvalidRecordError) as caught:
        write(bad, seeded, **OPTS)
    assert str(caught.value) == "Record key field 'uuid' is null or empty in 1 record(s); every record needs a record key"
    assert isinstance(caught.value.__cause__, PythonException)  # Spark's exception, chained
    assert [f for f in files_of(seeded) if not f.startswith(".hoodie/")] == [
        f for f in before if not f.startswith(".hoodie/")]


def test_bad_record_of_a_global_index_write_raises_its_hoodie_error(spark, seeded, tmp_path):
    """The general DAG (global index: no per-partition job) re-raises the task's error too."""
    path = str(tmp_path / "global")
    options = {**OPTS, "index.type": "GLOBAL_BLOOM"}
    write(spark.createDataFrame([("a", 1, "sf", 1.0)], SCHEMA), path, **options)
    with pytest.raises(InvalidRecordError, match="^Record key field 'uuid' is null or empty"):
        write(spark.createDataFrame([(None, 2, "sf", 1.0)], SCHEMA), path, **options)
    assert spark.read.format("hoodie").load(path).count() == 1


def test_misspelt_save_mode_lists_the_hudi_operations(spark, seeded):
    df = spark.createDataFrame([("a", 2, "sf", 3.0)], SCHEMA)
    with pytest.raises(save_modes.InvalidSaveModeError) as caught:
        write(df, seeded, mode="upsret", **OPTS)
    message = str(caught.value)
    assert "did you mean 'upsert'?" in message
    for name in ("append", "overwrite", "ignore", "errorifexists", *save_modes.HOODIE_WRITE_OPERATIONS):
        assert name in message
    assert isinstance(caught.value, HoodieConfigError) and isinstance(caught.value, AnalysisException)
    with pytest.raises(save_modes.InvalidSaveModeError, match="did you mean 'insert_overwrite'"):
        df.write.mode("insert_overwrit").format("hoodie").save(seeded)
    assert len(HoodieTable(seeded).completed_commits()) == 1


def test_missing_precombine_column_of_an_existing_table_says_it_cannot_change(spark, seeded):
    no_ts = spark.createDataFrame([("a", "sf", 5.0)], "uuid string, city string, fare double")
    options = {key: value for key, value in OPTS.items() if key != "precombine.field"}
    with pytest.raises(SchemaMismatchError) as caught:
        write(no_ts, seeded, **options)
    message = str(caught.value)
    assert "The table's precombine field is 'ts'" in message and "it cannot change" in message
    assert "add a column 'ts' to the data" in message
    assert "set hoodie.datasource.write.precombine.field" not in message.lower()


def test_missing_precombine_column_without_a_table_precombine_says_what_works(spark, tmp_path):
    path = str(tmp_path / "no_precombine")
    options = {key: value for key, value in OPTS.items() if key != "precombine.field"}
    no_ts = spark.createDataFrame([("a", "sf", 5.0)], "uuid string, city string, fare double")
    write(no_ts, path, **options)
    with pytest.raises(SchemaMismatchError) as caught:
        write(no_ts, path, **options, **{"precombine.field": "ts"})
    message = str(caught.value)
    assert "Set hoodie.datasource.write.precombine.field to one of them, or leave it unset" in message
    assert "cannot change" not in message
    write(no_ts.withColumn("fare", no_ts.fare * 2), path, **options)  # what the message says works
    assert [r.fare for r in spark.read.format("hoodie").load(path).collect()] == [10.0]


def test_commit_log_line_counts_inserts_updates_deletes_and_rewritten_rows(spark, table_path, caplog):
    ten = [(f"k{i}", 1, "sf", float(i)) for i in range(10)]
    write(spark.createDataFrame(ten, SCHEMA), table_path, **OPTS)
    caplog.set_level(logging.INFO, logger="hoodie_datasource.client.write_client")
    caplog.clear()
    upsert = [("k0", 2, "sf", 100.0), ("k1", 2, "sf", 101.0), ("new", 2, "sf", 7.0)]
    write(spark.createDataFrame(upsert, SCHEMA), table_path, **OPTS)
    write(spark.createDataFrame([("k2", 3, "sf", 0.0)], SCHEMA), table_path, mode="delete", **OPTS)
    committed = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Committed")]
    assert len(committed) == 2, committed
    assert committed[0].endswith(": 1 inserts, 2 updates, 0 deletes; 1 files written, 8 unchanged rows rewritten")
    assert committed[1].endswith(": 0 inserts, 0 updates, 1 deletes; 1 files written, 10 unchanged rows rewritten")
    assert spark.read.format("hoodie").load(table_path).count() == 10


def _connect_missing() -> str | None:
    try:
        import pyspark.sql.connect.readwriter  # noqa: F401
    except ImportError as exc:
        return f"Spark Connect client dependencies are not installed: {exc}"
    return None


@pytest.mark.skipif(_connect_missing() is not None, reason=str(_connect_missing()))
def test_errors_over_spark_connect(over_spark_connect):
    result, _ = over_spark_connect("errors")
    assert result["session"].startswith("pyspark.sql.connect")
    bad_path = result["bad_path"]
    assert bad_path["type"] == "hoodie_datasource.errors.TableNotFoundError", bad_path
    assert bad_path["message"].startswith("No Hudi table at ") and "not_a_table" in bad_path["message"]
    bad_record = result["bad_record"]
    assert bad_record["type"] == "hoodie_datasource.errors.InvalidRecordError", bad_record
    assert bad_record["message"] == ("Record key field 'uuid' is null or empty in 1 record(s); "
                                     "every record needs a record key")
    assert bad_record["cause"] == "pyspark.errors.exceptions.connect.PythonException"
    assert "did you mean 'upsert'?" in result["bad_mode"]["message"] and "bulk_insert" in result["bad_mode"]["message"]
    assert result["rows_after"] == [["a", 1.0]]
    # the write's Spark jobs carry its step as a job tag (Connect sets job descriptions itself); gone afterwards.
    # 2 tasks: a core each of local[2] (``task_balance.inferred_parallelism``), not the 4 shuffle partitions
    assert result["write_tags"] == [f"hoodie upsert trips {result['instant']}: tagging and writing by partition (2 tasks)"]
    assert result["tags_after_write"] == []
