"""SQL INSERT and CREATE TABLE AS SELECT into an empty table run stages of a few tasks in a session with
Spark's defaults (200 shuffle partitions, adaptive execution on)."""

from __future__ import annotations

from tests.spark_stages import tasks_of


def test_sql_insert_and_ctas_into_an_empty_table_run_a_few_tasks(spark_defaults, tmp_path):
    spark = spark_defaults
    spark.sql(f"CREATE TABLE par_t (uuid STRING, ts BIGINT, fare DOUBLE, city STRING) USING hoodie "
              f"PARTITIONED BY (city) LOCATION '{tmp_path / 't'}' TBLPROPERTIES (primaryKey = 'uuid', "
              f"preCombineField = 'ts')")
    try:
        inserted = tasks_of(spark, lambda: spark.sql("INSERT INTO par_t VALUES ('a', 1, 1.0, 'sf'), "
                                                     "('b', 1, 2.0, 'nyc')"))
        created = tasks_of(spark, lambda: spark.sql(
            f"CREATE TABLE par_c USING hoodie PARTITIONED BY (city) LOCATION '{tmp_path / 'c'}' "
            f"TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts') AS SELECT * FROM par_t"))
        cores = spark.sparkContext.defaultParallelism
        assert max(inserted) <= cores and max(created) <= cores, (inserted, created)
        assert spark.table("par_c").count() == 2
    finally:
        spark.sql("DROP TABLE IF EXISTS par_t")
        spark.sql("DROP TABLE IF EXISTS par_c")
