"""Hoodie errors as a Spark Connect client sees them (a scenario of ``connect_scenarios.py``, for
test_error_messages.py), and the job tags of a write, read from the in-process Connect server's status store."""

from __future__ import annotations

import os

import hoodie_datasource


def job_tags() -> set[str]:
    """The user tags of the jobs the in-process Connect server ran so far."""
    from pyspark import SparkContext

    server = SparkContext._active_spark_context._jsc.sc()
    server.listenerBus().waitUntilEmpty()
    jobs = server.statusStore().jobsList(None)
    return {tag.split("_Tag_", 1)[1] for i in range(jobs.size())
            for tag in jobs.apply(i).jobTags().mkString("\n").split("\n") if "_Tag_" in tag}


def outcome(action) -> dict:
    try:
        action()
    except Exception as exc:  # noqa: BLE001 - the exception is the result
        cause = exc.__cause__
        return {"type": f"{type(exc).__module__}.{type(exc).__qualname__}", "message": str(exc),
                "cause": f"{type(cause).__module__}.{type(cause).__qualname__}" if cause is not None else None}
    return {"type": None, "message": "no error", "cause": None}


def run(spark, work: str) -> dict:
    path = os.path.join(work, "t")
    hoodie_datasource.register(spark)
    schema = "uuid string, ts long, city string, fare double"
    opts = {"table.name": "trips", "recordkey.field": "uuid", "partitionpath.field": "city", "precombine.field": "ts"}
    earlier_tags = job_tags()  # the server's other scenarios' jobs
    spark.createDataFrame([("a", 1, "sf", 1.0)], schema).write.format("hoodie").options(**opts).mode("upsert") \
        .save(path)
    write_tags, tags_after_write = sorted(job_tags() - earlier_tags), sorted(spark.getTags())
    bad = spark.createDataFrame([("z", 2, "sf", 1.0), (None, 2, "sf", 1.0)], schema)
    return {
        "session": type(spark).__module__,
        "bad_path": outcome(lambda: spark.read.format("hoodie").load(os.path.join(work, "not_a_table"))),
        "bad_record": outcome(lambda: bad.write.format("hoodie").options(**opts).mode("upsert").save(path)),
        "bad_mode": outcome(lambda: bad.write.format("hoodie").options(**opts).mode("upsret").save(path)),
        "write_tags": write_tags,
        "tags_after_write": tags_after_write,
        "instant": hoodie_datasource.HoodieTable(path).completed_commits()[0],
        "rows_after": sorted([r.uuid, r.fare] for r in spark.read.format("hoodie").load(path).collect()),
    }
