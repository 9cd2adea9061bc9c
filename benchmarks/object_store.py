"""What table operations cost on an object store: requests (LIST, GET, HEAD, PUT, POST, DELETE, counted
from the S3 server's access log) and time, on S3 (moto on loopback) against the same table on local disk.

    python benchmarks/object_store.py                    # 300,000 rows; writes benchmarks/results/object_store.md
    python benchmarks/object_store.py --rows 30000 --name object_store_smoke

The S3 tables are addressed as ``s3a://``, as Hudi users address them, in a session that has hadoop-aws's S3A on
its class path (``make hadoop-aws``) and the bucket's ``fs.s3a.*`` settings from its start: the jvm-shim hands
their base files to Spark's parquet scan, which reads them through S3A, as it reads local ones.

On an object store listing is the cost: every LIST, GET and HEAD is a round trip (tens of ms on a real
cloud, where moto on loopback answers in about 2 ms), so the figures that matter are the request counts;
the times show moto's own latency plus ours. Measured in one local[2] session with the jvm-shim
(``benchmarks/spark_session.py``), on a 30-partition trips table (``benchmarks/workload.py``):

1. copy-on-write upsert of ``--fraction`` of the rows (random keys: every partition's file is rewritten),
   on S3 and locally, interleaved, median of ``--runs``; the target is S3 at most 1.5x local;
2. snapshot read (count and sum of a column: every base file is read), Spark's parquet scan reading the base
   files (through S3A on S3), and the same with every row read by our Python reader
   (``spark.hoodie.read.native=false``, which is also how S3 tables are read where Spark has no S3A or not the
   table's settings); the incremental read of the last commit;
3. the same for a merge-on-read table (its upsert appends log files);
4. a snapshot read after 5 and after 20 commits (one-row upserts into one partition, so the read reads
   the same 30 files): its requests should grow with the files it reads, not with the number of instants.
"""

from __future__ import annotations

import argparse
import logging
import os
import shlex
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tests.conftest  # noqa: E402, F401 - imports tests.object_stores in the order it expects
from benchmarks import spark_session  # noqa: E402
from benchmarks.machine import load_average  # noqa: E402
from benchmarks.workload import KEY, ORDERING, PARTITION, SEED, base_table, stored_trips  # noqa: E402
from hoodie_datasource import HoodieTable  # noqa: E402
from tests.hadoop_aws import s3a_bucket_keys, s3a_jars  # noqa: E402
from tests.object_stores import S3Bucket, Server, new_s3_bucket, start_moto  # noqa: E402

logger = logging.getLogger("benchmarks.object_store")
RESULTS = Path(__file__).resolve().parent / "results"
VERBS = ("LIST", "GET", "HEAD", "PUT", "POST", "DELETE")
TARGET_RATIO = 1.5


@dataclass
class Place:
    """One copy of a table: on S3 (``server`` counts its requests) or on local disk."""

    name: str
    uri: str
    options: dict[str, str]
    server: Server | None = None

    def table(self) -> HoodieTable:
        return HoodieTable(self.uri, {k: v for k, v in self.options.items() if k.startswith("hoodie.storage.")})


@dataclass
class Figure:
    operation: str
    seconds: dict[str, float] = field(default_factory=dict)  # per place
    requests: Counter = field(default_factory=Counter)  # on S3


def measured(place: Place, run: Callable[[], object]) -> tuple[float, Counter]:
    mark = place.server.mark() if place.server else 0
    start = time.perf_counter()
    run()
    seconds = time.perf_counter() - start
    return seconds, place.server.requests_since(mark) if place.server else Counter()


def write_options(table_type: str) -> dict[str, str]:
    return {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": KEY,
            "hoodie.datasource.write.precombine.field": ORDERING,
            "hoodie.datasource.write.partitionpath.field": PARTITION, "hoodie.datasource.write.table.type": table_type}


def write(df: DataFrame, place: Place, table_type: str, mode: str) -> None:
    df.write.format("hoodie").options(**write_options(table_type), **place.options).mode(mode).save(place.uri)


def read_all(spark: SparkSession, place: Place, python_reader: bool = False, **read: str) -> None:
    """Count and sum a column: every file of the read is read (``python_reader``: all by our Python reader)."""
    df = spark.read.format("hoodie").options(**place.options, **read).load(place.uri)
    if python_reader:
        spark_session.python_reader(spark, lambda: df.agg(F.count("*"), F.sum("fare")).collect())
    else:
        df.agg(F.count("*"), F.sum("fare")).collect()


