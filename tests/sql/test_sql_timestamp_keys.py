"""A SQL table partitioned by Hudi's ``TimestampBasedKeyGenerator`` (its options in TBLPROPERTIES): a clustered
SQL INSERT has Spark cluster its rows by the column's values, and many values make one partition path (a day
of epoch milliseconds), so the write does not run per partition on that clustering; every row lands once, in
its day."""

from __future__ import annotations

from hoodie_datasource.read.table_reader import read_table
from tests.sql.helpers import assert_rows

# rows of one day in several of eight tasks: the shuffle is not coalesced into one
SPREAD = {"spark.sql.adaptive.coalescePartitions.enabled": "false", "spark.sql.shuffle.partitions": "8"}


def test_insert_into_a_timestamp_partitioned_table(sql, name, location):
    sql.sql(f"""CREATE TABLE {name} (id bigint, ms bigint, v int) USING hoodie PARTITIONED BY (ms)
                LOCATION '{location}' TBLPROPERTIES (primaryKey = 'id', preCombineField = 'v',
                'hoodie.datasource.write.keygenerator.class' = 'org.apache.hudi.keygen.TimestampBasedKeyGenerator',
                'hoodie.keygen.timebased.timestamp.type' = 'EPOCHMILLISECONDS',
                'hoodie.keygen.timebased.output.dateformat' = 'yyyy/MM/dd',
                'hoodie.keygen.timebased.output.timezone' = 'UTC')""")
    saved = {key: sql.conf.get(key) for key in SPREAD}
    try:
        for key, value in SPREAD.items():
            sql.conf.set(key, value)
        values = ", ".join(f"({i}, 1, {1_700_000_000_000 + i * 3_600_000})" for i in range(48))  # ms last
        sql.sql(f"INSERT INTO {name} VALUES {values}")
    finally:
        for key, value in saved.items():
            sql.conf.set(key, value)
    stored = read_table(location)
    paths = dict(zip(stored.column("id").to_pylist(), stored.column("_hoodie_partition_path").to_pylist()))
    assert len(paths) == stored.num_rows == 48
    assert sorted(set(paths.values())) == ["ms=2023/11/14", "ms=2023/11/15", "ms=2023/11/16"]  # SQL: hive style
    assert_rows(sql, f"SELECT count(*) AS n FROM {name}", [(48,)], "n bigint")
