"""A Spark writer (``df.write.format("hoodie")``: the driver, its JVM and PySpark's Python workers) that
fails or is killed whole: in a Python worker after it wrote a data file, and on the driver with every
file written, before the commit; an upsert (the write DAG) and a bulk insert (one job whose tasks write
new file groups straight away). The table stays as it was, by our reader and hudi-rs, and the next
write rolls back what was left (``tests.faults.harness`` says what is checked)."""

from __future__ import annotations

import pytest

from hoodie_datasource import fault_points as fp
from tests.faults.harness import Table, assert_left, batch, recover, run_writer, timeline

pytestmark = pytest.mark.fault

COW, MOR = "COPY_ON_WRITE", "MERGE_ON_READ"
# a Spark writer takes ~10 s to start: the cases where Spark adds something over the local engine's (a task
# in a Python worker killed with the JVM and the driver; the driver failing or killed with every file written)
CASES = [pytest.param(point, mode, t, op, id=f"{op}-{point}-{mode}-{'cow' if t == COW else 'mor'}")
         for point, mode, t, op in (
             (fp.AFTER_DATA_FILE_WRITTEN, "kill", COW, "upsert"), (fp.AFTER_DATA_FILE_WRITTEN, "kill", MOR, "upsert"),
             (fp.BEFORE_COMMIT, "fail", COW, "upsert"), (fp.BEFORE_COMMIT, "kill", MOR, "upsert"),
             (fp.AFTER_DATA_FILE_WRITTEN, "kill", COW, "bulk_insert"), (fp.BEFORE_COMMIT, "fail", MOR, "bulk_insert"))]


@pytest.mark.parametrize(("point", "mode", "table_type", "operation"), CASES)
def test_a_spark_writer_failing_or_killed_leaves_the_table_as_it_was(tmp_path, point: str, mode: str, table_type: str,
                                                                     operation: str):
    table = Table(str(tmp_path / "t"), table_type)
    table.write(batch("first", ["k0", "k1", "k2", "k3"]))
    before = table.rows
    update = batch("update", ["k0", "k3", "n0", "n1"], ts=2)
    options = {**table.options, "hoodie.datasource.write.operation": operation}
    spec = {"op": "spark_write", "operation": operation, "path": table.path, "options": options,
            "rows": update.to_pydict()}

    outcome = run_writer(spec, point, mode)

    assert_left(table, outcome, mode, before, holds_lock=False)
    pending = timeline(table.path).pending()
    if mode == "kill":  # the instant stays pending until the next write rolls it back
        assert [i.action for i in pending] == ["commit" if table_type == COW else "deltacommit"]
    else:  # the writer rolled its instant back itself
        assert not pending
    recover(table, None)
