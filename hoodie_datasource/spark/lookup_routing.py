"""The task that looks a record's key up under the record index, computed by Spark before the records reach Python.

An upsert or a delete under ``RECORD_INDEX`` shuffles its records to a task per record-index file group
(``write_dag._tagged_in_lookup_tasks``), file group ``i`` to task ``i`` as Hudi's ``PartitionIdPassthrough`` sends
it. A key's file group is Apache Hudi's ``HoodieTableMetadataUtil.mapRecordKeyToFileGroupIndex``: Java's
``String.hashCode`` of the key, folded to ``abs(abs(h) % n)`` (``metadata.keys.file_group_indexes``). When the record
key is one top-level field's value as it is (``key_field``), Spark computes that from the field in SQL
(``lookup_task_sql``): the records then go through Python once, after the shuffle, which keys, combines, looks up and
tags them. Otherwise the pass that keys the records adds each one's task, and the records go through Python twice,
once before the shuffle and once after it: at 5M rows the second pass alone took about 4 s of a 21 s tagging
(benchmarks/results/record_index.md).

Java's hash is ``reflect('java.util.Objects', 'hashCode', key)``: Spark's ``CallMethodViaReflection`` takes a method
whose parameter type is a supertype of ``String`` and passes the value as a ``java.lang.String``, the same UTF-16
code units as Hudi's key (a null gives 0: such a record is refused after the shuffle, where it is keyed).
``abs(h % n)`` equals ``Math.abs(Math.abs(h) % n)`` for every int ``h``, ``Integer.MIN_VALUE`` too, as Java's and
Spark's ``%`` both keep the dividend's sign. Spark takes ``reflect`` as nondeterministic; the hash is not, so a
task run again routes each record as before. The lookup does not depend on the route: a task looks each of its
keys up in the file group the key maps to (``MetadataTableReader``), and all records of a key meet in one task
for the combine because the route is a function of the key field alone.
"""

from __future__ import annotations

from pyspark.sql import types as T

from hoodie_datasource.spark.partition_balance import INTEGRAL, task_keys
from hoodie_datasource.spark.partition_clustering import sql_identifier
from hoodie_datasource.table.keygen import KeyGenerator

# Spark's cast of these to a string is the key ``KeyGenerator.record_keys`` makes of them (Java's ``toString``)
KEY_FIELD_TYPES = (T.StringType, *INTEGRAL)


def key_field(schema: T.StructType, keygen: KeyGenerator) -> str | None:
    """The top-level field of ``schema`` whose value, cast to a string by Spark, is the record key ``keygen``
    makes (``KeyGenerator.simple_key``: not ``field:value`` pairs), or None."""
    if not keygen.simple_key:
        return None
    name = keygen.record_key_fields[0]
    field = next((f for f in schema.fields if f.name == name), None)
    return name if field is not None and isinstance(field.dataType, KEY_FIELD_TYPES) else None


def file_group_sql(key: str, count: int) -> str:
    """SQL text: ``mapRecordKeyToFileGroupIndex`` of the SQL expression ``key`` among ``count`` file groups."""
    java_hash = f"cast(reflect('java.util.Objects', 'hashCode', cast({key} as string)) as int)"
    return f"abs({java_hash} % {count})"


def lookup_task_sql(schema: T.StructType, keygen: KeyGenerator, count: int) -> str | None:
    """SQL text: the integer that ``repartition(count, ...)`` sends to the task of each record's key's file group
    (``partition_balance.task_keys``), computed from the key field; None when the key is not one field's value
    (``key_field``)."""
    name = key_field(schema, keygen)
    if name is None:
        return None
    keys = ", ".join(str(k) for k in task_keys(count))
    return f"element_at(array({keys}), {file_group_sql(sql_identifier(name), count)} + 1)"
