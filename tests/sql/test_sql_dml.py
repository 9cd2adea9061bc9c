"""INSERT / SELECT / the _rt and _ro views / UPDATE / DELETE / MERGE INTO through the jvm-shim."""

from __future__ import annotations

import os

import pytest
from pyspark.errors import AnalysisException

from hoodie_datasource import HoodieTable
from tests.conftest import assert_failed_write_left_nothing, table_listing
from tests.sql.helpers import assert_rows, create_trips, insert_trips

pytestmark = pytest.mark.spark

INITIAL = [("a", 1, 10.0, "sf"), ("b", 1, 20.0, "sf"), ("c", 1, 30.0, "nyc")]


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_insert_is_an_upsert_and_views_read_snapshot_and_read_optimized(sql, name, location, table_type):
    create_trips(sql, name, location, table_type)
    assert_rows(sql, f"SELECT * FROM {name}", [])  # CREATE TABLE made an empty table on storage
    insert_trips(sql, name)
    sql.sql(f"INSERT INTO {name} VALUES ('a', 2, 11.0, 'sf')")  # a primary key: INSERT upserts

    latest = [("a", 2, 11.0, "sf"), ("b", 1, 20.0, "sf"), ("c", 1, 30.0, "nyc")]
    assert_rows(sql, f"SELECT * FROM {name}", latest)
    assert_rows(sql, f"SELECT * FROM {name}_rt", latest)
    # read-optimized: base files only; for MOR the update still sits in a log file
    assert_rows(sql, f"SELECT * FROM {name}_ro", INITIAL if table_type == "mor" else latest)
    assert HoodieTable(location).config.table_type == ("MERGE_ON_READ" if table_type == "mor" else "COPY_ON_WRITE")

    meta = sql.sql(f"SELECT _hoodie_record_key, _hoodie_partition_path, uuid FROM {name} WHERE uuid = 'a'").first()
    assert (meta[0], meta[1], meta[2]) == ("a", "city=sf", "a")
    assert sql.sql(f"SELECT count(*), sum(fare) FROM {name}").first() == (3, 61.0)


def test_insert_select_and_overwrites(sql, name, location):
    create_trips(sql, name, location)
    sql.createDataFrame([("a", 1, 10.0, "sf"), ("b", 1, 20.0, "nyc")], "uuid string, ts long, fare double, city string") \
        .createOrReplaceTempView("incoming")
    sql.sql(f"INSERT INTO {name} SELECT * FROM incoming")
    sql.sql(f"INSERT INTO {name} (city, fare, uuid, ts) VALUES ('la', 5.0, 'c', 1)")  # by name
    assert_rows(sql, f"SELECT * FROM {name}", [("a", 1, 10.0, "sf"), ("b", 1, 20.0, "nyc"), ("c", 1, 5.0, "la")])

    sql.sql(f"INSERT OVERWRITE {name} PARTITION (city = 'sf') SELECT 'd', 2, 7.0")  # that partition only
    assert_rows(sql, f"SELECT * FROM {name}", [("d", 2, 7.0, "sf"), ("b", 1, 20.0, "nyc"), ("c", 1, 5.0, "la")])

    sql.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        sql.sql(f"INSERT OVERWRITE {name} SELECT 'e', 3, 1.0, 'nyc'")  # dynamic: the partitions written
    finally:
        sql.conf.unset("spark.sql.sources.partitionOverwriteMode")
    assert_rows(sql, f"SELECT * FROM {name}", [("d", 2, 7.0, "sf"), ("e", 3, 1.0, "nyc"), ("c", 1, 5.0, "la")])

    sql.sql(f"INSERT OVERWRITE {name} SELECT 'f', 4, 2.0, 'sf'")  # static (Spark's default): the whole table
    assert_rows(sql, f"SELECT * FROM {name}", [("f", 4, 2.0, "sf")])


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_update_and_delete(sql, name, location, table_type):
    create_trips(sql, name, location, table_type)
    insert_trips(sql, name)
    sql.sql(f"UPDATE {name} SET fare = fare * 2 WHERE city = 'sf'")
    assert_rows(sql, f"SELECT * FROM {name}", [("a", 1, 20.0, "sf"), ("b", 1, 40.0, "sf"), ("c", 1, 30.0, "nyc")])
    sql.sql(f"DELETE FROM {name} WHERE uuid = 'b'")
    assert_rows(sql, f"SELECT * FROM {name}", [("a", 1, 20.0, "sf"), ("c", 1, 30.0, "nyc")])
    sql.sql(f"UPDATE {name} SET fare = 0")  # no WHERE: every row
    assert_rows(sql, f"SELECT * FROM {name}", [("a", 1, 0.0, "sf"), ("c", 1, 0.0, "nyc")])
    sql.sql(f"DELETE FROM {name} WHERE uuid IN (SELECT k FROM VALUES ('a') AS v(k))")  # a subquery in the condition
    assert_rows(sql, f"SELECT * FROM {name}", [("c", 1, 0.0, "nyc")])
    assert len(HoodieTable(location).completed_commits()) == 5  # one commit per statement


