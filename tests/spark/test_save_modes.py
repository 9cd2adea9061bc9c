"""save_modes: Hudi operations as save modes reach the save handler; every other write behaves as in plain PySpark.

The save handler is the boundary under test here, so the tests install a handler that only records
its arguments. Spark Connect cannot share this process with the classic session, so its check runs
``connect_save_modes.py`` in a subprocess.
"""

from __future__ import annotations

import os

import pytest
from pyspark.errors import AnalysisException, PySparkException, PySparkValueError
from pyspark.sql.readwriter import DataFrameWriter

from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.spark import save_modes
from hoodie_datasource.spark.register import save_dataframe

pytestmark = pytest.mark.spark

PARTITION_FIELD = "hoodie.datasource.write.partitionpath.field"


@pytest.fixture
def calls(spark):
    """Route hoodie saves to a recording handler; afterwards restore what the session fixture's register() set."""
    received: list[dict] = []

    def record(df, options, mode, path):
        received.append({"df": df, "options": options, "mode": mode, "path": path})

    save_modes.install(record)
    yield received
    save_modes.install(save_dataframe)


@pytest.fixture
def df(spark):
    return spark.createDataFrame([(1, "a", "x"), (2, "b", "y")], "id long, name string, k string")


# ---------------------------------------------------------------------------------------------------------------
# Classic: hoodie saves reach the handler


@pytest.mark.parametrize("order", ["mode_first", "format_first"])
@pytest.mark.parametrize("operation", sorted(save_modes.HOODIE_WRITE_OPERATIONS))
def test_every_operation_reaches_the_handler_in_either_order(calls, df, tmp_path, operation, order):
    path = str(tmp_path / "t")
    if order == "mode_first":
        df.write.mode(operation).format("hoodie").option("Hoodie.Table.Name", "t").save(path)
    else:
        df.write.format("hoodie").option("Hoodie.Table.Name", "t").mode(operation).save(path)

    assert len(calls) == 1
    assert calls[0]["df"] is df
    assert calls[0]["options"] == {"hoodie.table.name": "t"}
    assert (calls[0]["mode"], calls[0]["path"]) == (operation, path)
    assert not os.path.exists(path)  # Spark's own save never ran


def test_modes_and_formats_are_case_insensitive(calls, df, tmp_path):
    df.write.mode("Bulk_Insert").format("HOODIE").save(str(tmp_path))
    df.write.format("Hoodie").mode("UPSERT").save(str(tmp_path))
    assert [c["mode"] for c in calls] == ["bulk_insert", "upsert"]


def test_spark_modes_and_no_mode_reach_the_handler_as_given(calls, df, tmp_path):
    df.write.format("hoodie").mode("Append").save(str(tmp_path))
    df.write.format("hoodie").mode("overwrite").save(str(tmp_path))
    df.write.format("hoodie").mode("ignore").save(str(tmp_path))
    df.write.format("hoodie").save(str(tmp_path))
    df.write.format("hoodie").mode("upsert").mode(None).save(str(tmp_path))  # like Spark: mode(None) changes nothing
    assert [c["mode"] for c in calls] == ["append", "overwrite", "ignore", None, "upsert"]


def test_options_dict_keys_lower_cased_values_as_spark_strings(calls, df, tmp_path):
    opts = {"Hoodie.Table.Name": "trips", "recordkey.field": "id", "n": 3, "flag": True, "unset": None}
    df.write.format("hoodie").options(**opts).option("PreCombine.Field", "id").option("skipped", None) \
        .mode("insert").save(str(tmp_path))
    assert calls[0]["options"] == {
        "hoodie.table.name": "trips", "recordkey.field": "id", "n": "3", "flag": "true", "precombine.field": "id",
    }


def test_save_arguments_format_mode_and_options(calls, df, tmp_path):
    df.write.save(str(tmp_path), format="hoodie", mode="upsert", **{"recordkey.field": "id"})
    assert calls[0]["mode"] == "upsert"
    assert calls[0]["options"] == {"recordkey.field": "id"}
    assert calls[0]["path"] == str(tmp_path)


