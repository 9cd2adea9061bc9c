"""Atomicity and bad input: a failed write leaves nothing visible and is rolled back by the next
write; a bad option, value or input fails with a message naming it, and the table is unchanged."""

from __future__ import annotations

import os

import pytest
from pyspark.sql import Row
from pyspark.sql import functions as F

from hoodie_datasource import HoodieTable
from hoodie_datasource.spark import save_modes
from tests.conftest import assert_failed_write_left_nothing, table_listing

OPTS = {"table.name": "trips", "recordkey.field": "uuid", "partitionpath.field": "city", "precombine.field": "ts"}


def df_of(spark, rows):
    return spark.createDataFrame([Row(uuid=u, ts=t, city=c, fare=f) for u, t, c, f in rows])


def write(df, path, mode="upsert", **extra):
    df.write.format("hoodie").options(**{**OPTS, **extra}).mode(mode).save(path)


def table_files(path):
    found = set()
    for root, _, files in os.walk(path):
        for name in files:
            found.add(os.path.relpath(os.path.join(root, name), path))
    return found


def contents(spark, path):
    return sorted((r.uuid, r.ts, r.fare) for r in spark.read.format("hoodie").load(path).collect())


@pytest.fixture
def seeded(spark, table_path):
    write(df_of(spark, [("a", 1, "sf", 1.0), ("b", 1, "nyc", 2.0)]), table_path)
    return table_path


def test_task_failure_leaves_nothing_visible_and_next_write_rolls_back(spark, seeded):
    before = contents(spark, seeded)
    files_before = table_listing(seeded)
    # the second row makes a write task fail after other tasks may have written files
    bad = df_of(spark, [("a", 2, "sf", 9.0), ("c", 2, "nyc", 9.0)]).withColumn(
        "fare", F.when(F.col("uuid") == "c", F.raise_error("boom")).otherwise(F.col("fare"))
    )
    with pytest.raises(Exception, match="boom"):
        write(bad, seeded)
    assert_failed_write_left_nothing(seeded, files_before)
    assert contents(spark, seeded) == before
    assert HoodieTable(seeded).timeline().pending() == []  # the failed writer rolled itself back
    write(df_of(spark, [("a", 3, "sf", 3.0)]), seeded)
    assert contents(spark, seeded) == [("a", 3, 3.0), ("b", 1, 2.0)]


def test_a_task_failing_after_writing_file_groups_leaves_no_data_files_and_no_markers(spark, seeded):
    """One write task writes partitions nyc and sf (groups run in key order), then fails on zz, whose
    directory cannot be created (a file is in the way): the rollback removes the files it wrote and
    every marker, and the next write goes through."""
    before = contents(spark, seeded)
    blocker = os.path.join(seeded, "zz")
    open(blocker, "w").close()
    files_before = table_listing(seeded)
    shuffle = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "1")  # one task holds all three partitions
    try:
        with pytest.raises(Exception, match="zz"):
            write(df_of(spark, [("a", 2, "sf", 9.0), ("b", 2, "nyc", 9.0), ("z", 2, "zz", 9.0)]), seeded)
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", shuffle)
    timeline = HoodieTable(seeded).timeline()
    [rollback] = [i for i in timeline.instants if i.action == "rollback"]
    assert timeline.read_metadata(rollback)["totalFilesDeleted"] >= 2  # nyc's and sf's new base files
    assert_failed_write_left_nothing(seeded, files_before)
    assert contents(spark, seeded) == before
    os.remove(blocker)
    write(df_of(spark, [("a", 2, "sf", 9.0), ("z", 2, "zz", 9.0)]), seeded)
    assert contents(spark, seeded) == [("a", 2, 9.0), ("b", 1, 2.0), ("z", 2, 9.0)]


def test_writer_killed_midway_is_rolled_back_by_next_write(spark, seeded):
    """Simulate a dead writer: a requested + inflight instant and a data file, no completed file."""
    table = HoodieTable(seeded)
    last = table.latest_commit()
    dead = str(int(last) + 1)
    hoodie = os.path.join(seeded, ".hoodie")
    open(os.path.join(hoodie, f"{dead}.commit.requested"), "w").close()
    open(os.path.join(hoodie, f"{dead}.inflight"), "w").close()
    stray = os.path.join(seeded, "sf", f"00000000-0000-0000-0000-000000000000-0_0-1-1_{dead}.parquet")
    import shutil

    shutil.copy(next(os.path.join(seeded, "sf", n) for n in os.listdir(os.path.join(seeded, "sf"))
                     if n.endswith(".parquet")), stray)
    assert contents(spark, seeded) == [("a", 1, 1.0), ("b", 1, 2.0)]  # readers ignore it
    write(df_of(spark, [("b", 2, "nyc", 5.0)]), seeded)
    assert not os.path.exists(stray)
    assert not any(n.startswith(dead) for n in os.listdir(hoodie))
    assert contents(spark, seeded) == [("a", 1, 1.0), ("b", 2, 5.0)]


