"""The README's incremental pipeline: resume from a checkpoint ("000" the first time), pin each pull's
end to ``HoodieTable(path).latest_commit()``; updates and inserts come back, deletes do not."""

from __future__ import annotations

from hoodie_datasource import HoodieTable

SCHEMA = "uuid string, ts long, city string, fare double"
OPTS = {"table.name": "trips", "recordkey.field": "uuid", "partitionpath.field": "city", "precombine.field": "ts"}


def _pull(spark, path, checkpoint):
    """One run of the README's loop: the rows pulled and the new checkpoint."""
    end = HoodieTable(path).latest_commit()
    if end is None or end <= checkpoint:
        return [], checkpoint
    changes = (spark.read.format("hoodie").option("query", "incremental")
               .option("begin.instant", checkpoint).option("end.instant", end).load(path))
    return sorted((r.uuid, r.fare) for r in changes.collect()), end


def _write(spark, path, rows, mode="upsert"):
    spark.createDataFrame(rows, SCHEMA).write.format("hoodie").options(**OPTS).mode(mode).save(path)


def test_pipeline_resumes_from_its_checkpoint_and_sees_no_deletes(spark, table_path):
    _write(spark, table_path, [("a", 1, "sf", 1.0), ("b", 1, "nyc", 2.0), ("c", 1, "sf", 3.0)])
    first, checkpoint = _pull(spark, table_path, "000")
    assert first == [("a", 1.0), ("b", 2.0), ("c", 3.0)]
    assert checkpoint == HoodieTable(table_path).latest_commit()

    assert _pull(spark, table_path, checkpoint) == ([], checkpoint)  # nothing new: nothing pulled

    _write(spark, table_path, [("a", 2, "sf", 10.0), ("d", 2, "nyc", 4.0)])
    _write(spark, table_path, [("b", 3, "nyc", 0.0)], mode="delete")
    second, checkpoint = _pull(spark, table_path, checkpoint)
    assert second == [("a", 10.0), ("d", 4.0)]  # the update and the insert; the delete of b is not returned
    snapshot = sorted(r.uuid for r in spark.read.format("hoodie").load(table_path).collect())
    assert snapshot == ["a", "c", "d"]
