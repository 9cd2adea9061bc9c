"""Apache Hudi itself (its Spark 3.5 bundle on pyspark 3.5), driven by our tests as the oracle.

Run by the oracle venv's python (``.tools/hudi-oracle/venv``), never by ours: it imports pyspark 3.5,
which cannot live beside our pyspark 4. One process holds one local SparkSession with the bundle
given by ``--bundle`` and answers JSON commands, one per line on stdin, with one JSON line on stdout::

    {"cmd": "read", "path": P, "options": {...}, "out": DIR, "where": SQL (optional)}
                                                                   -> {"ok": true, "rows": N}
    {"cmd": "write", "path": P, "input": FILE, "mode": "append", "options": {...}}
                                                                   -> {"ok": true, "instants": [...]}
    {"cmd": "compact", "path": P, "options": {...}}              -> {"ok": true, "instants": [...]}
    {"cmd": "clean", "path": P, "options": {...}}                -> {"ok": true, "instants": [...]}
    {"cmd": "sql", "sql": S, "out": DIR (optional)}               -> {"ok": true, "rows": N}
    {"cmd": "partition_paths", "options": {...}, "values": [...], "kind": "long"|"double"|"string"}
                                                                   -> {"ok": true, "paths": [...]}

``partition_paths`` asks ``TimestampBasedAvroKeyGenerator(options).getPartitionPath(value)`` of each value (a
null value: of ``getDefaultPartitionVal()``, as its record path does); a value Java refuses answers
``"ERROR: <its message>"`` in its place.

A failed command answers ``{"ok": false, "error": <the exception's text>}``; the process goes on.
Results are written by Spark 3.5 itself as parquet (one file, in the folder ``out``), so the caller
sees Java's values and types, not a conversion of ours. ``instants`` are the table's completed
instants (timeline v6 file names) after the command, oldest first.

The JVM's own stdout is sent to stderr before Spark starts: only this program's answers are on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import traceback

# The session settings Hudi's quick start gives for Spark 3.5 (HoodieSparkSessionExtension for SQL and
# procedures, HoodieCatalog for CREATE TABLE ... USING hudi, Kryo with HoodieSparkKryoRegistrar).
HUDI_SESSION_CONF = {
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
}

COMMANDS = {"read", "write", "compact", "clean", "sql", "partition_paths"}
COMPLETED = re.compile(r"^(\d+)\.(commit|deltacommit|replacecommit|clean|rollback|savepoint|restore)$")


def session(bundle: str, warehouse: str):
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("hudi-oracle")
        .config("spark.jars", bundle)
        .config("spark.driver.memory", "1g")
        # short jobs on a busy machine: the client compiler alone and the serial collector spend far less
        # CPU on a JVM's first minute (a first Hudi write took ~18 s instead of ~35 s)
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        .config("spark.sql.warehouse.dir", warehouse)
    )
    for key, value in HUDI_SESSION_CONF.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def completed_instants(path: str) -> list[str]:
    """The completed instants on a v6 timeline (``<time>.<action>`` files in ``.hoodie``), oldest first."""
    timeline = os.path.join(path, ".hoodie")
    if not os.path.isdir(timeline):
        return []
    found = (COMPLETED.match(name) for name in os.listdir(timeline))
    return sorted(f"{m.group(1)}.{m.group(2)}" for m in found if m)


def save_result(df, out: str) -> int:
    df.coalesce(1).write.mode("overwrite").parquet(out)
    return df.sparkSession.read.parquet(out).count()


def sql_literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def procedure_options(options: dict) -> str:
    """Hudi procedures take extra write configs as one ``options`` string, ``k=v`` joined by commas."""
    return ",".join(f"{k}={v}" for k, v in options.items())


class Oracle:
    def __init__(self, spark):
        self.spark = spark
        self.tables = 0

    def read(self, path: str, out: str, options: dict | None = None, where: str | None = None) -> dict:
        df = self.spark.read.format("hudi").options(**(options or {})).load(path)
        return {"rows": save_result(df if where is None else df.where(where), out)}

    def write(self, path: str, input: str, options: dict, mode: str = "append") -> dict:
        df = self.spark.read.parquet(input)
        df.write.format("hudi").options(**options).mode(mode).save(path)
        return {"instants": completed_instants(path)}

    def compact(self, path: str, options: dict | None = None) -> dict:
        # RunCompactionProcedure: op 'scheduleandexecute' schedules a compaction plan and runs it
        args = f"op => 'scheduleandexecute', path => {sql_literal(path)}"
        if options:
            args += f", options => {sql_literal(procedure_options(options))}"
        self.spark.sql(f"CALL run_compaction({args})").collect()
        return {"instants": completed_instants(path)}

    def clean(self, path: str, options: dict | None = None) -> dict:
        # RunCleanProcedure (0.15) takes a catalog table, not a path: the table is registered first
        self.tables += 1
        name = f"oracle_clean_{self.tables}"
        self.spark.sql(f"CREATE TABLE {name} USING hudi LOCATION {sql_literal(path)}")
        args = f"table => '{name}'"
        if options:
            args += f", options => {sql_literal(procedure_options(options))}"
        try:
            self.spark.sql(f"CALL run_clean({args})").collect()
        finally:
            # an external table: dropping it leaves the files alone
            self.spark.sql(f"DROP TABLE IF EXISTS {name}")
        return {"instants": completed_instants(path)}

    def partition_paths(self, options: dict, values: list, kind: str) -> dict:
        jvm = self.spark._jvm
        props = jvm.org.apache.hudi.common.config.TypedProperties()
        fields = {"hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "v"}
        for key, value in {**fields, **options}.items():
            props.setProperty(key, value)
        generator = jvm.org.apache.hudi.keygen.TimestampBasedAvroKeyGenerator(props)
        box = {"long": jvm.java.lang.Long.valueOf, "double": jvm.java.lang.Double.valueOf, "string": str}[kind]
        paths = []
        for value in values:
            try:
                given = generator.getDefaultPartitionVal() if value is None else box(value)
                paths.append(generator.getPartitionPath(given))
            except Exception as exc:  # Java's refusal of this value, in its place
                java = getattr(exc, "java_exception", None)
                paths.append("ERROR: " + (str(java.toString()) if java is not None else str(exc)))
        return {"paths": paths}

    def sql(self, sql: str, out: str | None = None) -> dict:
        df = self.spark.sql(sql)
        if out is None:
            return {"rows": len(df.collect())}
        return {"rows": save_result(df, out)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", required=True, help="the hudi-spark3.5-bundle jar")
    parser.add_argument("--warehouse", required=True, help="spark.sql.warehouse.dir (a scratch folder)")
    args = parser.parse_args()

    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr

    spark = session(args.bundle, args.warehouse)
    ready = {"ok": True, "ready": True, "spark": spark.version, "bundle": os.path.basename(args.bundle)}
    answers.write(json.dumps(ready) + "\n")
    oracle = Oracle(spark)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        command = request.pop("cmd")
        try:
            if command == "stop":
                break
            if command not in COMMANDS:
                raise ValueError(f"unknown command {command!r}; one of {sorted(COMMANDS)}")
            answer = {"ok": True, **getattr(oracle, command)(**request)}
        except Exception as exc:  # every failure goes back to the caller, with Java's text
            java = getattr(exc, "java_exception", None)
            text = str(java) if java is not None else f"{type(exc).__name__}: {exc}"
            traceback.print_exc(file=sys.stderr)
            answer = {"ok": False, "error": text, "error_class": type(exc).__name__}
        answers.write(json.dumps(answer) + "\n")
    spark.stop()


if __name__ == "__main__":
    main()
