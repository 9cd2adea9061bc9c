"""``HoodieReadClient``: a table's records found by key through its index, as DataFrames (Apache Hudi's
``SparkRDDReadClient``, formerly ``HoodieReadClient``).

Both calls run the same steps, in one Spark job (``read.key_lookup`` for what a key is and what is held)::

    keys --mapInArrow(record key, partition path; Index.tag against the files the driver read once)--> locations
    locations --repartition(file group)--mapInArrow(read each group once for its keys)--> the latest records

``read_keys`` returns those records; ``filter_exists`` joins the keys they hold away from its rows (a left anti join
on the key). Only the groups the index names are read, each by one task, its slice's log blocks merged as a
snapshot read merges them. The returned DataFrames are lazy, but the table they read is the one the client holds
(its timeline as of its creation or ``refresh()``): the file-system view and the files the index looks in travel
with the plan.
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

from hoodie_datasource.config.metadata_config import resolve_metadata_config
from hoodie_datasource.index.index import LOCATION_SCHEMA
from hoodie_datasource.metadata.reader import planning_from_metadata
from hoodie_datasource.read.key_lookup import KeyLookup
from hoodie_datasource.spark.arrow_steps import per_batch, per_task
from hoodie_datasource.spark.input_size import cores
from hoodie_datasource.spark.storage_keys import session_storage_keys
from hoodie_datasource.spark.types import spark_arrow_schema, spark_schema
from hoodie_datasource.table.meta_columns import (
    FILE_ID_COLUMN,
    LOCATION_PARTITION_COLUMN,
    PARTITION_PATH_COLUMN,
    RECORD_KEY_COLUMN,
    conform,
)
from hoodie_datasource.table.table import Table

IDENTITY_COLUMN = "_hoodie_lookup_identity"  # a row's key as the index matches it (``KeyLookup.identities``)
READ_TASKS_PER_CORE = 2


class HoodieReadClient:
    """A table's records found by key through its index (Hudi's ``SparkRDDReadClient``).

    ``options`` are the index the table's writes use (``hoodie.index.type``, BLOOM by default as in Hudi's read
    client, and its options: the bucket count of a BUCKET index) and the ``hoodie.storage.*`` keys of its store.
    The client holds the table as one listing of its timeline showed it; ``refresh()`` lists it again.

    A key is the record key fields' values and, unless the index is global, the partition fields' values: under
    BLOOM, SIMPLE and BUCKET a key is held only in its own partition (Hudi tags by ``HoodieKey``), under
    GLOBAL_BLOOM, GLOBAL_SIMPLE and RECORD_INDEX wherever it lives (RECORD_INDEX reads the groups the metadata
    table's record index names). A key column must hold the table's kind of values (a
    ``SchemaMismatchError`` names a missing or mistyped one); a row without a record key finds nothing.

    Whether a key is held is what the latest slice of the file group the index names holds, its log blocks merged:
    unlike Hudi's ``filterExists``, a new key in a bucket that has a file group, or a key a merge-on-read log block
    deleted, is not held here (Hudi takes its index's tag as it is), and under a global index a key stored in another
    partition than the record's is held (Hudi's tagging makes that record an insert into its new partition)."""

    def __init__(self, spark: SparkSession, path: str, options: Mapping[str, str] | None = None):
        given = {key.lower(): value for key, value in (options or {}).items()}
        self._spark = spark
        self._options = {**given, **session_storage_keys(spark, given)}
        # the file groups a lookup reads come from the metadata table unless the options switch it off
        enabled = resolve_metadata_config(self._options).enabled
        self._table = planning_from_metadata(Table.load(path, self._options), enabled)
        self._lookup = KeyLookup.of(self._table, self._options)

    def refresh(self) -> HoodieReadClient:
        """List the table's timeline again, to see what was committed since; returns this client."""
        self._table = self._table.refresh()
        self._lookup = KeyLookup.of(self._table, self._options)
        return self

    def read_keys(self, keys: DataFrame) -> DataFrame:
        """The latest record of each key of ``keys`` the table holds, with the columns of a snapshot read
        (``spark.read.format("hoodie").load(path)``) and its values: log blocks of merge-on-read slices merged. A
        key asked twice is read once. ``keys`` has the record key fields (and the partition fields under an index
        that is not global); other columns are ignored.

        Hudi's ``readROView`` reads base files only (the read-optimized view: a merge-on-read update still in a log
        block is not seen, nor is a log block's delete) and matches rows by record key and partition path even under
        a global index; this reads the snapshot, and under a global index finds a key in whichever partition holds
        it."""
        return self._records(self._located(keys), None)

    def filter_exists(self, df: DataFrame) -> DataFrame:
        """The rows of ``df`` whose keys the table does not hold (Hudi's ``filterExists``: to drop the records of a
        batch already written), duplicates kept as they come. ``df`` has the record key fields (and the partition
        fields under an index that is not global) among its columns."""
        lookup = self._lookup
        identity = T.StructType([T.StructField(IDENTITY_COLUMN, T.StringType())])

        def with_identity(records: pa.Table) -> pa.Table:
            return records.append_column(IDENTITY_COLUMN, lookup.identities(lookup.with_keys(records)))

        def identities(held: pa.Table) -> pa.Table:
            return pa.table({IDENTITY_COLUMN: lookup.identities(held)})

        identified = df.mapInArrow(per_batch(with_identity), T.StructType([*df.schema.fields, *identity.fields]))
        held = self._records(self._located(df), frozenset({RECORD_KEY_COLUMN, PARTITION_PATH_COLUMN}))
        return identified.join(held.mapInArrow(per_batch(identities), identity), on=IDENTITY_COLUMN,
                               how="left_anti").drop(IDENTITY_COLUMN)

    def _located(self, keys: DataFrame) -> DataFrame:
        """The locations the index names for the keys of ``keys`` (``LOCATION_SCHEMA`` rows), each batch of keys
        tagged on its own (``KeyLookup.locate``) against the files of every partition, read once here (a lookup
        index's footers: kept by the process for the next lookup)."""
        lookup = self._lookup
        lookup.check_columns(to_arrow_schema(keys.schema, timezone="UTC"))
        files = lookup.files(None)
        return keys.select(*lookup.key_fields).mapInArrow(
            per_batch(lambda batch: lookup.locate(lookup.key_rows(batch), files)), from_arrow_schema(LOCATION_SCHEMA))

    def _records(self, locations: DataFrame, columns: frozenset[str] | None) -> DataFrame:
        """The latest records of the located keys (``columns`` of them, when given): shuffled by file group, so that
        one task reads each group named, once."""
        lookup = self._lookup
        schema = lookup.plan.schema if columns is None else pa.schema(
            [f for f in lookup.plan.schema if f.name in columns])
        out = spark_schema(schema)
        arrow = spark_arrow_schema(out)
        tasks = max(1, min(len(lookup.plan.slices), READ_TASKS_PER_CORE * cores(self._spark)))
        return locations.repartition(tasks, LOCATION_PARTITION_COLUMN, FILE_ID_COLUMN).mapInArrow(
            per_task(lambda found: conform(lookup.read_located(found, columns), arrow)), out)
