"""The jvm-shim's ``ALTER TABLE ... ADD COLUMNS`` / ``ALTER COLUMN ... TYPE``: the table's new columns as
Spark types, committed as the table's schema by ``write.alter_schema``.

Spark types map back to Arrow types that need not be the stored ones (a stored ``timestamp[us]`` and
Spark's UTC ``timestamp[us, tz=UTC]`` are one Spark type): a column whose Spark type is unchanged keeps
its stored Arrow type, so only what the statement changes is changed.
"""

from __future__ import annotations

import json

import pyarrow as pa
from pyspark.sql.types import StructType

from hoodie_datasource.spark.types import spark_arrow_schema, spark_type
from hoodie_datasource.table.table import Table
from hoodie_datasource.write.alter_schema import alter_table_schema


def alter_table(table: Table, requested_json: str) -> str | None:
    """Commit the columns ``requested_json`` (a Spark ``StructType`` as JSON) as the table's schema."""
    requested = StructType.fromJson(json.loads(requested_json))
    current = table.data_schema or pa.schema([])
    stored = {f.name: f.type for f in current}
    as_arrow = spark_arrow_schema(requested)
    fields = [
        pa.field(f.name, stored[f.name], True)
        if f.name in stored and spark_type(stored[f.name]) == f.dataType else as_arrow.field(f.name)
        for f in requested.fields
    ]
    return alter_table_schema(table, pa.schema(fields))
