"""The seed's pipeline as streams: files land in a directory, a stream upserts them into table A (with
late-arriving updates and deletes), a second stream reads A's change feed (CDC), transforms it and
applies it to table B, deletes included. After every round, B equals the transformation of A's snapshot."""

from __future__ import annotations

import json
import os

import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as T

ROW = T.StructType([T.StructField("id", T.StringType()), T.StructField("ts", T.LongType()),
                    T.StructField("p", T.StringType()), T.StructField("v", T.StringType()),
                    T.StructField("_hoodie_is_deleted", T.BooleanType())])
KEYS = {"hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p",
        "hoodie.datasource.write.precombine.field": "ts"}


def land(folder: str, name: str, rows: list[tuple]) -> None:
    staged = os.path.join(folder, f".{name}")
    with open(staged, "w") as f:
        for key, ts, v, deleted in rows:
            f.write(json.dumps({"id": key, "ts": ts, "p": "p" + key[-1], "v": v, "_hoodie_is_deleted": deleted}) + "\n")
    os.replace(staged, os.path.join(folder, name))


def transform(rows, *carried):
    """What the pipeline computes from a row of A (and ``carried`` columns beside)."""
    return rows.select("id", "p", F.upper("v").alias("v"), "ts", *carried)


def run_round(spark, work: str, a: str, b: str) -> None:
    (spark.readStream.schema(ROW).json(os.path.join(work, "landing")).writeStream.format("hoodie")
     .options(**KEYS, **{"hoodie.table.name": "a", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
                         "hoodie.table.cdc.enabled": "true"})
     .option("checkpointLocation", os.path.join(work, "ckpt_a")).trigger(availableNow=True).start(a)
     .awaitTermination())
    changes = (spark.readStream.format("hoodie").option("hoodie.datasource.query.type", "incremental")
               .option("hoodie.datasource.query.incremental.format", "cdc").load(a))
    image = F.when(F.col("op") == "d", F.col("before")).otherwise(F.col("after"))
    parsed = (changes.select(F.from_json(image, ROW).alias("r"), (F.col("op") == "d").alias("deleted"))
              .select("r.*", "deleted"))
    applied = transform(parsed, F.col("deleted").alias("_hoodie_is_deleted"))
    (applied.writeStream.format("hoodie")
     .options(**KEYS, **{"hoodie.table.name": "b", "hoodie.datasource.write.table.type": "COPY_ON_WRITE"})
     .option("checkpointLocation", os.path.join(work, "ckpt_b")).trigger(availableNow=True).start(b)
     .awaitTermination())


def snapshot(spark, path: str) -> list[tuple]:
    return sorted(tuple(r) for r in spark.read.format("hoodie").load(path).select("id", "p", "v", "ts").collect())


@pytest.mark.parametrize("round_rows", [[
    [("k1", 1, "a", False), ("k2", 1, "b", False), ("k3", 1, "c", False)],
    [("k2", 2, "b2", False), ("k3", 2, "c", True), ("k4", 1, "d", False)],  # an update, a delete, an insert
    [("k1", 0, "late", False), ("k4", 2, "d2", False), ("k5", 1, "e", False)],  # a late update of k1
]])
def test_files_to_a_to_b_through_the_change_feed_keep_b_equal_to_the_transformed_a(spark, tmp_path, round_rows):
    work = str(tmp_path)
    os.makedirs(os.path.join(work, "landing"))
    a, b = os.path.join(work, "a"), os.path.join(work, "b")
    for n, rows in enumerate(round_rows):
        land(os.path.join(work, "landing"), f"{n}.json", rows)
        run_round(spark, work, a, b)
        expected = sorted(tuple(r) for r in transform(spark.read.format("hoodie").load(a)).collect())
        assert snapshot(spark, b) == expected, f"round {n}"
    assert [r[0] for r in snapshot(spark, b)] == ["k1", "k2", "k4", "k5"]  # k3 deleted in B too
