"""A write whose column type is wider than the table's (bigint data for an int column) widens the
table's column, as Hudi's schema evolution on write does; narrower data is cast up; any other type
change is refused and leaves the table as it was. Files of both types are read back, by our reader
and by hudi-rs, across file groups and within a merge-on-read file group."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.errors import SchemaMismatchError

hudi = pytest.importorskip("hudi")
from hudi import HudiTableBuilder  # noqa: E402

OPTS = {"table.name": "w", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}
BIG = 2**40


def write(spark, path, rows, schema, **extra):
    spark.createDataFrame(rows, schema).write.format("hoodie").options(**OPTS, **extra).mode("upsert").save(path)
    return HoodieTable(path).latest_commit()


def ours(spark, path):
    df = spark.read.format("hoodie").load(path)
    return df.schema["n"].dataType.simpleString(), sorted(tuple(r) for r in df.select("id", "n", "f").collect())


def hudi_rs(path):
    table = HudiTableBuilder.from_base_uri(path).build()
    data = pa.Table.from_batches(table.read())
    return sorted(tuple(r.values()) for r in data.select(["id", "n", "f"]).to_pylist())


def committed_schema(path):
    table = HoodieTable(path)
    fields = json.loads(table.commit_metadata(table.latest_commit())["extraMetadata"]["schema"])["fields"]
    return {f["name"]: f["type"] for f in fields}


def parquet_types(path, column):
    """The stored type of ``column`` in each latest base file, by partition."""
    found = {}
    for root, _, files in os.walk(path):
        for name in files:
            if name.endswith(".parquet") and ".hoodie" not in root:
                found.setdefault(os.path.basename(root), set()).add(str(pq.read_schema(os.path.join(root, name))
                                                                        .field(column).type))
    return found


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_wider_data_widens_the_column(spark, table_path, table_type):
    extra = {"storage.type": table_type}
    write(spark, table_path, [("a", 1, "x", 1, 1.5), ("b", 1, "y", 2, 2.5)],
          "id string, ts int, p string, n int, f float", **extra)
    # bigint n (beyond int's range) and double f: an update in file group x, an insert in a new partition z
    write(spark, table_path, [("a", 2, "x", BIG, 0.1), ("c", 2, "z", 3, 3.25)],
          "id string, ts int, p string, n bigint, f double", **extra)
    expected = [("a", BIG, 0.1), ("b", 2, 2.5), ("c", 3, 3.25)]
    assert ours(spark, table_path) == ("bigint", expected)
    schema = committed_schema(table_path)
    assert schema["n"] == ["null", "long"] and schema["f"] == ["null", "double"]
    # the untouched file group y keeps its int file; hudi-rs reads the table across both
    assert parquet_types(table_path, "n")["y"] == {"int32"}
    assert hudi_rs(table_path) == expected
    # narrower data later is cast up; the column stays bigint
    write(spark, table_path, [("b", 3, "y", 7, 7.5)], "id string, ts int, p string, n int, f float", **extra)
    expected = [("a", BIG, 0.1), ("b", 7, 7.5), ("c", 3, 3.25)]
    assert ours(spark, table_path) == ("bigint", expected)
    assert committed_schema(table_path)["n"] == ["null", "long"]
    assert hudi_rs(table_path) == expected
    if table_type == "MERGE_ON_READ":
        # within file group x: an int base file and a log block of bigint records, then compacted
        assert parquet_types(table_path, "n")["x"] == {"int32"}
        HoodieTable(table_path).compact()
        assert ours(spark, table_path) == ("bigint", expected)
        assert parquet_types(table_path, "n")["x"] == {"int32", "int64"}
        assert hudi_rs(table_path) == expected


def test_other_type_changes_are_refused_and_change_nothing(spark, table_path):
    write(spark, table_path, [("a", 1, "x", 1, 1.5)], "id string, ts int, p string, n bigint, f double")
    before = sorted(os.listdir(os.path.join(table_path, ".hoodie")))
    df = spark.createDataFrame([("a", 2, "x", "many", 2.5)], "id string, ts int, p string, n string, f double")
    with pytest.raises(SchemaMismatchError) as failure:
        df.write.format("hoodie").options(**OPTS).mode("upsert").save(table_path)
    message = str(failure.value)
    assert "Column 'n' is string in the incoming data but bigint in the table" in message
    assert "int -> bigint" in message and "float -> double" in message
    assert sorted(os.listdir(os.path.join(table_path, ".hoodie"))) == before
    assert ours(spark, table_path) == ("bigint", [("a", 1, 1.5)])
