"""task_error: the HoodieError a Spark task raised, found in the text Spark reports it with (the
shapes below are those of classic PySpark and Spark Connect 4.x; test_error_messages.py checks the
real ones end to end)."""

from __future__ import annotations

from hoodie_datasource.errors import CorruptFileError, InvalidRecordError
from hoodie_datasource.spark.task_errors import task_error

TRACEBACK = """Traceback (most recent call last):
  File "/x/hoodie_datasource/write/keygen.py", line 71, in record_keys
    raise InvalidRecordError(
hoodie_datasource.errors.InvalidRecordError: Record key field 'uuid' is null or empty in 1 record(s)"""


def test_classic_python_worker_message():
    found = task_error(Exception(f"An exception was thrown from the Python worker:\n{TRACEBACK}\n"))
    assert type(found) is InvalidRecordError
    assert str(found) == "Record key field 'uuid' is null or empty in 1 record(s)"


def test_connect_message_with_sqlstate_and_jvm_stack():
    text = (f"\n  An exception was thrown from the Python worker.\n[PYTHON_EXCEPTION] {TRACEBACK}\n SQLSTATE: 38000"
            "\n\nJVM stacktrace:\norg.apache.spark.api.python.PythonException\n\tat org.apache.spark.X(X.scala:1)")
    found = task_error(Exception(text))
    assert type(found) is InvalidRecordError
    assert str(found) == "Record key field 'uuid' is null or empty in 1 record(s)"


def test_message_of_several_lines_and_the_last_error_of_a_chain():
    text = (f"{TRACEBACK}\n\nThe above exception was the direct cause of the following exception:\n\n"
            "Traceback (most recent call last):\n  File \"/x/y.py\", line 1, in f\n"
            "hoodie_datasource.errors.CorruptFileError: bad footer in a.parquet\nexpected PAR1\n\tat org.X(X.java:1)")
    found = task_error(Exception(text))
    assert type(found) is CorruptFileError
    assert str(found) == "bad footer in a.parquet\nexpected PAR1"


def test_no_hoodie_error_in_the_report():
    assert task_error(Exception("An exception was thrown from the Python worker:\nValueError: boom")) is None
    assert task_error(Exception("hoodie_datasource.errors.NotAnError: x")) is None
    assert task_error(Exception("hoodie_datasource.errors.HoodieErrorX: x")) is None
