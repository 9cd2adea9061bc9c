"""Run by test_sql_connect.py in a process of its own: hoodie SQL over Spark Connect (a local server)."""

import json
import os
import sys
import warnings

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
warnings.simplefilter("ignore")  # the client reports the static settings the server already has

from pyspark.sql import SparkSession  # noqa: E402

import hoodie_datasource  # noqa: E402

work = sys.argv[1]
spark = hoodie_datasource.session(SparkSession.builder.remote("local[2]").config("spark.ui.enabled", "false")
                                  .config("spark.driver.extraJavaOptions", os.environ.get("HOODIE_TEST_JVM_OPTIONS", "")),
                                  warehouse=os.path.join(work, "warehouse"))
spark.sql(f"CREATE TABLE c (uuid STRING, ts BIGINT, fare DOUBLE, city STRING) USING hoodie PARTITIONED BY (city) "
          f"LOCATION '{work}/c' TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', type = 'mor')")
spark.sql("INSERT INTO c VALUES ('a', 1, 1.0, 'sf'), ('b', 1, 2.0, 'la')")
spark.sql("UPDATE c SET fare = 9 WHERE uuid = 'a'")
spark.sql("MERGE INTO c t USING (SELECT 'b' AS uuid, 2L AS ts, 5.0 AS fare, 'la' AS city) s ON t.uuid = s.uuid "
          "WHEN MATCHED THEN DELETE")
result = {
    "session": type(spark).__module__,
    "rt": [list(r) for r in spark.sql("SELECT uuid, ts, fare, city FROM c_rt").collect()],
    "ro": sorted(list(r) for r in spark.sql("SELECT uuid, fare FROM c_ro").collect()),
}
print("RESULT " + json.dumps(result))  # noqa: T201 - the test reads this line
spark.stop()
