"""Copy-on-write tables end to end through real Spark: write operations, snapshot, incremental
and time-travel reads, and what lands on disk."""

from __future__ import annotations

import json
import os

import pyarrow.parquet as pq
import pytest
from chispa import assert_df_equality
from pyspark.sql import Row

from hoodie_datasource import HoodieTable

OPTS = {
    "table.name": "trips",
    "recordkey.field": "uuid",
    "partitionpath.field": "city",
    "precombine.field": "ts",
}
COLS = ["uuid", "ts", "city", "fare"]


def trips(spark, rows):
    return spark.createDataFrame([Row(uuid=u, ts=t, city=c, fare=f) for u, t, c, f in rows])


def snapshot(spark, path, **options):
    reader = spark.read.format("hoodie")
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(path)


def data_only(df):
    return df.select(*COLS).orderBy("uuid")


def expect(spark, rows):
    return trips(spark, rows).select(*COLS).orderBy("uuid")


def write(df, path, mode="upsert", **extra):
    writer = df.write.format("hoodie").options(**OPTS)
    for key, value in extra.items():
        writer = writer.option(key, value)
    writer.mode(mode).save(path)


def test_upsert_insert_update_and_snapshot(spark, table_path):
    write(trips(spark, [("a", 1, "sf", 10.0), ("b", 1, "sf", 20.0), ("c", 1, "nyc", 30.0)]), table_path)
    write(trips(spark, [("b", 2, "sf", 21.0), ("d", 2, "nyc", 40.0)]), table_path)
    assert_df_equality(
        data_only(snapshot(spark, table_path)),
        expect(spark, [("a", 1, "sf", 10.0), ("b", 2, "sf", 21.0), ("c", 1, "nyc", 30.0), ("d", 2, "nyc", 40.0)]),
    )
    # the update rewrote b's file group: one base file per file group in the latest slice
    table = HoodieTable(table_path)
    commits = table.completed_commits()
    assert len(commits) == 2
    meta = table.commit_metadata(commits[1])
    assert meta["operationType"] == "UPSERT"
    stats = [s for ss in meta["partitionToWriteStats"].values() for s in ss]
    assert sum(s["numUpdateWrites"] for s in stats) == 1
    assert sum(s["numInserts"] for s in stats) == 1
    assert "schema" in meta["extraMetadata"]


def test_duplicates_in_batch_are_combined_by_precombine(spark, table_path):
    write(trips(spark, [("a", 5, "sf", 1.0), ("a", 7, "sf", 2.0), ("a", 6, "sf", 3.0)]), table_path)
    assert_df_equality(data_only(snapshot(spark, table_path)), expect(spark, [("a", 7, "sf", 2.0)]))


def test_meta_columns_and_files_on_disk(spark, table_path):
    write(trips(spark, [("a", 1, "sf", 10.0), ("b", 1, "nyc", 20.0)]), table_path)
    df = snapshot(spark, table_path)
    assert df.columns[:5] == [
        "_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name",
    ]
    rows = {r["uuid"]: r for r in df.collect()}
    commit = HoodieTable(table_path).latest_commit()
    assert rows["a"]["_hoodie_commit_time"] == commit
    assert rows["a"]["_hoodie_partition_path"] == "sf"
    assert rows["a"]["_hoodie_commit_seqno"].startswith(commit + "_")
    base = os.path.join(table_path, "sf", rows["a"]["_hoodie_file_name"])
    footer = pq.read_metadata(base).metadata
    assert footer[b"hoodie_min_record_key"] == b"a"
    assert footer[b"hoodie_bloom_filter_type_code"] == b"DYNAMIC_V0"
    assert os.path.exists(os.path.join(table_path, "sf", ".hoodie_partition_metadata"))
    hoodie = os.listdir(os.path.join(table_path, ".hoodie"))
    assert {f"{commit}.commit.requested", f"{commit}.inflight", f"{commit}.commit"} <= set(hoodie)
    props = open(os.path.join(table_path, ".hoodie", "hoodie.properties")).read()
    assert "hoodie.table.version=6" in props and "hoodie.table.recordkey.fields=uuid" in props


def test_delete_operation(spark, table_path):
    write(trips(spark, [("a", 1, "sf", 10.0), ("b", 1, "sf", 20.0), ("c", 1, "nyc", 30.0)]), table_path)
    write(trips(spark, [("b", 1, "sf", 0.0), ("zz", 1, "sf", 0.0)]), table_path, mode="delete")
    assert_df_equality(
        data_only(snapshot(spark, table_path)), expect(spark, [("a", 1, "sf", 10.0), ("c", 1, "nyc", 30.0)])
    )