def test_explicit_rollback_of_latest_commit(spark, seeded):
    first = HoodieTable(seeded).latest_commit()
    write(df_of(spark, [("a", 2, "sf", 7.0)]), seeded)
    second = HoodieTable(seeded).latest_commit()
    assert HoodieTable(seeded).rollback(second) == [second]
    assert HoodieTable(seeded).completed_commits() == [first]
    assert contents(spark, seeded) == [("a", 1, 1.0), ("b", 1, 2.0)]
    with pytest.raises(Exception, match="Only the latest completed write"):
        write(df_of(spark, [("a", 3, "sf", 7.0)]), seeded)
        HoodieTable(seeded).rollback(first)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"hoodie.datasource.write.operation": "upsurt"}, "valid values are: upsert"),
        ({"index.type": "HASHMAP"}, "valid values are: BLOOM, GLOBAL_BLOOM, SIMPLE"),
        ({"recordkey.feld": "uuid"}, "Unknown option 'recordkey.feld'; did you mean"),
        ({"partitionpath.field": "country"}, "partition fields cannot change"),
        ({"precombine.field": "nope"}, "precombine field cannot change"),
        ({"recordkey.field": "uuid,other"}, "record key fields cannot change"),
        ({"hoodie.parquet.max.file.size": "big"}, "must be an integer"),
    ],
)
def test_bad_options_name_the_problem_and_leave_table_unchanged(spark, seeded, options, message):
    before = table_files(seeded)
    with pytest.raises(Exception, match=message):
        write(df_of(spark, [("z", 1, "sf", 1.0)]), seeded, **options)
    assert table_files(seeded) == before


def test_unknown_partition_field_on_a_new_table(spark, tmp_path):
    path = str(tmp_path / "new")
    with pytest.raises(Exception, match="partition path field\\(s\\) country not found"):
        write(df_of(spark, [("z", 1, "sf", 1.0)]), path, **{"partitionpath.field": "country"})
    with pytest.raises(Exception, match="record key field\\(s\\) other not found"):
        write(df_of(spark, [("z", 1, "sf", 1.0)]), path, **{"recordkey.field": "uuid,other"})
    with pytest.raises(Exception, match="Precombine field 'nope' not found"):
        write(df_of(spark, [("z", 1, "sf", 1.0)]), path, **{"precombine.field": "nope"})
    assert not os.path.exists(path)


def test_null_record_key_is_rejected(spark, seeded):
    before = table_files(seeded)
    df = spark.createDataFrame([("z", 1, "sf", 1.0), (None, 1, "sf", 1.0)], "uuid string, ts long, city string, fare double")
    with pytest.raises(Exception, match="Record key field 'uuid' is null or empty"):
        write(df, seeded)
    assert contents(spark, seeded) == [("a", 1, 1.0), ("b", 1, 2.0)]
    assert {f for f in table_files(seeded) if not f.startswith(".hoodie/")} == {
        f for f in before if not f.startswith(".hoodie/")}


def test_schema_conflicts(spark, seeded):
    before = table_files(seeded)
    wrong_type = spark.createDataFrame([("z", 1, "sf", "cheap")], "uuid string, ts long, city string, fare string")
    with pytest.raises(Exception, match="Column 'fare' is string in the incoming data but double"):
        write(wrong_type, seeded)
    missing = spark.createDataFrame([("z", 1, "sf")], "uuid string, ts long, city string")
    with pytest.raises(Exception, match="lacks the table's column\\(s\\) fare"):
        write(missing, seeded)
    assert table_files(seeded) == before


def test_new_columns_evolve_the_schema(spark, seeded):
    df = spark.createDataFrame([("c", 1, "sf", 3.0, "gold")], "uuid string, ts long, city string, fare double, tier string")
    write(df, seeded)
    got = {r.uuid: r.tier for r in spark.read.format("hoodie").load(seeded).collect()}
    assert got == {"a": None, "b": None, "c": "gold"}


def test_changing_record_key_or_writing_into_foreign_directory(spark, seeded, tmp_path):
    with pytest.raises(Exception, match="the table was created with"):
        write(df_of(spark, [("z", 1, "sf", 1.0)]), seeded, **{"recordkey.field": "ts"})
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "data.csv").write_text("x\n")
    with pytest.raises(Exception, match="holds no Hudi table"):
        write(df_of(spark, [("z", 1, "sf", 1.0)]), str(foreign))
    assert os.listdir(foreign) == ["data.csv"]


def test_save_modes_error_and_ignore(spark, seeded):
    df = df_of(spark, [("z", 1, "sf", 1.0)])
    with pytest.raises(Exception, match="already exists"):
        df.write.format("hoodie").options(**OPTS).save(seeded)
    df.write.format("hoodie").options(**OPTS).mode("ignore").save(seeded)
    assert len(HoodieTable(seeded).completed_commits()) == 1
    with pytest.raises(Exception, match="only applies to format 'hoodie'"):
        df.write.format("parquet").mode("upsert").save(seeded + "_pq")


def test_bad_read_options(spark, seeded):
    with pytest.raises(Exception, match="needs option 'begin.instant'"):
        spark.read.format("hoodie").option("query", "incremental").load(seeded).count()
    with pytest.raises(Exception, match="valid values are: snapshot, read_optimized, incremental"):
        spark.read.format("hoodie").option("query", "latest").load(seeded).count()
    with pytest.raises(Exception, match="must be in format yyyyMMddHHmmss"):
        spark.read.format("hoodie").option("as.of.instant", "yesterday").load(seeded).count()
    with pytest.raises(Exception, match="No Hudi table at"):
        spark.read.format("hoodie").load(seeded + "_missing").count()


def test_writes_that_bypass_register_go_through_the_data_source_writer(spark, table_path):
    """Without the save-mode routing (e.g. SQL INSERT), the data source stages and commits."""
    save_modes.uninstall()
    try:
        df = df_of(spark, [("a", 1, "sf", 1.0), ("a", 2, "sf", 2.0), ("b", 1, "nyc", 3.0)]).repartition(3)
        df.write.format("hoodie").options(**OPTS).mode("append").save(table_path)
        df_of(spark, [("b", 2, "nyc", 4.0)]).write.format("hoodie").options(**OPTS).mode("append").save(table_path)
    finally:
        import hoodie_datasource

        hoodie_datasource.register(spark)
    assert contents(spark, table_path) == [("a", 2, 2.0), ("b", 2, 4.0)]
    assert not [n for n in os.listdir(os.path.join(table_path, ".hoodie", ".temp")) if n.startswith("staging")]