def warm_native_snapshot(spark: SparkSession, place: Place) -> None:
    """One uncounted snapshot read (on S3 it makes Spark's S3A file system of the bucket, which takes seconds
    once per JVM), after checking that its base files go to Spark's parquet scan under the place's own URI
    scheme (``s3a://`` on S3): else the figures would measure the Python reader's fallback."""
    df = spark.read.format("hoodie").options(**place.options).load(place.uri)
    plan = df._jdf.queryExecution().executedPlan().toString()
    scheme = place.uri.split("://")[0] + "://" if "://" in place.uri else "file:"
    if "FileScan parquet" not in plan or not all(f.startswith(scheme) for f in df.inputFiles()):
        raise RuntimeError(f"the snapshot read of {place.uri} is not Spark's parquet scan of its files: {plan}")
    read_all(spark, place)


def batch(spark: SparkSession, rows: int, fraction: float, version: int) -> DataFrame:
    rng = np.random.default_rng(version)
    ids = rng.choice(np.arange(rows, dtype=np.int64), int(rows * fraction), replace=False)
    df = spark.createDataFrame(stored_trips(ids, version, version, False).to_pandas()).cache()
    df.count()
    return df


def table_operations(spark: SparkSession, places: list[Place], table_type: str, rows: int, fraction: float,
                     runs: int) -> list[Figure]:
    label = "copy-on-write" if table_type == "COPY_ON_WRITE" else "merge-on-read"
    base = spark.createDataFrame(base_table(rows, SEED).to_pandas()).cache()
    base.count()
    create, upsert, snap, python_snap, incr = (Figure(f"{label}: {what}") for what in (
        f"bulk insert of {rows:,} rows", f"upsert of {fraction:.0%} of the rows (median of {runs})",
        f"snapshot read, Spark's parquet scan (count, sum; median of {runs})",
        f"snapshot read, Python reader (count, sum; median of {runs})",
        f"incremental read of the last commit (median of {runs})"))
    for place in places:
        create.seconds[place.name], counts = measured(place, lambda p=place: write(base, p, table_type, "overwrite"))
        create.requests += counts
    timings: dict[str, list[float]] = {p.name: [] for p in places}
    for version in range(1, runs + 1):
        updates = batch(spark, rows, fraction, version)
        for place in places:  # interleaved: load on the shared machine lands on both alike
            seconds, counts = measured(place, lambda p=place, u=updates: write(u, p, table_type, "upsert"))
            timings[place.name].append(seconds)
            if place.server is not None and version == 1:
                upsert.requests = counts
        updates.unpersist()
    upsert.seconds = {name: statistics.median(values) for name, values in timings.items()}
    last = {p.name: {"hoodie.datasource.query.type": "incremental",
                     "hoodie.datasource.read.begin.instanttime": p.table().completed_commits()[-2]} for p in places}
    for place in places:
        warm_native_snapshot(spark, place)
    for figure in (snap, python_snap, incr):
        read_times: dict[str, list[float]] = {p.name: [] for p in places}
        for _ in range(runs):
            for place in places:
                options = last[place.name] if figure is incr else {}
                seconds, counts = measured(place, lambda p=place, o=options, py=figure is python_snap:
                                           read_all(spark, p, py, **o))
                read_times[place.name].append(seconds)
                if place.server is not None and not figure.requests:  # the first read: no plan cached
                    figure.requests = counts
        figure.seconds = {name: statistics.median(values) for name, values in read_times.items()}
    base.unpersist()
    return [create, upsert, snap, python_snap, incr]


def growth(spark: SparkSession, place: Place, rows: int, marks: list[int]) -> list[Figure]:
    """Snapshot reads of the copy-on-write table once it has each number of commits in ``marks``."""
    figures = []
    one_row = spark.createDataFrame(stored_trips(np.array([0], dtype=np.int64), 100, 100, False).to_pandas())
    for wanted in marks:
        while len(place.table().completed_commits()) < wanted:
            write(one_row, place, "COPY_ON_WRITE", "upsert")
        figure = Figure(f"copy-on-write: snapshot read after {wanted} commits")
        figure.seconds[place.name], figure.requests = measured(place, lambda: read_all(spark, place))
        figures.append(figure)
    return figures