def test_append_mode_with_operation_option(spark, table_path):
    write(trips(spark, [("a", 1, "sf", 10.0)]), table_path, mode="append", **{"hoodie.datasource.write.operation": "insert"})
    write(trips(spark, [("a", 2, "sf", 11.0)]), table_path, mode="append")  # default operation: upsert
    assert_df_equality(data_only(snapshot(spark, table_path)), expect(spark, [("a", 2, "sf", 11.0)]))


def test_insert_and_bulk_insert(spark, table_path):
    write(trips(spark, [("a", 1, "sf", 10.0), ("b", 1, "nyc", 20.0)]), table_path, mode="bulk_insert")
    write(trips(spark, [("c", 1, "sf", 30.0)]), table_path, mode="insert")
    assert snapshot(spark, table_path).count() == 3
    ops = [HoodieTable(table_path).commit_metadata(c)["operationType"] for c in HoodieTable(table_path).completed_commits()]
    assert ops == ["BULK_INSERT", "INSERT"]


def test_overwrite_modes(spark, table_path):
    write(trips(spark, [("a", 1, "sf", 10.0), ("b", 1, "nyc", 20.0)]), table_path)
    write(trips(spark, [("c", 1, "sf", 30.0)]), table_path, mode="insert_overwrite")
    assert_df_equality(
        data_only(snapshot(spark, table_path)), expect(spark, [("b", 1, "nyc", 20.0), ("c", 1, "sf", 30.0)])
    )
    write(trips(spark, [("d", 1, "la", 40.0)]), table_path, mode="overwrite")
    assert_df_equality(data_only(snapshot(spark, table_path)), expect(spark, [("d", 1, "la", 40.0)]))
    instants = HoodieTable(table_path).instants()
    assert [i.action for i in instants] == ["commit", "replacecommit", "replacecommit"]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("mode", ["overwrite", "insert_overwrite_table", "insert_overwrite"])
def test_overwrites_of_an_empty_dataframe(spark, table_path, mode, table_type):
    """mode('overwrite') and insert_overwrite_table of no rows empty the table; insert_overwrite, which replaces
    the partitions its rows fall in, replaces nothing. Each is a replacecommit, as Hudi's."""
    stored = [("a", 1, "sf", 10.0), ("b", 1, "nyc", 20.0)]
    write(trips(spark, stored), table_path, **{"table.type": table_type})
    empty = spark.createDataFrame([], "uuid string, ts long, city string, fare double")
    write(empty, table_path, mode=mode)
    rows = stored if mode == "insert_overwrite" else []
    assert sorted(tuple(r) for r in data_only(snapshot(spark, table_path)).collect()) == rows
    table = HoodieTable(table_path)
    assert [i.action for i in table.instants()] == ["commit" if table_type == "COPY_ON_WRITE" else "deltacommit",
                                                    "replacecommit"]
    replaced = table.commit_metadata(table.latest_commit())["partitionToReplaceFileIds"]
    assert sorted(replaced) == ([] if mode == "insert_overwrite" else ["nyc", "sf"])


def test_incremental_and_time_travel(spark, table_path):
    write(trips(spark, [("a", 1, "sf", 10.0), ("b", 1, "nyc", 20.0)]), table_path)
    t1 = HoodieTable(table_path).latest_commit()
    write(trips(spark, [("a", 2, "sf", 11.0), ("c", 2, "la", 30.0)]), table_path)
    t2 = HoodieTable(table_path).latest_commit()
    write(trips(spark, [("b", 3, "nyc", 21.0)]), table_path)
    t3 = HoodieTable(table_path).latest_commit()

    inc = snapshot(spark, table_path, query="incremental", **{"begin.instant": t1})
    assert_df_equality(data_only(inc), expect(spark, [("a", 2, "sf", 11.0), ("b", 3, "nyc", 21.0), ("c", 2, "la", 30.0)]))
    bounded = snapshot(spark, table_path, **{
        "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.read.begin.instanttime": t1,
        "hoodie.datasource.read.end.instanttime": t2,
    })
    assert_df_equality(data_only(bounded), expect(spark, [("a", 2, "sf", 11.0), ("c", 2, "la", 30.0)]))
    assert snapshot(spark, table_path, query="incremental", **{"begin.instant": t3}).count() == 0

    past = snapshot(spark, table_path, **{"as.of.instant": t1})
    assert_df_equality(data_only(past), expect(spark, [("a", 1, "sf", 10.0), ("b", 1, "nyc", 20.0)]))
    mid = snapshot(spark, table_path, **{"as.of.instant": t2})
    assert_df_equality(
        data_only(mid), expect(spark, [("a", 2, "sf", 11.0), ("b", 1, "nyc", 20.0), ("c", 2, "la", 30.0)])
    )


