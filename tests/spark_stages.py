"""Counting the tasks of a write's Spark stages (``SparkContext.statusTracker``), in a session with Spark's
default shuffle partitions and adaptive execution."""

from __future__ import annotations

import itertools

import pytest

_groups = itertools.count()


@pytest.fixture
def spark_defaults(spark):
    """The session with Spark's default shuffle partitions and adaptive execution."""
    before = {k: spark.conf.get(k) for k in ("spark.sql.shuffle.partitions", "spark.sql.adaptive.enabled")}
    spark.conf.set("spark.sql.shuffle.partitions", "200")
    spark.conf.set("spark.sql.adaptive.enabled", "true")
    yield spark
    for key, value in before.items():
        spark.conf.set(key, value)


def stage_tasks(spark, group: str) -> list[int]:
    """The task count of every stage the jobs of ``group`` ran; not of the stages they skipped (under adaptive
    execution a shuffle's map stage runs as a job of its own, and the job reading its output skips it)."""
    tracker = spark.sparkContext.statusTracker()
    jobs = [tracker.getJobInfo(j) for j in tracker.getJobIdsForGroup(group)]
    stages = [tracker.getStageInfo(s) for job in jobs if job is not None for s in job.stageIds]
    return [stage.numTasks for stage in stages if stage is not None and stage.numCompletedTasks]


def tasks_of(spark, write) -> list[int]:
    group = f"parallelism-{next(_groups)}"
    spark.sparkContext.setJobGroup(group, group)
    try:
        write()
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    return stage_tasks(spark, group)
