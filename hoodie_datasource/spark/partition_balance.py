"""Which task writes which partition of a per-partition write: the heaviest partitions first, spread evenly.

``repartition(n, *columns)`` sends a record to task ``pmod(murmur3(columns, seed 42), n)``, which for a
handful of partitions is far from even: the benchmark's 30 day partitions hashed into 8 tasks landed 1 to
6 days in a task, so at the end of the write one core rewrote files alone while the other was idle.

Where the partition path is one field whose values map back from the table's partition paths (strings,
dates, integers: ``partition_clustering``'s one-to-one renderings), the write shuffles by a computed task
key instead: the table's partitions, heaviest first (bytes listed), each go to the task with the least
bytes so far (longest processing time first), and Spark launches tasks in order, so the heaviest start
first. Each task ``t`` has an integer key that Spark's hash sends to ``t`` (``task_keys``). A value the
table has no partition for yet (a new partition) falls back to the hash of the clustering columns.
"""

from __future__ import annotations

import datetime
import struct
from collections.abc import Mapping, Sequence

import mmh3
from pyspark.sql import DataFrame
from pyspark.sql import types as T

from hoodie_datasource.table.keygen import DEFAULT_PARTITION, KeyGenerator, unescape_path_name
from hoodie_datasource.write.task_balance import assign_tasks

SPARK_HASH_SEED = 42  # HashPartitioning's Murmur3Hash seed
# a value is looked up among the partitions one by one (Spark's map lookup is a scan): above this many
# partitions the hash spreads them evenly enough
MAX_BALANCED_PARTITIONS = 128
INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)


def spark_partition_of_int(key: int, tasks: int) -> int:
    """The task Spark's ``repartition(tasks, <int column>)`` sends the 32-bit integer ``key`` to
    (``Murmur3_x86_32.hashInt(key, 42)``, then ``pmod``)."""
    return mmh3.hash(struct.pack("<i", key), SPARK_HASH_SEED, signed=True) % tasks


def task_keys(tasks: int) -> list[int]:
    """For each task ``t``, the smallest non-negative integer that Spark's hash partitioning sends to ``t``."""
    keys: dict[int, int] = {}
    candidate = 0
    while len(keys) < tasks:
        keys.setdefault(spark_partition_of_int(candidate, tasks), candidate)
        candidate += 1
    return [keys[t] for t in range(tasks)]


def balanced_task_key(column: str, values: Mapping[str, str], partition_bytes: Mapping[str, int],
                      tasks: int) -> str | None:
    """The expression (SQL text, built in one call into the JVM: a ``Column`` of a map of 30 partitions took 270)
    to ``repartition(tasks, ...)`` a per-partition write by, so that the table's partitions are spread as
    ``assign_tasks`` says: ``column`` is what clusters the records (the partition path, or
    ``partition_clustering``'s expression), ``values`` its value for each partition that can be told, as SQL
    literals. None when there is nothing to balance (one task, one partition, or more than
    ``MAX_BALANCED_PARTITIONS``)."""
    if tasks < 2 or not 1 < len(partition_bytes) <= MAX_BALANCED_PARTITIONS:
        return None
    keys = task_keys(tasks)
    entries = [f"{values[partition]}, {keys[task]}" for partition, task in assign_tasks(partition_bytes, tasks).items()
               if partition in values]
    if not entries:
        return None
    # a value without an entry (a partition the table does not have yet) gets the column's hash
    return f"coalesce(element_at(map({', '.join(entries)}), {column}), hash({column}))"


def sql_string(text: str) -> str:
    """``text`` as a SQL string literal, whatever the session's escaping rules
    (``spark.sql.parser.escapedStringLiterals``): its UTF-8 bytes as a binary literal, cast to a string."""
    return f"CAST(X'{text.encode().hex()}' AS STRING)"


def clustering_values(df: DataFrame, keygen: KeyGenerator, partitions: Sequence[str]) -> dict[str, str]:
    """``partition_clustering``'s value of each of ``partitions`` that can be told from its path, as a SQL
    literal: a single partition field of strings, dates or integers (none for several fields)."""
    if len(keygen.partition_fields) != 1:
        return {}
    name = keygen.partition_fields[0]
    kind = next((f.dataType for f in df.schema.fields if f.name == name), None)
    values = {p: _clustering_value(p, name, kind, keygen) for p in partitions}
    return {p: v for p, v in values.items() if v is not None}


def _clustering_value(path: str, name: str, kind: T.DataType | None, keygen: KeyGenerator) -> str | None:
    """The value of ``partition_clustering``'s expression for records of the partition ``path``, as a SQL
    literal; None when the path is not one such a value renders to."""
    text = path
    if keygen.hive_style:
        prefix = f"{name}="
        if not text.startswith(prefix):
            return None
        text = text[len(prefix):]
    if keygen.url_encode:
        text = unescape_path_name(text)
    if isinstance(kind, T.StringType):
        return sql_string(text)  # the clustering maps null and "" to the default partition, as the path does
    if text == DEFAULT_PARTITION:
        return None  # a null of another type: the fallback hash
    try:
        if isinstance(kind, T.DateType):
            return f"DATE'{datetime.date.fromisoformat(text).isoformat()}'"
        if isinstance(kind, INTEGRAL):
            return f"CAST({int(text)} AS {kind.simpleString().upper()})"
    except ValueError:
        return None
    return None