def test_filters(spark, table_path):
    write(trips(spark, [("a", 1, "sf", 10.0), ("b", 1, "nyc", 20.0), ("c", 1, "la", 30.0)]), table_path)
    df = snapshot(spark, table_path)
    assert sorted(r.uuid for r in df.filter("city = 'sf' or city = 'la'").collect()) == ["a", "c"]
    assert [r.uuid for r in df.filter("city = 'nyc'").collect()] == ["b"]
    assert [r.uuid for r in df.filter("fare > 25").collect()] == ["c"]
    assert [r.uuid for r in df.filter("city in ('la') and fare >= 30 and uuid like 'c%'").collect()] == ["c"]
    assert df.filter("not (city = 'sf')").count() == 2
    # the same DataFrame without a filter after filtered queries still sees every row
    assert df.count() == 3 and df.selectExpr("sum(fare)").first()[0] == 60.0


@pytest.mark.parametrize("index_type", ["BLOOM", "SIMPLE", "GLOBAL_BLOOM", "GLOBAL_SIMPLE"])
def test_index_types(spark, table_path, index_type):
    write(trips(spark, [("a", 1, "sf", 10.0), ("b", 1, "nyc", 20.0)]), table_path, **{"index.type": index_type})
    write(trips(spark, [("a", 2, "sf", 11.0), ("b", 2, "nyc", 21.0), ("c", 2, "sf", 1.0)]), table_path,
          **{"hoodie.index.type": index_type})
    assert_df_equality(
        data_only(snapshot(spark, table_path)),
        expect(spark, [("a", 2, "sf", 11.0), ("b", 2, "nyc", 21.0), ("c", 2, "sf", 1.0)]),
    )


