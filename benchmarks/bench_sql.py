"""SQL writes through the jvm-shim, both ways, against the DataFrame write DAG on the same data.

    python benchmarks/bench_sql.py --rows 1000000 --runs 3

SQL writes reach the Python data source writer. With ``spark.hoodie.sql.clusteredWrites=true`` (the
default) the shim has Spark cluster the rows by partition and each task writes its partitions; with
``false`` the tasks stage the rows and the whole write runs in the writer's ``commit()``. Each run
loads a fresh table (INSERT of all rows), then upserts the seed-story batch with INSERT INTO and
with MERGE INTO; the ways are interleaved run by run. Writes ``benchmarks/results/sql_<rows>.md``.
"""

from __future__ import annotations

import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyspark  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

import hoodie_datasource  # noqa: E402
from benchmarks.cli import parser  # noqa: E402
from benchmarks.workload import SEED, base_table, upsert_batch  # noqa: E402

WAYS = ("SQL, clustered by partition", "SQL, staged", "DataFrame DAG")
STEPS = ("load all rows", "upsert the batch (INSERT INTO)", "MERGE INTO the batch")


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def sql_run(spark, work: str, columns: str, clustered: bool) -> dict[str, float]:
    spark.conf.set("spark.hoodie.sql.clusteredWrites", str(clustered).lower())
    spark.sql("DROP TABLE IF EXISTS trips")
    shutil.rmtree(os.path.join(work, "sql"), ignore_errors=True)
    spark.sql(f"CREATE TABLE trips ({columns}) USING hoodie PARTITIONED BY (dt) LOCATION '{work}/sql' "
              "TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', 'hoodie.clean.automatic' = 'false')")
    return {
        STEPS[0]: timed(lambda: spark.sql("INSERT INTO trips BY NAME SELECT * FROM base")),
        STEPS[1]: timed(lambda: spark.sql("INSERT INTO trips BY NAME SELECT * FROM batch")),
        STEPS[2]: timed(lambda: spark.sql("MERGE INTO trips t USING batch b ON t.uuid = b.uuid "
                                          "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")),
    }


def dataframe_run(base, batch, work: str) -> dict[str, float]:
    path = os.path.join(work, "df")
    shutil.rmtree(path, ignore_errors=True)
    opts = {"table.name": "trips", "recordkey.field": "uuid", "precombine.field": "ts", "partitionpath.field": "dt",
            "hive_style_partitioning": "true", "hoodie.clean.automatic": "false"}
    return {
        STEPS[0]: timed(lambda: base.write.format("hoodie").options(**opts).mode("bulk_insert").save(path)),
        STEPS[1]: timed(lambda: batch.write.format("hoodie").options(**opts).mode("upsert").save(path)),
    }


def main() -> None:
    args = parser(__doc__).parse_args()
    for rows in args.rows:
        measure(rows, args.runs, args.out)


def measure(rows: int, runs_wanted: int, out_folder: Path) -> None:
    work = tempfile.mkdtemp(prefix="hoodie-bench-sql-")
    builder = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4").config("spark.driver.memory", "4g"))
    spark = hoodie_datasource.session(builder, warehouse=os.path.join(work, "warehouse"))
    spark.sparkContext.setLogLevel("ERROR")
    base = spark.createDataFrame(base_table(rows, SEED)).cache()
    batch = spark.createDataFrame(upsert_batch(rows, SEED)).cache()
    base.createOrReplaceTempView("base")
    batch.createOrReplaceTempView("batch")
    base.count(), batch.count()
    columns = ", ".join(f"{f.name} {f.dataType.simpleString()}" for f in base.schema)

    runs: dict[str, list[dict[str, float]]] = {way: [] for way in WAYS}
    for round_number in range(runs_wanted + 1):  # interleaved: one run of each way, then again
        results = (sql_run(spark, work, columns, clustered=True), sql_run(spark, work, columns, clustered=False),
                   dataframe_run(base, batch, work))
        if round_number == 0:
            continue  # the first round warms the session up (JIT, Python workers) and is not counted
        for way, result in zip(WAYS, results):
            runs[way].append(result)
    spark.stop()
    shutil.rmtree(work, ignore_errors=True)

    lines = [f"# SQL writes through the jvm-shim, {rows:,} rows",
             "", f"`python benchmarks/bench_sql.py --rows {rows} --runs {runs_wanted}` (median of {runs_wanted} "
             f"interleaved runs after a warm-up round, one local[2] session; "
             f"batch = {upsert_batch(rows, SEED).num_rows:,} rows: 1% updates, 0.5% inserts)", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
             f"pyspark {pyspark.__version__}, hoodie-datasource {hoodie_datasource.__version__}", "",
             "| seconds | " + " | ".join(WAYS) + " |", "|---|" + "---|" * len(WAYS)]
    for step in STEPS:
        cells = []
        for way in WAYS:
            values = [r[step] for r in runs[way] if step in r]
            cells.append(f"{statistics.median(values):.2f}" if values else "-")
        lines.append(f"| {step} | " + " | ".join(cells) + " |")
    lines += ["", "DataFrame DAG: `mode(\"bulk_insert\")` to load, `mode(\"upsert\")` for the batch (no MERGE in the "
              "DataFrame API). SQL loads are upserts into an empty table (INSERT INTO a table with a primary key)."]
    out = out_folder / f"sql_{rows}.md"
    out.write_text("\n".join(lines) + "\n")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
