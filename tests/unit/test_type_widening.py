"""Which type changes a write may make to a table's column (no JVM): Avro's promotions widen the column,
narrower data is cast up, anything else is refused; a merge-on-read table keeps the widened type when
its latest commit wrote only log files next to an older, narrower base file."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.errors import SchemaMismatchError
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.table.table import Table
from hoodie_datasource.table.table_schema import evolve_schema, is_widening

TABLE = pa.schema([("id", pa.string()), ("n", pa.int32()), ("x", pa.float32())])


@pytest.mark.parametrize(("given", "stored"), [
    (pa.int64(), pa.int64()), (pa.float32(), pa.float32()), (pa.float64(), pa.float64()),
])
def test_wider_data_widens_the_column(given, stored):
    assert evolve_schema(TABLE, pa.schema([("id", pa.string()), ("n", given), ("x", pa.float32())])).field(
        "n").type == stored


def test_narrower_data_keeps_the_table_type():
    table = pa.schema([("id", pa.string()), ("n", pa.float64())])
    assert evolve_schema(table, pa.schema([("id", pa.string()), ("n", pa.int32())])) == table


@pytest.mark.parametrize("given", [pa.string(), pa.bool_(), pa.decimal128(10, 2), pa.date32()])
def test_other_changes_are_refused_naming_the_column_types_and_widenings(given):
    with pytest.raises(SchemaMismatchError) as failure:
        evolve_schema(TABLE, pa.schema([("id", pa.string()), ("n", given), ("x", pa.float32())]))
    message = str(failure.value)
    assert f"Column 'n' is {given} in the incoming data but int in the table" in message
    assert "int -> bigint, int -> float, int -> double, bigint -> float, bigint -> double, float -> double" in message


def test_is_widening_is_one_way():
    assert is_widening(pa.int32(), pa.int64()) and not is_widening(pa.int64(), pa.int32())
    assert not is_widening(pa.float64(), pa.float32())


def test_mor_log_only_commit_keeps_the_widened_type(tmp_path):
    path = str(tmp_path / "t")
    opts = {"table.name": "t", "recordkey.field": "id", "precombine.field": "ts", "storage.type": "MERGE_ON_READ"}
    write_local(path, pa.table({"id": ["a", "b"], "ts": [1, 1], "n": pa.array([1, 2], pa.int32())}), opts)
    # an update of an existing key: a log block with bigint values next to the int base file
    write_local(path, pa.table({"id": ["a"], "ts": [2], "n": pa.array([2**40], pa.int64())}), opts)
    assert Table.load(path).data_schema.field("n").type == pa.int64()
    out = read_table(path, ReadConfig())
    assert sorted(zip(out.column("id").to_pylist(), out.column("n").to_pylist())) == [("a", 2**40), ("b", 2)]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_time_travel_reads_the_schema_of_its_instant(tmp_path, table_type):
    """A read as of an instant has the columns and types the table had then (Hudi's HoodieBaseRelation reads
    ``TableSchemaResolver.getTableAvroSchema(as.of.instant)``); an incremental read has the latest schema."""
    path = str(tmp_path / "t")
    opts = {"table.name": "t", "recordkey.field": "id", "precombine.field": "ts", "storage.type": table_type}
    first = write_local(path, pa.table({"id": ["a", "b"], "ts": [1, 1], "n": pa.array([1, 2], pa.int32())}), opts)
    second = write_local(path, pa.table({"id": ["a"], "ts": [2], "n": pa.array([2**40], pa.int64()), "added": ["x"]}),
                         opts)
    then = read_table(path, ReadConfig(as_of_instant=first))
    assert then.schema.field("n").type == pa.int32() and "added" not in then.schema.names
    assert sorted(zip(then.column("id").to_pylist(), then.column("n").to_pylist())) == [("a", 1), ("b", 2)]
    for out in (read_table(path, ReadConfig(as_of_instant=second)), read_table(path, ReadConfig()),
                read_table(path, ReadConfig(query_type="incremental", begin_instant="0", end_instant=first))):
        assert out.schema.field("n").type == pa.int64() and "added" in out.schema.names
