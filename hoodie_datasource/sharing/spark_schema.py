"""An Arrow schema as Spark's ``StructType`` JSON, the protocol's ``schemaString`` (PROTOCOL.md "Schema Object"),
without pyspark: the server needs no JVM. The mapping is the one ``spark.types.spark_type`` makes with pyspark's
types, so a table shared reads with the schema a Spark read of it has, but for timestamps without a time zone
(Avro's ``local-timestamp-micros``): they are shared as ``timestamp``, since the protocol's primitive types have no
``timestamp_ntz`` (it is a Delta table feature) and the Python client refuses a schema naming it
(``delta_sharing.converter.to_converter``); the files keep their values as written."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from hoodie_datasource.errors import UnsupportedTableError

_PRIMITIVES: tuple[tuple[Any, str], ...] = (
    (pa.types.is_boolean, "boolean"), (pa.types.is_int8, "byte"), (pa.types.is_int16, "short"),
    (pa.types.is_int32, "integer"), (pa.types.is_uint8, "integer"), (pa.types.is_uint16, "integer"),
    (pa.types.is_int64, "long"), (pa.types.is_uint32, "long"), (pa.types.is_float32, "float"),
    (pa.types.is_float64, "double"), (pa.types.is_string, "string"), (pa.types.is_large_string, "string"),
    (pa.types.is_binary, "binary"), (pa.types.is_large_binary, "binary"), (pa.types.is_fixed_size_binary, "binary"),
    (pa.types.is_date, "date"),
)


def spark_type_json(arrow: pa.DataType) -> Any:
    """The Spark JSON of one Arrow type."""
    for test, name in _PRIMITIVES:
        if test(arrow):
            return name
    if pa.types.is_decimal(arrow):
        return f"decimal({arrow.precision},{arrow.scale})"
    if pa.types.is_timestamp(arrow):
        return "timestamp"
    if pa.types.is_list(arrow) or pa.types.is_large_list(arrow):
        return {"type": "array", "elementType": spark_type_json(arrow.value_type), "containsNull": True}
    if pa.types.is_map(arrow):
        return {"type": "map", "keyType": spark_type_json(arrow.key_type),
                "valueType": spark_type_json(arrow.item_type), "valueContainsNull": True}
    if pa.types.is_struct(arrow):
        return struct_json(list(arrow))
    raise UnsupportedTableError(f"Arrow type {arrow} has no Spark type to share it as")


def struct_json(fields: list[pa.Field]) -> dict[str, Any]:
    return {"type": "struct", "fields": [
        {"name": f.name, "type": spark_type_json(f.type), "nullable": True, "metadata": {}} for f in fields]}