def test_partition_by_becomes_the_partition_path_option(calls, df, tmp_path):
    df.write.save(str(tmp_path), format="hoodie", mode="insert", partitionBy=["k", "name"])
    df.write.format("hoodie").mode("insert").save(str(tmp_path), partitionBy="k")
    df.write.partitionBy("name", "k").format("hoodie").mode("insert").save(str(tmp_path))
    df.write.format("hoodie").mode("insert").save(str(tmp_path))
    assert [c["options"].get(PARTITION_FIELD) for c in calls] == ["k,name", "k", "name,k", None]


def test_path_from_the_path_option_or_none(calls, df, tmp_path):
    df.write.format("hoodie").option("path", str(tmp_path)).mode("upsert").save()
    df.write.format("hoodie").mode("upsert").save()
    assert [c["path"] for c in calls] == [str(tmp_path), None]
    assert calls[0]["options"] == {"path": str(tmp_path)}


def test_install_with_other_format_names(calls, df, tmp_path):
    save_modes.install(lambda *args: calls.append(args), format_names=("Hudi",))
    df.write.format("hudi").mode("delete").save(str(tmp_path))
    assert calls == [(df, {}, "delete", str(tmp_path))]
    with pytest.raises(save_modes.InvalidSaveModeError, match="only applies to format 'hudi'"):
        df.write.format("hoodie").mode("delete").save(str(tmp_path))


def test_install_is_idempotent_and_uninstall_restores_the_methods(calls, df, tmp_path):
    classes = [DataFrameWriter]
    try:
        from pyspark.sql.connect.readwriter import DataFrameWriter as ConnectWriter

        classes.append(ConnectWriter)
    except ImportError:
        pass
    save_modes.uninstall()
    names = ("format", "option", "options", "partitionBy", "mode", "save", "parquet", "saveAsTable")
    originals = {(cls, name): vars(cls)[name] for cls in classes for name in names}

    second: list = []
    save_modes.install(lambda *args: calls.append(args))
    patched = {key: vars(key[0])[key[1]] for key in originals}
    save_modes.install(lambda *args: second.append(args))  # replaces the handler, does not wrap again
    for (cls, name), fn in originals.items():
        assert vars(cls)[name] is patched[cls, name] is not fn
        assert vars(cls)[name].__wrapped__ is fn
    df.write.format("hoodie").mode("upsert").save(str(tmp_path))
    assert (calls, len(second)) == ([], 1)

    save_modes.uninstall()
    save_modes.uninstall()
    assert all(vars(cls)[name] is fn for (cls, name), fn in originals.items())


# ---------------------------------------------------------------------------------------------------------------
# Classic: other formats behave as in plain PySpark (same outcome with and without the patch)


def _outcome(spark, write, read_format: str, path: str) -> tuple:
    """What a write did: the rows it left (read back), or the error's class and whether it left anything."""
    try:
        write(path)
    except Exception as exc:
        assert isinstance(exc, PySparkException), repr(exc)
        return "error", exc.getCondition(), isinstance(exc, AnalysisException), os.path.exists(path)
    return "ok", sorted(tuple(r) for r in spark.read.format(read_format).load(path).collect())


def _twice(write):
    def run(df, path):
        write(df, path)
        write(df, path)

    return run


ACCEPTED = {
    "parquet overwrite": (_twice(lambda df, p: df.write.format("parquet").mode("overwrite").save(p)), "parquet"),
    "parquet append": (_twice(lambda df, p: df.write.mode("append").format("parquet").save(p)), "parquet"),
    "parquet default mode": (_twice(lambda df, p: df.write.format("parquet").save(p)), "parquet"),
    "save args, partitioned": (
        lambda df, p: df.write.save(p, format="parquet", mode="overwrite", partitionBy="k"), "parquet"),
    "json()": (_twice(lambda df, p: df.write.mode("Overwrite").json(p)), "json"),
}
REJECTED = {
    "parquet upsert": lambda df, p: df.write.format("parquet").mode("upsert").save(p),
    "upsert before parquet": lambda df, p: df.write.mode("UPSERT").format("parquet").save(p),
    "default format insert": lambda df, p: df.write.mode("insert").save(p),
    "save(mode=delete)": lambda df, p: df.write.save(p, format="parquet", mode="delete"),
    "parquet() after mode": lambda df, p: df.write.mode("bulk_insert").parquet(p),
    "parquet(mode=...)": lambda df, p: df.write.parquet(p, mode="insert_overwrite"),
    "json() after mode": lambda df, p: df.write.mode("delete_partition").json(p),
}


