"""The Spark jobs of a write carry a readable description (``hoodie <operation> <table> <instant>:
<step>``), read back from Spark's status store (what the UI shows); the caller's own description
comes back after the write."""

from __future__ import annotations

import uuid

import pytest

from hoodie_datasource import HoodieTable

SCHEMA = "uuid string, ts long, city string, fare double"
OPTS = {"table.name": "trips", "recordkey.field": "uuid", "precombine.field": "ts"}
USER_DESCRIPTION = "nightly trips load"


def _write_descriptions(spark, write, stages: list[str] | None = None) -> list[str | None]:
    """The descriptions of the jobs ``write`` ran, found by the caller's job group (the write keeps
    it), as Spark's status store (what the UI shows) records them; their stages' names go to ``stages``."""
    context = spark.sparkContext
    group = f"test-job-descriptions-{uuid.uuid4().hex}"  # not id(write): a later test's lambda may reuse the id
    context.setJobGroup(group, USER_DESCRIPTION)
    try:
        write()
        assert context.getLocalProperty("spark.job.description") == USER_DESCRIPTION
        assert context.getLocalProperty("spark.jobGroup.id") == group
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
        context.setJobDescription(None)
    jvm_context = context._jsc.sc()
    jvm_context.listenerBus().waitUntilEmpty()  # the store is filled from listener events, after a job ends
    descriptions = []
    for job_id in sorted(context.statusTracker().getJobIdsForGroup(group)):
        description = jvm_context.statusStore().job(job_id).description()
        descriptions.append(description.get() if description.isDefined() else None)
        if stages is not None:
            for stage_id in context.statusTracker().getJobInfo(job_id).stageIds:
                info = context.statusTracker().getStageInfo(stage_id)
                stages.append(info.name if info else None)
    return descriptions


@pytest.mark.parametrize("partitioned", [False, True])
def test_each_job_of_a_write_is_named_after_its_step(spark, table_path, partitioned):
    options = {**OPTS, "partitionpath.field": "city"} if partitioned else OPTS
    spark.createDataFrame([("a", 1, "sf", 1.0), ("b", 1, "nyc", 2.0)], SCHEMA).write.format("hoodie") \
        .options(**options).mode("upsert").save(table_path)
    batch = spark.createDataFrame([("a", 2, "sf", 5.0), ("c", 2, "sf", 3.0)], SCHEMA)

    stages: list[str] = []
    descriptions = _write_descriptions(
        spark, lambda: batch.write.format("hoodie").options(**options).mode("upsert").save(table_path), stages)

    instant = HoodieTable(table_path).latest_commit()
    prefix = f"hoodie upsert trips {instant}: "
    assert descriptions, "the write ran no Spark job"
    unnamed = [d for d in descriptions if d is None or not d.startswith(prefix)]
    assert not unnamed, f"jobs not named after a step of {instant}: {unnamed}"
    steps = {d[len(prefix):] for d in descriptions}
    assert stages and all(name is not None and name.startswith(prefix) for name in stages), stages
    assert {name[len(prefix):] for name in stages} == steps  # stages are named after their step too
    if partitioned:
        assert steps == {"tagging and writing by partition (2 tasks)"}
    else:
        assert steps == {"keys and partitions", "tagging", "writing file groups (1 inserts)"}
    rows = spark.read.format("hoodie").load(table_path).select("uuid", "fare").orderBy("uuid").collect()
    assert [(r.uuid, r.fare) for r in rows] == [("a", 5.0), ("b", 2.0), ("c", 3.0)]


def test_a_one_row_batch_is_written_by_one_task_without_a_shuffle(spark, table_path):
    """A commit's fixed cost: a batch whose plan knows it holds one row is keyed and written in one stage
    of one task, whatever the table's partitions."""
    options = {**OPTS, "partitionpath.field": "city"}
    spark.createDataFrame([("a", 1, "sf", 1.0), ("b", 1, "nyc", 2.0), ("c", 1, "la", 3.0)], SCHEMA) \
        .write.format("hoodie").options(**options).mode("upsert").save(table_path)
    row = spark.createDataFrame([("b", 2, "nyc", 7.0)], SCHEMA).cache()
    assert row.count() == 1  # a filled cache knows its row count

    stages: list[str] = []
    descriptions = _write_descriptions(
        spark, lambda: row.write.format("hoodie").options(**options).mode("upsert").save(table_path), stages)

    prefix = f"hoodie upsert trips {HoodieTable(table_path).latest_commit()}: "
    assert descriptions == [prefix + "tagging and writing the batch (1 task)"]
    assert stages == descriptions
    rows = spark.read.format("hoodie").load(table_path).select("uuid", "fare").orderBy("uuid").collect()
    assert [(r.uuid, r.fare) for r in rows] == [("a", 1.0), ("b", 7.0), ("c", 3.0)]
    row.unpersist()


def test_description_is_restored_when_the_write_fails(spark, table_path):
    spark.createDataFrame([("a", 1, "sf", 1.0)], SCHEMA).write.format("hoodie").options(**OPTS) \
        .mode("upsert").save(table_path)
    bad = spark.createDataFrame([(None, 2, "sf", 1.0)], SCHEMA)
    spark.sparkContext.setJobDescription(USER_DESCRIPTION)
    try:
        with pytest.raises(Exception, match="Record key field 'uuid' is null"):
            bad.write.format("hoodie").options(**OPTS).mode("upsert").save(table_path)
        assert spark.sparkContext.getLocalProperty("spark.job.description") == USER_DESCRIPTION
    finally:
        spark.sparkContext.setJobDescription(None)


def test_a_bucket_index_write_without_partitions_is_one_step(spark, table_path):
    """The bucket hash places every record: no job counts inserts, none collects partitions; the records
    are keyed, tagged and routed in one pass before the file groups are written."""
    options = {**OPTS, "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2",
               "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator"}
    spark.createDataFrame([("a", 1, "sf", 1.0), ("b", 1, "nyc", 2.0)], SCHEMA).write.format("hoodie") \
        .options(**options).mode("upsert").save(table_path)
    batch = spark.createDataFrame([("a", 2, "sf", 5.0), ("c", 2, "la", 3.0), ("a", 1, "sf", 9.0)], SCHEMA)

    descriptions = _write_descriptions(
        spark, lambda: batch.write.format("hoodie").options(**options).mode("upsert").save(table_path))

    prefix = f"hoodie upsert trips {HoodieTable(table_path).latest_commit()}: "
    assert set(descriptions) == {prefix + "tagging and writing file groups by bucket"}
    rows = spark.read.format("hoodie").load(table_path).select("uuid", "fare").orderBy("uuid").collect()
    assert [(r.uuid, r.fare) for r in rows] == [("a", 5.0), ("b", 2.0), ("c", 3.0)]
