"""A read's file listing (``read.planned_files``) and a table's ``hoodie.properties`` for the jvm-shim,
carried as the metadata of a schema.

The shim asks for it with ``hoodie.datasource.read.plan.files``. PySpark runs ``DataSource.schema()``
in a Python process beside the driver, with no Spark job, and hands the JVM the schema with its field
metadata: so the listing travels as one column ``planned_files`` whose metadata holds it column by
column. (Measured on a 30-file table: ~30 ms, where a one-task read job returning the same listing as
rows took ~200 ms on every query.) Spark metadata arrays hold no nulls: a slice without a base file
has the path "". The properties are asked for only where Spark's Hadoop file system cannot read the
table (an object store without the Hadoop connector on the JVM's classpath), so the table's storage reads them.

Base files are named in the scheme the read named the table by: our storage names an S3 table ``s3://``
whichever spelling it was given, and Hadoop picks its file system by the scheme (``s3a://`` is hadoop-aws's
S3A). A table on S3 also lists the S3A settings that reach its store (``storage.s3a.s3a_identity``): the shim
lets Spark read the files only where the session's Hadoop configuration has them.

The listing also carries the table and plan it was made from (``carried_plan``), which the shim hands to the
Python reads of the same query (``shim_options.PLAN_OPTION``): without it each of those calls into Python
would load the table and plan the read again (on S3, 2 listings and 4-5 GETs each).
"""

from __future__ import annotations

import base64
import pickle
import zlib

from pyspark.sql.types import StringType, StructField, StructType

from hoodie_datasource.config.properties_file import parse_properties
from hoodie_datasource.config.table_config import PROPERTIES_PATH
from hoodie_datasource.read.planned_files import PlannedFiles
from hoodie_datasource.read.planner import ReadPlan
from hoodie_datasource.storage.object_store import ObjectStorage
from hoodie_datasource.storage.s3a import s3a_identity
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.storage.uri import scheme_of
from hoodie_datasource.table.table import Table

LISTING_FIELD = "planned_files"
PROPERTIES_FIELD = "table_properties"


def carry_plan(table: Table, plan: ReadPlan) -> str:
    """``table`` and ``plan`` as an option value (the pickle PySpark sends them to ``reader()`` by, compressed,
    in base64)."""
    return base64.b64encode(zlib.compress(pickle.dumps((table, plan), pickle.HIGHEST_PROTOCOL), 1)).decode("ascii")


def carried_plan(value: str) -> tuple[Table, ReadPlan]:
    """What ``carry_plan`` made ``value`` from. The option comes from the jvm-shim's listing; a Spark client
    that can set read options can run Python in the workers anyway (a UDF), so unpickling it trusts no one new."""
    return pickle.loads(zlib.decompress(base64.b64decode(value)))  # noqa: S301 - see the docstring


def listing_schema(planned: PlannedFiles, storage: Storage | None = None, table_path: str = "",
                   carried: str = "", skipped: int = 0) -> StructType:
    """``planned`` as schema metadata; with ``storage``, the table's, read as ``table_path``; ``carried``, the
    plan it was made from (``carry_plan``), of which data skipping left ``skipped`` file slices out of ``planned``
    (the shim then names the file groups its Python reads read, even when they read every listed one)."""
    files = planned.files
    on_s3 = isinstance(storage, ObjectStorage) and storage.table.backend == "s3"
    s3a = s3a_identity(storage.options) if on_s3 else {}
    written = (scheme_of(table_path) if on_s3 else None) or ""
    spelled = (lambda path: written + path[len(storage.scheme):]) if written else (lambda path: path)
    metadata = {
        "count": len(files),
        "instant": planned.instant or "",
        "begin": planned.begin or "",
        "group": [f.group for f in files],
        "path": [spelled(f.path) if f.path else "" for f in files],
        "size": [f.size for f in files],
        "native": [f.native for f in files],
        "changes": [f.changes for f in files],
        "plan": carried,
        "skipped": skipped,
    }
    if s3a:  # never an empty list: Spark reads one back from the metadata JSON as an array of longs
        metadata.update({"s3a.keys": list(s3a), "s3a.values": list(s3a.values())})
    if planned.commits is not None:  # the count tells none from an empty list, which reads back as longs
        metadata["commits.count"] = len(planned.commits)
        if planned.commits:
            metadata["commits"] = sorted(planned.commits)
    return StructType([StructField(LISTING_FIELD, StringType(), True, metadata)])


def properties_schema(storage: Storage) -> StructType:
    """The table's ``hoodie.properties`` as they are stored (none when there is no table yet)."""
    try:
        stored = parse_properties(storage.read(PROPERTIES_PATH).decode("latin-1"))
    except FileNotFoundError:
        stored = {}
    metadata = {"count": len(stored), "keys": list(stored), "values": list(stored.values())}
    return StructType([StructField(PROPERTIES_FIELD, StringType(), True, metadata)])