@pytest.mark.parametrize("index_type", ["GLOBAL_BLOOM", "GLOBAL_SIMPLE"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_global_index_moves_a_key_across_partitions_and_back(spark, table_path, table_type, index_type):
    """Merge-on-read keeps a moved key in its old base file, deleted by a log block, until compaction: moved
    back, the key is in two base files and the write must find the group that holds it."""
    opts = {"index.type": index_type, "hoodie.datasource.write.table.type": table_type}
    for ts, city in enumerate(["sf", "nyc", "sf", "nyc"], start=1):
        write(trips(spark, [("a", ts, city, 10.0 + ts), ("b", ts, "la", 1.0)]), table_path, **opts)
        assert_df_equality(data_only(snapshot(spark, table_path)),
                           expect(spark, [("a", ts, city, 10.0 + ts), ("b", ts, "la", 1.0)]), ignore_row_order=True)


@pytest.mark.parametrize("index_type", ["GLOBAL_BLOOM", "GLOBAL_SIMPLE"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_global_index_combines_one_key_arriving_in_two_partitions(spark, table_path, table_type, index_type):
    """Under a global index a batch holding one key in two partitions keeps one record, the one with the
    highest ordering value (Hudi's HoodieWriteHelper.deduplicateRecords keys by the record key alone), on
    the first write as on later ones: never the same key twice in the table."""
    opts = {"index.type": index_type, "hoodie.datasource.write.table.type": table_type}
    write(trips(spark, [("a", 3, "sf", 10.0), ("a", 2, "nyc", 20.0), ("b", 1, "sf", 1.0)]), table_path, **opts)
    assert_df_equality(data_only(snapshot(spark, table_path)), expect(spark, [("a", 3, "sf", 10.0), ("b", 1, "sf", 1.0)]))
    write(trips(spark, [("b", 4, "nyc", 2.0), ("b", 5, "la", 3.0), ("a", 4, "sf", 11.0)]), table_path, **opts)
    assert_df_equality(data_only(snapshot(spark, table_path)), expect(spark, [("a", 4, "sf", 11.0), ("b", 5, "la", 3.0)]))


def test_complex_key_hive_style_and_nonpartitioned(spark, tmp_path):
    hive = str(tmp_path / "hive")
    df = trips(spark, [("a", 1, "sf", 10.0), ("a", 2, "nyc", 20.0)])
    (df.write.format("hoodie").option("hoodie.table.name", "t")
     .option("hoodie.datasource.write.recordkey.field", "uuid,ts")
     .option("hoodie.datasource.write.partitionpath.field", "city")
     .option("hoodie.datasource.write.hive_style_partitioning", "true")
     .mode("upsert").save(hive))
    got = spark.read.format("hoodie").load(hive)
    assert sorted(r["_hoodie_record_key"] for r in got.collect()) == ["uuid:a,ts:1", "uuid:a,ts:2"]
    assert sorted(os.listdir(hive)) == [".hoodie", "city=nyc", "city=sf"]

    flat = str(tmp_path / "flat")
    df.write.format("hoodie").option("table.name", "t").option("recordkey.field", "ts").mode("upsert").save(flat)
    rows = spark.read.format("hoodie").load(flat).collect()
    assert sorted(r.ts for r in rows) == [1, 2] and {r["_hoodie_partition_path"] for r in rows} == {""}
    assert os.path.exists(os.path.join(flat, ".hoodie_partition_metadata"))


def test_commit_metadata_records_stage_timings(spark, table_path):
    write(trips(spark, [("a", 1, "sf", 10.0)]), table_path)
    meta = HoodieTable(table_path).commit_metadata(HoodieTable(table_path).latest_commit())
    stages = {k: int(v) for k, v in meta["extraMetadata"].items() if k.startswith("hoodie.stage.")}
    assert set(stages) == {f"hoodie.stage.{s}.ms" for s in ("tag_task", "profile_task", "write_task", "job", "commit")}
    assert all(ms >= 0 for ms in stages.values())
    # the tasks' stages run inside the job (one task here, so their sum cannot exceed it)
    assert sum(stages[f"hoodie.stage.{s}_task.ms"] for s in ("tag", "profile", "write")) <= stages["hoodie.stage.job.ms"]
    # an upsert into the table records the index work of its tasks: "a" is found, "c" is new
    write(trips(spark, [("a", 2, "sf", 11.0), ("c", 1, "sf", 12.0)]), table_path)
    meta = HoodieTable(table_path).commit_metadata(HoodieTable(table_path).latest_commit())
    counts = {k.removeprefix("hoodie.stage.index."): int(v) for k, v in meta["extraMetadata"].items()
              if k.startswith("hoodie.stage.index.")}
    assert (counts["keys"], counts["files"], counts["found"], counts["false_positives_checked"]) == (2, 1, 1, 0)
    write(trips(spark, [("b", 1, "sf", 10.0)]), table_path, mode="bulk_insert")
    meta = HoodieTable(table_path).commit_metadata(HoodieTable(table_path).latest_commit())
    stages = {k for k in meta["extraMetadata"] if k.startswith("hoodie.stage.")}
    # a bulk insert counts its input by partition (profile), then is one job, its tasks timing each step
    # (write.bulk_insert.STAGES)
    assert stages == {f"hoodie.stage.{s}.ms" for s in ("profile", "job", "commit")} | {
        f"hoodie.stage.{s}_task.ms" for s in ("input", "keys", "route", "meta", "bloom", "encode", "upload")}
    json.loads(meta["extraMetadata"]["schema"])


def test_empty_batches_and_deletes_of_unknown_keys_change_nothing(spark, table_path):
    write(trips(spark, [("a", 1, "sf", 10.0)]), table_path)
    empty = spark.createDataFrame([], "uuid string, ts long, city string, fare double")
    write(empty, table_path)
    write(trips(spark, [("zz", 1, "sf", 0.0)]), table_path, mode="delete")
    assert_df_equality(data_only(snapshot(spark, table_path)), expect(spark, [("a", 1, "sf", 10.0)]))
    files = [n for n in os.listdir(os.path.join(table_path, "sf")) if n.endswith(".parquet")]
    assert len(files) == 1
    assert len(HoodieTable(table_path).completed_commits()) == 3


def test_a_given_schema_reads_only_those_columns(spark, table_path):
    write(trips(spark, [("a", 1, "sf", 10.0), ("b", 1, "nyc", 20.0)]), table_path)
    narrow = spark.read.format("hoodie").schema("uuid string, fare double").load(table_path)
    assert sorted(tuple(r) for r in narrow.filter("fare > 15").collect()) == [("b", 20.0)]
    assert narrow.selectExpr("sum(fare)").first()[0] == 30.0
    with pytest.raises(Exception, match="not in the table"):
        spark.read.format("hoodie").schema("uuid string, nope int").load(table_path).collect()
