"""Arrow schema -> Spark schema, and the exact Arrow schema Spark expects back from ``read()``."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from hoodie_datasource.errors import UnsupportedTableError


def spark_type(arrow: pa.DataType) -> T.DataType:
    if pa.types.is_boolean(arrow):
        return T.BooleanType()
    if pa.types.is_int8(arrow):
        return T.ByteType()
    if pa.types.is_int16(arrow):
        return T.ShortType()
    if pa.types.is_int32(arrow) or pa.types.is_uint8(arrow) or pa.types.is_uint16(arrow):
        return T.IntegerType()
    if pa.types.is_int64(arrow) or pa.types.is_uint32(arrow):
        return T.LongType()
    if pa.types.is_float32(arrow):
        return T.FloatType()
    if pa.types.is_float64(arrow):
        return T.DoubleType()
    if pa.types.is_string(arrow) or pa.types.is_large_string(arrow) or pa.types.is_string_view(arrow):
        return T.StringType()
    if pa.types.is_binary(arrow) or pa.types.is_large_binary(arrow) or pa.types.is_fixed_size_binary(arrow):
        return T.BinaryType()
    if pa.types.is_decimal(arrow):
        return T.DecimalType(arrow.precision, arrow.scale)
    if pa.types.is_date(arrow):
        return T.DateType()
    if pa.types.is_timestamp(arrow):
        return T.TimestampType() if arrow.tz is not None else T.TimestampNTZType()
    if pa.types.is_list(arrow) or pa.types.is_large_list(arrow):
        return T.ArrayType(spark_type(arrow.value_type), True)
    if pa.types.is_map(arrow):
        return T.MapType(spark_type(arrow.key_type), spark_type(arrow.item_type), True)
    if pa.types.is_struct(arrow):
        return T.StructType([T.StructField(f.name, spark_type(f.type), True) for f in arrow])
    raise UnsupportedTableError(f"Arrow type {arrow} has no Spark equivalent")


def spark_schema(schema: pa.Schema) -> T.StructType:
    return T.StructType([T.StructField(f.name, spark_type(f.type), True) for f in schema])


def spark_arrow_schema(schema: T.StructType) -> pa.Schema:
    """What Spark checks ``read()`` batches against (timestamps in UTC, exact int widths)."""
    return to_arrow_schema(schema, timezone="UTC")
