"""The library's named fault points: nothing happens unless ``HOODIE_FAULT_POINTS`` names a hook for the
point; a named hook is called with the point's context; a malformed entry is a clear config error; a
write failing at a point rolls itself back (the point sits after the data file and its marker)."""

from __future__ import annotations

import pytest

from hoodie_datasource import fault_points
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.errors import HoodieConfigError
from tests.conftest import assert_failed_write_left_nothing, table_listing
from tests.unit.small_tables import batch, read_pairs

CALLS: list[tuple] = []


def record(point: str, **context) -> None:
    CALLS.append((point, context))


@pytest.fixture(autouse=True)
def fresh_hooks(monkeypatch):
    monkeypatch.delenv(fault_points.ENV_VAR, raising=False)
    CALLS.clear()
    fault_points._hooks.cache_clear()
    yield monkeypatch
    fault_points._hooks.cache_clear()


def test_a_point_is_a_no_op_unless_named():
    fault_points.reach(fault_points.AFTER_DATA_FILE_WRITTEN, path="p/f.parquet")
    assert CALLS == []


def test_a_named_hook_is_called_with_the_context(fresh_hooks):
    fresh_hooks.setenv(fault_points.ENV_VAR, f"{fault_points.AFTER_DATA_FILE_WRITTEN}={__name__}:record")
    fault_points.reach(fault_points.AFTER_DATA_FILE_WRITTEN, path="p/f.parquet")
    assert CALLS == [(fault_points.AFTER_DATA_FILE_WRITTEN, {"path": "p/f.parquet"})]


@pytest.mark.parametrize("entry", ["after_data_file_writen=tests.x:f", "after_data_file_written=tests.x",
                                   "after_data_file_written"])
def test_a_malformed_entry_names_the_variable_and_the_points(fresh_hooks, entry):
    fresh_hooks.setenv(fault_points.ENV_VAR, entry)
    with pytest.raises(HoodieConfigError, match="HOODIE_FAULT_POINTS.*after_data_file_written"):
        fault_points.reach(fault_points.AFTER_DATA_FILE_WRITTEN)


class Injected(RuntimeError):
    pass


def fail(point: str, **context) -> None:
    CALLS.append((point, context))
    raise Injected(context["path"])


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_write_failing_after_a_data_file_is_written_leaves_the_table_as_it_was(fresh_hooks, table_path,
                                                                                  table_type):
    opts = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
            "storage.type": table_type, "hoodie.datasource.write.operation": "upsert"}
    write_local(table_path, batch([(1, 1, "a", 1.0), (2, 1, "b", 2.0)]), opts)
    before = table_listing(table_path)
    fresh_hooks.setenv(fault_points.ENV_VAR, f"{fault_points.AFTER_DATA_FILE_WRITTEN}={__name__}:fail")
    fault_points._hooks.cache_clear()  # the variable is read once per process
    with pytest.raises(Injected):
        write_local(table_path, batch([(1, 2, "a", 10.0), (3, 2, "a", 3.0)]), opts)
    written = CALLS[0][1]["path"]  # an update of an existing file group: a rewritten base file or a log file
    assert written.startswith("a/") and (written.endswith(".parquet") or ".log." in written)
    assert_failed_write_left_nothing(table_path, before)
    fault_points._hooks.cache_clear()
    fresh_hooks.delenv(fault_points.ENV_VAR)
    assert read_pairs(table_path) == [(1, 1.0), (2, 2.0)]
