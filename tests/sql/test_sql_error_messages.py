"""What a SQL user sees when the library refuses something: the ``HoodieError``'s class and message
first (not a Python traceback inside Spark's wrapper), with Spark's exception class kept (an error at
analysis stays an ``AnalysisException``) and the original error chained as the cause."""

from __future__ import annotations

import pytest
from pyspark.errors import AnalysisException, PythonException

from tests.sql.helpers import cleaned_trips, create_trips

pytestmark = pytest.mark.spark


def raised(sql, statement: str, collect: bool = True) -> Exception:
    with pytest.raises(Exception) as caught:
        df = sql.sql(statement)
        if collect:
            df.collect()
    return caught.value


def assert_message_first(error: Exception, prefix: str) -> None:
    message = str(error)
    assert message.startswith(prefix), message[:2000]
    assert "Traceback" not in message.split("\n")[0]
    cause = error._origin.getCause()  # the JVM exception's cause: what Spark raised, the Python traceback in it
    assert cause is not None and "hoodie_datasource.errors." in cause.getMessage()


@pytest.fixture
def cleaned(sql, name, location):
    return name, cleaned_trips(sql, name, location)


def test_time_travel_past_the_cleaner(sql, cleaned):
    name, commits = cleaned
    error = raised(sql, f"SELECT * FROM {name} TIMESTAMP AS OF '{commits[0]}'")
    assert_message_first(error, f"ReadWindowError: Cannot read the table as of {commits[0]} exactly")


def test_table_changes_ending_before_beginning(sql, cleaned):
    name, commits = cleaned
    error = raised(sql, f"SELECT * FROM hoodie_table_changes('{name}', '{commits[2]}', '{commits[1]}')")
    assert_message_first(error, "HoodieConfigError: ")


def test_call_with_an_unknown_argument(sql, name, location):
    create_trips(sql, name, location)
    error = raised(sql, f"CALL show_commits(table => '{name}', limt => 3)", collect=False)
    assert isinstance(error, AnalysisException)
    assert_message_first(error, "HoodieConfigError: ")


@pytest.mark.parametrize("clustered", [True, False])
def test_insert_of_a_null_record_key(sql, name, location, clustered):
    create_trips(sql, name, location)
    sql.conf.set("spark.hoodie.sql.clusteredWrites", str(clustered).lower())
    try:
        error = raised(sql, f"INSERT INTO {name} VALUES (NULL, 2, 2.0, 'sf')", collect=False)
    finally:
        sql.conf.unset("spark.hoodie.sql.clusteredWrites")
    assert isinstance(error, PythonException if clustered else AnalysisException)  # from a task, or the commit
    assert_message_first(error, "InvalidRecordError: Record key field 'uuid' is null or empty in 1 record(s)")


def test_path_that_is_not_a_table(sql, tmp_path):
    error = raised(sql, f"SELECT * FROM hoodie.`{tmp_path}/not/a/table`")
    assert isinstance(error, AnalysisException)
    assert_message_first(error, "TableNotFoundError: ")


def test_create_table_with_a_bad_option(sql, name, location):
    error = raised(sql, f"CREATE TABLE {name} (uuid STRING, ts BIGINT) USING hoodie LOCATION '{location}' "
                        "TBLPROPERTIES (primaryKey = 'uuid', type = 'xyz')", collect=False)
    assert isinstance(error, AnalysisException)
    assert_message_first(error, "HoodieConfigError: Invalid value 'xyz' for option 'type'")

