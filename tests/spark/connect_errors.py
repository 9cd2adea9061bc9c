"""Run as a script by test_error_messages.py: the errors of a bad read path, a bad record in a write
task and a misspelt save mode over Spark Connect, printed as JSON (an in-process Connect server on
local[2]; Connect cannot share a process with the test suite's classic session)."""

import json
import os
import sys

os.environ["PYSPARK_PYTHON"] = sys.executable

from pyspark.sql import SparkSession  # noqa: E402

import hoodie_datasource  # noqa: E402

work = sys.argv[1]
path = os.path.join(work, "t")
spark = SparkSession.builder.remote("local[2]").config("spark.sql.shuffle.partitions", "4").getOrCreate()
hoodie_datasource.register(spark)
schema = "uuid string, ts long, city string, fare double"
opts = {"table.name": "trips", "recordkey.field": "uuid", "partitionpath.field": "city", "precombine.field": "ts"}
spark.createDataFrame([("a", 1, "sf", 1.0)], schema).write.format("hoodie").options(**opts).mode("upsert").save(path)


def job_tags() -> list[str]:
    """The user tags of the jobs run so far, read from the in-process Connect server's status store."""
    from pyspark import SparkContext

    server = SparkContext._active_spark_context._jsc.sc()
    server.listenerBus().waitUntilEmpty()
    jobs = server.statusStore().jobsList(None)
    tags = {tag.split("_Tag_", 1)[1] for i in range(jobs.size())
            for tag in jobs.apply(i).jobTags().mkString("\n").split("\n") if "_Tag_" in tag}
    return sorted(tags)


write_tags, tags_after_write = job_tags(), sorted(spark.getTags())


def outcome(action):
    try:
        action()
    except Exception as exc:  # noqa: BLE001 - the exception is the result
        cause = exc.__cause__
        return {"type": f"{type(exc).__module__}.{type(exc).__qualname__}", "message": str(exc),
                "cause": f"{type(cause).__module__}.{type(cause).__qualname__}" if cause is not None else None}
    return {"type": None, "message": "no error", "cause": None}


bad = spark.createDataFrame([("z", 2, "sf", 1.0), (None, 2, "sf", 1.0)], schema)
result = {
    "session": type(spark).__module__,
    "bad_path": outcome(lambda: spark.read.format("hoodie").load(os.path.join(work, "not_a_table"))),
    "bad_record": outcome(lambda: bad.write.format("hoodie").options(**opts).mode("upsert").save(path)),
    "bad_mode": outcome(lambda: bad.write.format("hoodie").options(**opts).mode("upsret").save(path)),
    "write_tags": write_tags,
    "tags_after_write": tags_after_write,
    "instant": hoodie_datasource.HoodieTable(path).completed_commits()[0],
    "rows_after": sorted([r.uuid, r.fare] for r in spark.read.format("hoodie").load(path).collect()),
}
print("RESULT " + json.dumps(result))
spark.stop()
