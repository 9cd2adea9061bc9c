"""Options the jvm-shim sets to signal the Python source; they are not for users (see ``jvm-shim/README.md``)."""

from __future__ import annotations

from collections.abc import Mapping

PUSHDOWN_OPTION = "hoodie.datasource.read.filter.pushdown"
"""The shim plans each query with a fresh data source: take pushed filters."""
PLAN_FILES_OPTION = "hoodie.datasource.read.plan.files"
"""``schema()`` returns the files the read plan reads (``spark.file_listing``)."""
QUERY_FILTERS_OPTION = "hoodie.datasource.read.plan.filters"
"""The conditions of the query's filter on the relation a file listing is for (``spark.filters.query_predicate``): the
listing leaves out the file slices their column ranges rule out (data skipping), and says how many it left out; the
plan it carries is the whole one, which later queries on the same relation, with other filters, start from."""
PLAN_INSTANT_OPTION = "hoodie.datasource.read.plan.instant"
"""Plan the read as the table was at this instant (``ReadConfig.pinned_to``)."""
PLAN_OPTION = "hoodie.datasource.read.plan"
"""The table and read plan a file listing made (``spark.file_listing.carried_plan``): a read pinned to the
listing's instant takes it as it is, an unpinned one checks it against one listing of the timeline; so the
shim's calls into Python for one query, and the executions of one DataFrame, plan once between writes."""
PLANNED_SOURCE_OPTION = "hoodie.datasource.read.plan.source"
"""The data source PySpark made for a DataFrame, pickled after its ``schema()`` planned the read (base64, as
Spark keeps it to make the reader from): the shim's first listing of the DataFrame takes its table and plan
when its options resolve to the same read, checked against one listing of the timeline."""
FILE_GROUPS_OPTION = "hoodie.datasource.read.plan.file.groups"
"""Read only these file groups (``partition/fileId``, one per line); Spark reads the others' base files."""
LOG_CHANGES_OPTION = "hoodie.datasource.read.plan.log.changes"
"""Read the log changes of the file slices (``file_group.merged_reader.log_changes``), not the merged slices:
``rows`` (the log records that win) or ``replaced`` (the base file's ordinal and the row index of the base
rows that lose, as ``REPLACED_FILE_COLUMN`` and ``REPLACED_ROW_COLUMN``; the ordinal of a slice's base file is
its file group's position in ``FILE_GROUPS_OPTION``, always set for this scan). Spark reads their base files
less the replaced rows, matched on its ``_metadata.row_index`` and the ordinal the shim's file index gives each
file as its modification time (``_metadata.file_modification_time``)."""
REPLACED_FILE_COLUMN = "_hoodie_file_ordinal"
REPLACED_ROW_COLUMN = "_hoodie_row_index"
ALTER_SCHEMA_OPTION = "hoodie.datasource.write.alter.schema"
"""``schema()`` first commits these columns (a Spark ``StructType`` as JSON) as the table's schema
(``ALTER TABLE``: ``spark.alter_table``)."""
TABLE_PROPERTIES_OPTION = "hoodie.datasource.read.table.properties"
"""``schema()`` returns the table's ``hoodie.properties`` (``spark.file_listing.properties_schema``): the shim
asks when Spark's Hadoop file system cannot read the table's URI (s3:// without hadoop-aws)."""
PROCEDURE_OPTION = "hoodie.datasource.procedure"
"""A read of this procedure's result (``CALL``: ``spark.procedures``); its arguments are the options
``hoodie.datasource.procedure.arg.<name>`` and ``hoodie.datasource.procedure.position.<i>``."""
CLUSTERED_OPTION = "hoodie.datasource.write.input.clustered"
"""Spark clustered the input by the table's partition columns."""
STATIC_PARTITION_OPTION = "hoodie.datasource.write.static.partition"
"""The values of an INSERT OVERWRITE's static ``PARTITION (...)`` clause (JSON: column to Spark's internal value as
a string, a date as days and a timestamp as microseconds since the epoch): the partition is replaced even when no
row is written there (``spark.staged_writer``)."""


def is_set(options: Mapping[str, str], key: str) -> bool:
    """The shim set ``key`` to true (option keys in any case)."""
    return any(name.lower() == key and str(value).lower() == "true" for name, value in options.items())
