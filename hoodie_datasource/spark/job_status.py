"""Readable names for the Spark jobs of a write, in the UI users already watch.

Without them every job of a write shows as ``collect at .../write_dag.py:<line>``. Apache Hudi names
each step's jobs through ``HoodieSparkEngineContext.setJobStatus(module, activity)``, which sets the
Spark job description (``"module:activity"``); here each step runs under ``"hoodie <operation>
<table> <instant>: <step>"``.

Classic Spark: ``SparkContext.setJobDescription`` (the thread's ``spark.job.description``), which the
UI shows as the job's and its stages' description; the previous description comes back after the step.
Stage names come from the call site (``callSite.short``), which PySpark's ``collect()`` sets to the Python
line calling it unless an outer ``SCCallSiteSync`` holds it: the step sets the call site to its description
and holds it the same way (``pyspark.traceback_utils.SCCallSiteSync._spark_stack_depth``), so stages read
``hoodie upsert trips <instant>: tagging`` instead of ``collect at .../write_dag.py:154``.
The user's job group and tags are left alone, so cancelling by group or tag still reaches a write.

Spark Connect has no SparkContext and its server sets the description itself (``Spark Connect -
<plan>``), so the step is added as a job tag (``SparkSession.addTag``; a tag cannot hold a comma),
shown with the job and usable with ``interruptTag``; it is removed after the step.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pyspark.sql import SparkSession
from pyspark.traceback_utils import SCCallSiteSync

DESCRIPTION = "spark.job.description"


@contextmanager
def job_description(spark: SparkSession, description: str) -> Iterator[None]:
    """Run the block's Spark jobs under ``description``."""
    context = _spark_context(spark)
    if context is None:
        tag = description.replace(",", ";")
        spark.addTag(tag)
        try:
            yield
        finally:
            spark.removeTag(tag)
        return
    previous = context.getLocalProperty(DESCRIPTION)
    context.setJobDescription(description)
    outermost = SCCallSiteSync._spark_stack_depth == 0
    if outermost:
        context._jsc.setCallSite(description)
    SCCallSiteSync._spark_stack_depth += 1
    try:
        yield
    finally:
        SCCallSiteSync._spark_stack_depth -= 1
        if outermost:
            context._jsc.setCallSite(None)
        context.setLocalProperty(DESCRIPTION, previous)  # None removes it


def _spark_context(spark: SparkSession):
    """The classic session's SparkContext, or None on Spark Connect."""
    try:
        from pyspark.sql.connect.session import SparkSession as ConnectSession
    except ImportError:  # no Connect client dependencies: the session is classic
        return spark.sparkContext
    return None if isinstance(spark, ConnectSession) else spark.sparkContext