def test_update_refuses_key_and_partition_columns(sql, name, location):
    create_trips(sql, name, location)
    insert_trips(sql, name)
    commits = HoodieTable(location).completed_commits()
    for statement in (f"UPDATE {name} SET uuid = 'z' WHERE uuid = 'a'", f"UPDATE {name} SET city = 'la'"):
        with pytest.raises(AnalysisException, match="record key or partition column"):
            sql.sql(statement)
    assert HoodieTable(location).completed_commits() == commits
    assert_rows(sql, f"SELECT * FROM {name}", INITIAL)


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_merge_into_upserts_and_inserts(sql, name, location, table_type):
    create_trips(sql, name, location, table_type)
    insert_trips(sql, name)
    sql.createDataFrame([("a", 5, 1.0, "sf"), ("z", 5, 2.0, "la")], "uuid string, ts long, fare double, city string") \
        .createOrReplaceTempView("updates")
    sql.sql(f"""MERGE INTO {name} t USING updates s ON t.uuid = s.uuid
                WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
    assert_rows(sql, f"SELECT * FROM {name}",
                [("a", 5, 1.0, "sf"), ("b", 1, 20.0, "sf"), ("c", 1, 30.0, "nyc"), ("z", 5, 2.0, "la")])


def test_merge_into_with_conditions_and_deletes_is_one_commit(sql, name, location):
    create_trips(sql, name, location, "mor")
    insert_trips(sql, name)
    before = HoodieTable(location).completed_commits()
    sql.createDataFrame(
        [("a", 9, 99.0, "sf", "u"), ("b", 9, 0.0, "sf", "d"), ("c", 9, 1.0, "nyc", "skip"),
         ("x", 9, 5.0, "la", "i"), ("y", 9, -1.0, "la", "i")],
        "uuid string, ts long, fare double, city string, op string",
    ).createOrReplaceTempView("changes")
    sql.sql(f"""MERGE INTO {name} t USING changes s ON t.uuid = s.uuid
                WHEN MATCHED AND s.op = 'd' THEN DELETE
                WHEN MATCHED AND s.op = 'u' THEN UPDATE SET fare = s.fare, ts = s.ts
                WHEN NOT MATCHED AND s.fare > 0 THEN INSERT (uuid, ts, fare, city) VALUES (s.uuid, s.ts, s.fare, s.city)""")
    assert_rows(sql, f"SELECT * FROM {name}", [("a", 9, 99.0, "sf"), ("c", 1, 30.0, "nyc"), ("x", 9, 5.0, "la")])
    after = HoodieTable(location).completed_commits()
    assert len(after) == len(before) + 1  # the updates, inserts and deletes are one atomic commit


def test_merge_keeps_key_and_partition_of_matched_rows(sql, name, location):
    create_trips(sql, name, location)
    insert_trips(sql, name)
    sql.createDataFrame([("a", 7, 3.0, "la")], "uuid string, ts long, fare double, city string") \
        .createOrReplaceTempView("moved")
    sql.sql(f"MERGE INTO {name} t USING moved s ON t.uuid = s.uuid WHEN MATCHED THEN UPDATE SET *")
    # the row stays in its partition (a non-global index cannot move it): never two rows for key 'a'
    assert_rows(sql, f"SELECT * FROM {name}", [("a", 7, 3.0, "sf"), ("b", 1, 20.0, "sf"), ("c", 1, 30.0, "nyc")])


def test_merge_not_matched_by_source_is_refused(sql, name, location):
    create_trips(sql, name, location)
    insert_trips(sql, name)
    sql.createDataFrame([("a", 5, 1.0, "sf")], "uuid string, ts long, fare double, city string") \
        .createOrReplaceTempView("few")
    with pytest.raises(AnalysisException, match="NOT MATCHED BY SOURCE"):
        sql.sql(f"MERGE INTO {name} t USING few s ON t.uuid = s.uuid WHEN NOT MATCHED BY SOURCE THEN DELETE")
    assert_rows(sql, f"SELECT * FROM {name}", INITIAL)


@pytest.mark.parametrize("clustered", [True, False])
def test_writes_are_right_whatever_the_input_partitioning(sql, name, location, clustered):
    """Rows of one partition arrive in several tasks. The shim has Spark cluster them by partition so each
    task writes whole partitions (or, switched off, the tasks stage the rows and the commit writes them)."""
    create_trips(sql, name, location)
    sql.conf.set("spark.hoodie.sql.clusteredWrites", str(clustered).lower())
    try:
        rows = sql.range(2000).selectExpr("concat('k', id) AS uuid", "1L AS ts", "CAST(id AS DOUBLE) AS fare",
                                          "concat('c', id % 5) AS city").repartition(4)
        rows.createOrReplaceTempView("many")
        sql.sql(f"INSERT INTO {name} BY NAME SELECT * FROM many")
        sql.sql(f"INSERT INTO {name} BY NAME SELECT uuid, 2L AS ts, -fare AS fare, city FROM many "
                "WHERE fare % 4 = 0 DISTRIBUTE BY rand()")
    finally:
        sql.conf.unset("spark.hoodie.sql.clusteredWrites")
    summary = sql.sql(f"SELECT count(*), count(DISTINCT uuid), sum(CASE WHEN ts = 2 AND fare <= 0 THEN 1 ELSE 0 END) "
                      f"FROM {name}")
    assert tuple(summary.first()) == (2000, 2000, 500)
    table = HoodieTable(location)
    stages = table.commit_metadata(table.latest_commit())["extraMetadata"]
    assert ("hoodie.stage.tag_task.ms" in stages) == clustered  # written by the tasks, or in the commit


@pytest.mark.parametrize("clustered", [True, False])
def test_a_failed_sql_write_changes_nothing(sql, name, location, clustered):
    """A task fails (a null record key): the instant is rolled back, readers see the old rows, and the
    next write succeeds."""
    create_trips(sql, name, location)
    insert_trips(sql, name)
    commits = HoodieTable(location).completed_commits()
    files_before = table_listing(location)
    sql.conf.set("spark.hoodie.sql.clusteredWrites", str(clustered).lower())
    try:
        with pytest.raises(Exception, match="record key"):
            sql.sql(f"INSERT INTO {name} VALUES ('d', 2, 1.0, 'sf'), (NULL, 2, 2.0, 'sf')")
    finally:
        sql.conf.unset("spark.hoodie.sql.clusteredWrites")
    assert_failed_write_left_nothing(location, files_before)
    assert HoodieTable(location).completed_commits() == commits
    assert_rows(sql, f"SELECT * FROM {name}", INITIAL)
    sql.sql(f"INSERT INTO {name} VALUES ('d', 2, 1.0, 'sf')")
    assert_rows(sql, f"SELECT * FROM {name}", [*INITIAL, ("d", 2, 1.0, "sf")])
    assert len(HoodieTable(location).completed_commits()) == len(commits) + 1


@pytest.mark.parametrize("clustered", [True, False])
def test_a_sql_write_failing_in_a_task_after_writing_files_leaves_none(sql, name, location, clustered):
    """A write task writes partitions nyc and sf (in key order), then fails on zz, whose directory
    cannot be created (a file is in the way): the rollback leaves no data file and no marker."""
    create_trips(sql, name, location)
    insert_trips(sql, name)
    for blocked in ("zz", "city=zz"):  # whichever partition path style the table uses
        open(os.path.join(location, blocked), "w").close()
    files_before = table_listing(location)
    shuffle = sql.conf.get("spark.sql.shuffle.partitions")
    sql.conf.set("spark.sql.shuffle.partitions", "1")  # one task holds all three partitions
    sql.conf.set("spark.hoodie.sql.clusteredWrites", str(clustered).lower())
    try:
        with pytest.raises(Exception, match="zz"):
            sql.sql(f"INSERT INTO {name} VALUES ('d', 2, 1.0, 'sf'), ('e', 2, 2.0, 'nyc'), ('z', 2, 3.0, 'zz')")
    finally:
        sql.conf.set("spark.sql.shuffle.partitions", shuffle)
        sql.conf.unset("spark.hoodie.sql.clusteredWrites")
    assert_failed_write_left_nothing(location, files_before)
    assert_rows(sql, f"SELECT * FROM {name}", INITIAL)
