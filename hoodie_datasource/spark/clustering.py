"""Clustering on Spark: one task per clustering group, each reading its slices, ordering their records and writing
its new file groups (``services.clustering.cluster_group``); the driver only plans and commits, as Hudi's
``SparkSortAndSizeExecutionStrategy`` runs a Spark job per plan. Works on classic Spark and Spark Connect (a
``mapInArrow`` over one row per group)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

import pyarrow as pa
from pyspark.sql import SparkSession

from hoodie_datasource.hoodie_table import HoodieTable
from hoodie_datasource.services.clustering import GroupRunner, GroupTask
from hoodie_datasource.spark.arrow_steps import task_token
from hoodie_datasource.spark.job_status import job_description
from hoodie_datasource.spark.task_errors import task_error
from hoodie_datasource.timeline.commit_metadata import WriteStat

_STATS = pa.schema([("stat", pa.string())])


def spark_group_runner(spark: SparkSession) -> GroupRunner:
    """Runs each clustering group in a Spark task of its own and returns their write stats."""

    def run(tasks: Sequence[GroupTask]) -> list[WriteStat]:
        if not tasks:
            return []
        planned = list(tasks)

        def cluster(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            token, _ = task_token()
            for batch in batches:
                for index in batch.column(0).to_pylist():
                    stats = planned[index].run(token)
                    yield pa.RecordBatch.from_pylist([{"stat": json.dumps(s.as_dict())} for s in stats],
                                                     schema=_STATS)

        groups = spark.range(0, len(planned), 1, len(planned))
        with job_description(spark, f"hoodie clustering {planned[0].storage.uri} {planned[0].instant}: "
                                    f"{len(planned)} groups"):
            try:
                rows = groups.mapInArrow(cluster, "stat string").collect()
            except Exception as exc:
                raised_in_task = task_error(exc)
                if raised_in_task is not None:
                    raise raised_in_task from None
                raise
        return [WriteStat.from_dict(json.loads(r[0])) for r in rows]

    return run


def cluster(spark: SparkSession, path: str, **options: str) -> list[str]:
    """``HoodieTable(path).cluster(**options)`` with each group a Spark task: run every pending clustering
    (scheduling one when none is pending); returns the instants completed."""
    return HoodieTable(path, {k: v for k, v in options.items() if k.startswith("hoodie.storage.")}).cluster(
        runner=spark_group_runner(spark), **options)
