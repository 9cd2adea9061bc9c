"""CREATE TABLE over existing tables, CTAS, DROP, DESCRIBE / SHOW CREATE, bad statements, and a Hive
metastore that keeps tables across sessions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.errors import AnalysisException

from hoodie_datasource import HoodieTable
from tests.conftest import REPO, unzip_table
from tests.sql.helpers import assert_rows, create_trips, insert_trips

pytestmark = pytest.mark.spark

INITIAL = [("a", 1, 10.0, "sf"), ("b", 1, 20.0, "sf"), ("c", 1, 30.0, "nyc")]


def test_create_table_over_an_existing_table_takes_its_schema_and_keys(sql, spark_free_write, name, location):
    spark_free_write(location)
    sql.sql(f"CREATE TABLE {name} USING hoodie LOCATION '{location}'")
    assert [f.name for f in sql.table(name).schema] == ["uuid", "ts", "fare", "city"]
    assert_rows(sql, f"SELECT * FROM {name}", INITIAL)
    shown = sql.sql(f"SHOW CREATE TABLE {name}").first()[0]
    assert "PARTITIONED BY (city)" in shown and "'primaryKey' = 'uuid'" in shown and "'type' = 'cow'" in shown
    sql.sql(f"INSERT INTO {name} VALUES ('a', 2, 1.0, 'sf')")  # writes keep the table's own name and layout
    assert_rows(sql, f"SELECT * FROM {name}", [("a", 2, 1.0, "sf"), *INITIAL[1:]])
    assert HoodieTable(location).config.name == "trips"


def test_a_table_written_by_hudi_spark_sql(sql, name, tmp_path):
    base = unzip_table("quickstart_trips_table/mor/avro/v6_trips_8i1u.zip", tmp_path)
    sql.sql(f"CREATE TABLE {name} USING hoodie LOCATION '{base}'")
    fares = {r.rider: r.fare for r in sql.sql(f"SELECT rider, fare FROM {name}").collect()}
    assert len(fares) == 8 and fares["rider-D"] == 25.0 and fares["rider-E"] == 93.5
    sql.sql(f"UPDATE {name} SET fare = 1.5 WHERE rider = 'rider-E'")
    sql.sql(f"DELETE FROM {name} WHERE rider = 'rider-A'")

    import hudi  # hudi-rs, an independent reader, sees what SQL did

    rows = hudi.HudiTableBuilder.from_base_uri(str(base)).build().read()
    by_rider = {r: f for b in rows for r, f in zip(b.column("rider").to_pylist(), b.column("fare").to_pylist())}
    assert len(by_rider) == 7 and by_rider["rider-E"] == 1.5 and "rider-A" not in by_rider


def test_ctas_managed_and_external_then_drop(sql, name, location, tmp_path):
    create_trips(sql, name, location)
    insert_trips(sql, name)
    sql.sql(f"""CREATE TABLE {name}_copy USING hoodie PARTITIONED BY (city)
                TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', type = 'mor')
                AS SELECT * FROM {name} WHERE fare > 15""")
    assert_rows(sql, f"SELECT * FROM {name}_copy", INITIAL[1:])
    managed = sql.sql(f"DESCRIBE TABLE EXTENDED {name}_copy").where("col_name = 'Location'").first()[1]
    managed_dir = managed.removeprefix("file:")
    assert HoodieTable(managed_dir).config.table_type == "MERGE_ON_READ"
    sql.sql(f"DROP TABLE {name}_copy")  # managed: the data goes with it
    assert not os.path.exists(managed_dir)

    external = str(tmp_path / "external")
    sql.sql(f"""CREATE TABLE {name}_src USING hoodie LOCATION '{external}' TBLPROPERTIES (primaryKey = 'uuid')
                AS SELECT uuid, fare FROM {name}""")
    sql.sql(f"DROP TABLE {name}_src")  # external: the data stays, and can be registered again
    assert len(HoodieTable(external).completed_commits()) == 1
    sql.sql(f"CREATE TABLE {name}_src USING hoodie LOCATION '{external}'")
    assert_rows(sql, f"SELECT * FROM {name}_src", [("a", 10.0), ("b", 20.0), ("c", 30.0)], "uuid string, fare double")


def test_describe_and_show_create_show_provider_location_and_properties(sql, name, location):
    create_trips(sql, name, location, "mor")
    details = {r.col_name: r.data_type for r in sql.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()}
    assert details["Provider"] == "hoodie"
    assert details["Location"] == f"file:{location}"
    assert details["Type"] == "EXTERNAL"
    assert details["Table Properties"] == "[preCombineField=ts,primaryKey=uuid,type=mor]"
    assert "_hoodie_commit_time" in details  # the meta columns, listed as metadata columns
    shown = sql.sql(f"SHOW CREATE TABLE {name}").first()[0]
    for part in ("USING hoodie", "PARTITIONED BY (city)", f"LOCATION 'file:{location}'", "'primaryKey' = 'uuid'",
                 "'type' = 'mor'"):
        assert part in shown


def test_bad_statements_change_nothing(sql, name, location):
    with pytest.raises(AnalysisException, match=r"Invalid value 'xyz' for option 'type'.*cow, mor"):
        sql.sql(f"CREATE TABLE {name} (uuid STRING, ts BIGINT) USING hoodie LOCATION '{location}' "
                "TBLPROPERTIES (primaryKey = 'uuid', type = 'xyz')")
    assert not sql.catalog.tableExists(name)
    assert not os.path.exists(os.path.join(location, ".hoodie"))
    with pytest.raises(AnalysisException, match="needs columns, or a LOCATION"):
        sql.sql(f"CREATE TABLE {name} USING hoodie")
    with pytest.raises(AnalysisException, match=r"TBLPROPERTIES \(primaryKey"):
        sql.sql(f"CREATE TABLE {name} (uuid STRING) USING hoodie LOCATION '{location}'")
    assert not sql.catalog.tableExists(name)


PERSISTENCE = """
import json, os, sys
sys.path.insert(0, {repo!r})
from tests.conftest import local_builder
import hoodie_datasource
work, step = sys.argv[1], sys.argv[2]
builder = local_builder("persistence", java_options=f"-Dderby.system.home={{work}}")
spark = hoodie_datasource.session(builder, metastore=os.path.join(work, "metastore"),
                                  warehouse=os.path.join(work, "warehouse"))