def report(figures: list[Figure], args: argparse.Namespace, command: str, loads: tuple[str, str]) -> str:
    lines = [f"# Table operations on S3 (moto on loopback) and on local disk, {args.rows:,} rows in 30 partitions", "",
             f"`{command}`", "", f"Load average (1, 5, 15 min) before the run: {loads[0]}; after: {loads[1]} "
             f"({os.cpu_count()} cores).", "",
             "Requests are counted on S3 from the server's access log (LIST is a listing GET). Times in seconds; "
             "moto answers a request in about 2 ms on loopback, a real store in 10-50 ms.", "",
             "| operation | S3 s | local s | S3 / local | " + " | ".join(VERBS) + " |",
             "|---|---:|---:|---:|" + "---:|" * len(VERBS)]
    for f in figures:
        s3, local = f.seconds.get("S3"), f.seconds.get("local")
        ratio = f"{s3 / local:.2f}x" if s3 and local else ""
        shown = [f"{v:.2f}" if v is not None else "" for v in (s3, local)]
        lines.append(f"| {f.operation} | {shown[0]} | {shown[1]} | {ratio} | "
                     + " | ".join(str(f.requests.get(v, 0)) for v in VERBS) + " |")
    upsert = next(f for f in figures if f.operation.startswith("copy-on-write: upsert"))
    ratio = upsert.seconds["S3"] / upsert.seconds["local"]
    after = [f for f in figures if "after" in f.operation]
    scans = {label: [f.seconds["S3"] for f in figures if f.operation.startswith(f"{label}: snapshot read, ")]
             for label in ("copy-on-write", "merge-on-read")}
    lines += ["", "On S3, Spark's parquet scan through S3A against our Python reader (snapshot read): "
              + ", ".join(f"{label} {spark_s:.2f} s against {python_s:.2f} s ({spark_s / python_s:.2f}x the Python "
                          "reader's time)" for label, (spark_s, python_s) in scans.items()) + ".",
              "", "Targets:", "",
              f"- copy-on-write upsert on S3 at most {TARGET_RATIO}x local: {ratio:.2f}x, "
              f"{'met' if ratio <= TARGET_RATIO else 'not met'}",
              "- a snapshot read's requests do not grow with the number of instants (it reads the same 30 files; "
              "one footer per commit that wrote them): "
              + ", ".join(f"{f.operation.rsplit('after ', 1)[1]}: {sum(f.requests.values())}" for f in after)
              + (", met" if sum(after[-1].requests.values()) <= sum(after[0].requests.values()) else ", not met")]
    if args.note:
        lines += ["", args.note]
    return "\n".join(lines) + "\n"


def s3a_session(bucket: S3Bucket) -> dict[str, str]:
    """Settings of a session whose Spark reads the bucket through S3A: hadoop-aws on the JVM's class path and the
    bucket's settings as ``spark.hadoop.fs.s3a.bucket.<bucket>.*`` (S3A's and our storage's alike)."""
    jars = s3a_jars()
    if not jars:
        raise SystemExit("hadoop-aws (Spark's s3a:// file system) is not installed: run `make hadoop-aws` (needs mvn)")
    return {"spark.driver.extraClassPath": os.pathsep.join(map(str, jars)),
            **{f"spark.hadoop.{key}": value for key, value in s3a_bucket_keys(bucket.uri(), bucket.options).items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--fraction", type=float, default=0.1, help="share of the rows an upsert updates")
    parser.add_argument("--runs", type=int, default=3, help="upserts measured (median of)")
    parser.add_argument("--commits", default="5,20", help="snapshot reads after this many commits")
    parser.add_argument("--name", default="object_store")
    parser.add_argument("--note", default="")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    command = shlex.join(["python", "benchmarks/object_store.py", *sys.argv[1:]])
    load_before = load_average()
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory() as work:
        server = start_moto(Path(work))
        spark = None
        try:
            bucket = new_s3_bucket(server)
            spark = spark_session.start("hoodie-object-store", driver_memory="4g", conf=s3a_session(bucket))
            for table_type, key in (("COPY_ON_WRITE", "cow"), ("MERGE_ON_READ", "mor")):
                places = [Place("S3", f"s3a://{bucket.name}/{key}", bucket.options, server),
                          Place("local", str(Path(work) / key), {})]
                figures += table_operations(spark, places, table_type, args.rows, args.fraction, args.runs)
                logger.info("%s done", table_type)
            cow = Place("S3", f"s3a://{bucket.name}/cow", bucket.options, server)
            figures += growth(spark, cow, args.rows, [int(n) for n in args.commits.split(",")])
        finally:
            server.stop()
            if spark is not None:
                spark.stop()
    text = report(figures, args, command, (load_before, load_average()))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
