"""Spark expressions that cluster a batch by partition path without computing the path.

A per-partition write needs every record of a partition path in one task. Shuffling by the partition
columns themselves does that whenever records of one path share those columns' values, i.e. when the
key generator's rendering of a value (``table.keygen.KeyGenerator.partition_paths``) is one-to-one:
integers, dates, timestamps (epoch microseconds), booleans and strings. The one many-to-one case among
them is Hudi's default partition, the path of a null or empty string value and of the literal
``__HIVE_DEFAULT_PARTITION__``, which the expression maps to one value. Other types (floating point,
decimals, binary, nested) may render unequal values as one path: they get no expression, and the write
computes the paths before its shuffle. So do string fields of a path of several fields, unless it is url
encoded: the parts are joined by ``/``, which a value may hold (``a/b`` + ``c`` and ``a`` + ``b/c`` are
both ``a/b/c``; hive-style names do not help, a value may spell ``/f2=``). A time-formatted field
(``KeyGenerator.timestamp_fields``) renders many values as one path: it gets none either.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import types as T

from hoodie_datasource.table.keygen import DEFAULT_PARTITION, KeyGenerator

ONE_TO_ONE = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.DateType, T.TimestampType, T.TimestampNTZType,
              T.BooleanType)


def partition_clustering(df: DataFrame, keygen: KeyGenerator) -> list[str] | None:
    """One expression per partition field of ``keygen`` such that records of ``df`` with one partition
    path have equal values, or None when a field's type does not allow it. The expressions are SQL text
    (``F.expr``): one call into the JVM each, where a ``Column`` built by ``pyspark.sql.functions`` takes one
    for every function and operator in it."""
    types = {field.name: field.dataType for field in df.schema.fields}
    joined = len(keygen.partition_fields) > 1 and not keygen.url_encode
    exprs = []
    for name in keygen.partition_fields:
        column, kind = sql_identifier(name), types.get(name)
        if name in keygen.timestamp_fields:
            return None
        if isinstance(kind, T.StringType) and not joined:
            exprs.append(f"CASE WHEN {column} IS NULL OR {column} = '' THEN '{DEFAULT_PARTITION}' ELSE {column} END")
        elif isinstance(kind, ONE_TO_ONE):
            exprs.append(column)
        else:
            return None
    return exprs


def sql_identifier(name: str) -> str:
    """The column ``name`` quoted for SQL text."""
    return "`" + name.replace("`", "``") + "`"