if step == "create":
    spark.sql("CREATE TABLE kept (uuid STRING, ts BIGINT, fare DOUBLE) USING hoodie "
              "TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts')")
    spark.sql("INSERT INTO kept VALUES ('a', 1, 1.5)")
rows = [tuple(r) for r in spark.sql("SELECT uuid, ts, fare FROM kept_rt").collect()]
print(json.dumps(rows))
spark.stop()
"""


def test_tables_persist_in_the_hive_metastore_across_sessions(tmp_path):
    script = tmp_path / "persistence.py"
    script.write_text(PERSISTENCE.format(repo=str(REPO)))
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}

    def run(step: str) -> list:
        done = subprocess.run([sys.executable, str(script), str(tmp_path), step], capture_output=True, text=True,
                              env=env, timeout=300, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    assert run("create") == [["a", 1, 1.5]]
    assert run("read") == [["a", 1, 1.5]]  # a new process, a new session: the table is still there
    assert (Path(tmp_path) / "metastore").is_dir()


def test_tables_named_by_path(sql, spark_free_write, location):
    spark_free_write(location)
    table = f"hoodie.`{location}`"
    assert_rows(sql, f"SELECT uuid, ts, fare, city FROM {table}", INITIAL)
    first = HoodieTable(location).latest_commit()
    sql.sql(f"INSERT INTO {table} (uuid, ts, fare, city) VALUES ('d', 1, 4.0, 'la')")
    sql.sql(f"DELETE FROM {table} WHERE uuid = 'a'")
    assert_rows(sql, f"SELECT uuid, ts, fare, city FROM {table}", [*INITIAL[1:], ("d", 1, 4.0, "la")])
    assert_rows(sql, f"SELECT uuid, ts, fare, city FROM {table} VERSION AS OF '{first}'", INITIAL)
    df = sql.table(table)  # one DataFrame, filtered then not: every query reads afresh
    assert df.filter("fare > 25").count() == 1
    assert df.count() == 3 and df.agg({"fare": "sum"}).first()[0] == 54.0
    assert sql.sql(f"SELECT count(*) FROM {table}").first()[0] == 3
