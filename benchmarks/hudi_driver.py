"""Apache Hudi's Spark bundle as a benchmark peer: one long-lived Spark 3.5 session answering timed commands.

Run by the Hudi venv's python (``.tools/hudi-oracle/venv``, pyspark 3.5; ``make oracle`` makes it), never by
ours, and imports nothing of this repository: ``benchmarks/peer_hudi.py`` starts it and sends one JSON command a
line on stdin; each answer is one JSON line on stdout::

    {"cmd": "stage", "name": N, "path": FILE}                       -> {"ok": true, "rows": R, "partitions": P}
    {"cmd": "unstage", "name": N}                                   -> {"ok": true}
    {"cmd": "write", "name": N, "path": P, "options": {...}}        -> {"ok": true, "seconds": S}
    {"cmd": "read", "path": P, "options": {...}, "action": A}       -> {"ok": true, "seconds": S, ...}
    {"cmd": "phases", "path": P, "options": {...}, "action": A}     -> {"ok": true, "resolve": S, "plan": S, "run": S}

``stage`` reads a parquet file into a cached DataFrame (counted, so it is in memory) kept under ``name``:
``write`` then times only Hudi's ``df.write.format("hudi")...save(path)`` of it, as our side times its write of
a cached DataFrame. ``read`` times ``spark.read.format("hudi")`` and then, by ``action``: ``scan`` (every row to
Spark's ``noop`` sink) or ``aggregate`` (``count(*)``, ``sum(fare)`` collected; the answer carries ``count``
and ``sum``). ``phases`` splits such a read (``benchmarks/read_phases.py``): ``resolve`` is ``load()`` (the
relation and its schema), ``plan`` Spark's physical plan of the query (the file listing), ``run`` the action on
that plan (a scan counts the plan's rows, as the ``noop`` sink reads them). Seconds are ``time.perf_counter``
around the operation in this process, so neither the pipe nor the JSON is in them. A failure answers
``{"ok": false, "error": ...}`` and the process goes on.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback

# Hudi's quick start for Spark 3.5: Kryo with Hudi's registrator, its SQL session extension and catalog
HUDI_SPARK_CONF = {
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
}
AGGREGATE = ("count(*)", "sum(fare)")


def start_session(bundle: str, driver_memory: str, shuffle_partitions: int):
    """local[2] with the settings of our benchmark session (``benchmarks/spark_session.py``) and Hudi's."""
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master("local[2]").appName("hudi-bench")
               .config("spark.jars", bundle)
               .config("spark.driver.memory", driver_memory)
               .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.session.timeZone", "UTC"))
    for key, value in HUDI_SPARK_CONF.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class Peer:
    def __init__(self, spark):
        self.spark = spark
        self.staged = {}

    def stage(self, name: str, path: str) -> dict:
        df = self.spark.read.parquet(path).cache()
        self.staged[name] = df
        return {"rows": df.count(), "partitions": df.rdd.getNumPartitions()}

    def unstage(self, name: str) -> dict:
        self.staged.pop(name).unpersist()
        return {}

    def write(self, name: str, path: str, options: dict) -> dict:
        df = self.staged[name]
        started = time.perf_counter()
        df.write.format("hudi").options(**options).mode("append").save(path)
        return {"seconds": time.perf_counter() - started}

    def read(self, path: str, options: dict, action: str) -> dict:
        started = time.perf_counter()
        df = self.spark.read.format("hudi").options(**options).load(path)
        if action == "scan":
            df.write.format("noop").mode("overwrite").save()
            return {"seconds": time.perf_counter() - started}
        if action != "aggregate":
            raise ValueError(f"unknown read action {action!r}; one of scan, aggregate")
        count, total = df.selectExpr(*AGGREGATE).collect()[0]
        return {"seconds": time.perf_counter() - started, "count": count, "sum": total}


    def phases(self, path: str, options: dict, action: str) -> dict:
        return read_phases(self.spark, "hudi", path, options, action)


def read_phases(spark, source: str, path: str, options: dict, action: str) -> dict:
    """A read of ``path`` by the data source ``source`` timed in three phases (``benchmarks/read_phases.py``)."""
    started = time.perf_counter()
    df = spark.read.format(source).options(**options).load(path)
    resolved = time.perf_counter()
    query = df.selectExpr(*AGGREGATE) if action == "aggregate" else df
    execution = query._jdf.queryExecution()
    execution.executedPlan()
    planned = time.perf_counter()
    if action == "aggregate":
        query.collect()  # on the query execution just planned
    else:
        execution.toRdd().count()  # every row, as Spark's noop sink reads them
    return {"resolve": resolved - started, "plan": planned - resolved, "run": time.perf_counter() - planned}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", required=True, help="the hudi-spark3.5-bundle jar")
    parser.add_argument("--driver-memory", default="8g")
    parser.add_argument("--shuffle-partitions", type=int, default=8)
    args = parser.parse_args()

    # the JVM and Spark print to stdout too: answers get a descriptor of their own, the rest goes to stderr
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr

    spark = start_session(args.bundle, args.driver_memory, args.shuffle_partitions)
    jvm = spark.sparkContext._jvm
    answers.write(json.dumps({"ok": True, "spark": spark.version, "java": jvm.java.lang.System.getProperty("java.version"),
                              "jvm_pid": int(jvm.java.lang.ProcessHandle.current().pid())}) + "\n")
    peer = Peer(spark)
    commands = {"stage": peer.stage, "unstage": peer.unstage, "write": peer.write, "read": peer.read,
                "phases": peer.phases}
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        command = request.pop("cmd")
        if command == "stop":
            break
        try:
            if command not in commands:
                raise ValueError(f"unknown command {command!r}; one of {sorted(commands)} or stop")
            answer = {"ok": True, **commands[command](**request)}
        except Exception as exc:  # the caller gets Java's text; this process serves the next command
            java = getattr(exc, "java_exception", None)
            traceback.print_exc(file=sys.stderr)
            answer = {"ok": False, "error": str(java) if java is not None else f"{type(exc).__name__}: {exc}"}
        answers.write(json.dumps(answer) + "\n")
    spark.stop()


if __name__ == "__main__":
    main()