@pytest.mark.parametrize("case", list(ACCEPTED))
def test_other_formats_write_as_in_plain_pyspark(calls, spark, df, tmp_path, case):
    write, read_format = ACCEPTED[case]
    patched = _outcome(spark, lambda p: write(df, p), read_format, str(tmp_path / "patched"))
    save_modes.uninstall()
    plain = _outcome(spark, lambda p: write(df, p), read_format, str(tmp_path / "plain"))
    assert patched == plain
    assert calls == []
    if case == "parquet default mode":
        assert plain[:2] == ("error", "PATH_ALREADY_EXISTS")
    else:
        assert plain[0] == "ok"


@pytest.mark.parametrize("case", list(REJECTED))
def test_operation_modes_with_other_formats_fail_as_in_plain_pyspark(calls, spark, df, tmp_path, case):
    write = REJECTED[case]
    patched = _outcome(spark, lambda p: write(df, p), "parquet", str(tmp_path / "patched"))
    save_modes.uninstall()
    plain = _outcome(spark, lambda p: write(df, p), "parquet", str(tmp_path / "plain"))
    assert patched == plain == ("error", "INVALID_SAVE_MODE", True, False)
    assert calls == []


def test_invalid_mode_error_names_the_format_and_the_valid_modes(calls, spark, df, tmp_path):
    with pytest.raises(save_modes.InvalidSaveModeError) as caught:
        df.write.mode("upsert").format("parquet").save(str(tmp_path / "p"))
    message = str(caught.value)
    assert message.startswith('[INVALID_SAVE_MODE] The specified save mode "upsert" is invalid for format "parquet"')
    assert "only applies to format 'hoodie'" in message
    assert '"append", "overwrite", "ignore", "error", "errorifexists", "default"' in message
    assert isinstance(caught.value, HoodieConfigError)
    assert isinstance(caught.value, PySparkValueError) and isinstance(caught.value, AnalysisException)
    assert caught.value.getSqlState() == "42000"

    with pytest.raises(save_modes.InvalidSaveModeError, match=r"invalid for saveAsTable\(\)"):
        df.write.format("hoodie").mode("upsert").saveAsTable("save_modes_t")
    assert not spark.catalog.tableExists("save_modes_t")


# ---------------------------------------------------------------------------------------------------------------
# Spark Connect (in a subprocess)


def _connect_missing() -> str | None:
    try:
        import pyspark.sql.connect.readwriter  # noqa: F401  (checks grpcio, grpcio-status, protos, zstandard)
    except ImportError as exc:
        return f"Spark Connect client dependencies are not installed (pip install 'pyspark[connect]'): {exc}"
    return None


@pytest.mark.skipif(_connect_missing() is not None, reason=str(_connect_missing()))
def test_spark_connect_writer(over_spark_connect):
    result, work = over_spark_connect("save_modes")
    path = str(work / "t")
    assert result["session"].startswith("pyspark.sql.connect")
    assert result["received"] == [
        {"df": "pyspark.sql.connect.dataframe.DataFrame", "rows": [[1, "x"], [2, "y"]],
         "options": {"a": "b"}, "mode": "upsert", "path": path},
        {"df": "pyspark.sql.connect.dataframe.DataFrame", "rows": [[1, "x"], [2, "y"]],
         "options": {"c": "1"}, "mode": "delete", "path": path},
        {"df": "pyspark.sql.connect.dataframe.DataFrame", "rows": [[1, "x"], [2, "y"]],
         "options": {PARTITION_FIELD: "s", "path": path}, "mode": "insert", "path": path},
    ]
    assert not os.path.exists(path)
    assert result["parquet_overwrite_rows"] == 2
    for rejected in result["rejected"]:
        assert rejected["condition"] == "INVALID_SAVE_MODE" and rejected["value_error"], rejected
        assert 'is invalid for format "parquet"' in rejected["message"], rejected
        assert not rejected["written"], rejected
