"""Planning from the metadata table against listing storage, on a table of many partitions and files on S3 (moto's
server on loopback, ``tests/object_stores.py``): a snapshot read's plan and an upsert's candidate files, each with
the metadata table (``hoodie.metadata.enable``, the default) and with ``hoodie.metadata.enable=false``.

    python benchmarks/metadata_planning.py                          # 1,000 partitions x 100 files
    python benchmarks/metadata_planning.py --partitions 50 --files 10 --name metadata_planning_smoke
    python benchmarks/metadata_planning.py --serve        # build the table, keep moto serving it (Ctrl-C ends it)
    python benchmarks/metadata_planning.py --on URL,LOG,BUCKET,SECONDS  # measure the table --serve built

The table is one our writer wrote, its metadata table kept by those commits: ``--commits`` local-engine bulk
inserts, each into its share of the partitions, one row a file (``hoodie.parquet.max.file.size=1``: a bulk insert
rolls to a new file after every row; ``hoodie.index.bloom.num_entries=100`` sizes its footer's bloom filter for
it), then ``--upserts`` upserts of one row each, so that the last commit is an
ordinary one and the metadata table holds what its own compaction (every 10 deltacommits) left: a base HFile and
log files. What is timed, in this process (medians of ``--repeats`` runs, metadata table and listing taking turns):

- ``snapshot``: a snapshot read's plan (``read.table_reader.table_for`` and ``read.planner.plan_read``: the table
  handle, its schema and the latest file slice of every file group of every partition);
- ``spark schema``: ``spark.read.format("hoodie").load(uri).schema`` (the Python data source plans the read there,
  in a Python worker of a local[2] session), with ``--spark``;
- ``upsert``: an upsert's plan of a batch, up to the files its tagging reads: the write's table handle
  (``Table.load``; with the metadata table, what ``write_client.start_write`` does with it under the lock before
  the write's instant: ``prepare_metadata_table``'s check that it can be trusted, which opens it, and
  ``run_metadata_table_services``, which finds none due) and the latest file slices of the batch's partitions (what
  ``RecordWriter.key_ranges`` hands the index, which then reads their footers); of a batch into 10 partitions, and
  of one spread over every partition (late data backfilled across the whole table).

Requests are counted from moto's access log, by verb and by what they touch: data partitions, ``.hoodie`` (the
timeline) and ``.hoodie/metadata``. moto answers a request in a few milliseconds on loopback and lists a bucket of
many objects slower than S3 does (it filters every key of the bucket per page), so the counts are what carries over
to a real store; the seconds are this machine's, shared with other work.
"""

from __future__ import annotations

import argparse
import logging
import shlex
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tests.conftest  # noqa: E402, F401 - first: tests.object_stores imports from it
from benchmarks.machine import load_average  # noqa: E402
from benchmarks.markdown import markdown_table  # noqa: E402
from hoodie_datasource.client.local_engine import write_local  # noqa: E402
from hoodie_datasource.config.metadata_config import resolve_metadata_config  # noqa: E402
from hoodie_datasource.config.read_config import ReadConfig  # noqa: E402
from hoodie_datasource.config.services_config import ServicesConfig  # noqa: E402
from hoodie_datasource.metadata.file_slices import latest_merged_slices  # noqa: E402
from hoodie_datasource.metadata.reader import planning_from_metadata  # noqa: E402
from hoodie_datasource.metadata.records import MetadataPartition  # noqa: E402
from hoodie_datasource.metadata.timeline import MetadataTimeline  # noqa: E402
from hoodie_datasource.read.planner import plan_read  # noqa: E402
from hoodie_datasource.read.table_reader import table_for  # noqa: E402
from hoodie_datasource.services.metadata_lifecycle import prepare_metadata_table  # noqa: E402
from hoodie_datasource.services.metadata_table_services import run_metadata_table_services  # noqa: E402
from hoodie_datasource.table.table import Table  # noqa: E402
from tests.object_stores import S3Bucket, Server, new_s3_bucket, start_moto  # noqa: E402

logger = logging.getLogger("benchmarks.metadata_planning")
RESULTS = Path(__file__).resolve().parent / "results"
KEY = "trips"
# a file of one row needs no bloom filter sized for 60,000 keys (430 KB a footer: 43 GB in moto's memory)
OPTIONS = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "uuid",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "day",
           "hoodie.index.bloom.num_entries": "100"}
MODES = {"metadata table": "true", "listing": "false"}
UPSERT_PARTITIONS = 10


def partition(p: int) -> str:
    return f"day={p:05d}"


def rows(partitions: range, per_partition: int, ts: int) -> pa.Table:
    """``per_partition`` trips in each of ``partitions``."""
    p = np.repeat(np.arange(partitions.start, partitions.stop), per_partition)
    i = np.tile(np.arange(per_partition), len(partitions))
    return pa.table({"uuid": [f"{a}-{b}" for a, b in zip(p.tolist(), i.tolist())],
                     "ts": pa.array(np.full(len(p), ts, np.int64)),
                     "fare": pa.array(np.round(np.random.default_rng(ts).random(len(p)) * 100, 2)),
                     "day": [partition(a) for a in p.tolist()]})


def build(uri: str, options: dict[str, str], partitions: int, files: int, commits: int, upserts: int) -> float:
    """The table: ``commits`` bulk inserts of one row a file, then ``upserts`` single-row upserts; its seconds."""
    started = time.perf_counter()
    bounds = np.linspace(0, partitions, commits + 1).astype(int)
    for c in range(commits):
        write_local(uri, rows(range(bounds[c], bounds[c + 1]), files, c + 1),
                    {**options, "hoodie.datasource.write.operation": "bulk_insert", "hoodie.parquet.max.file.size": "1"})
        logger.info("bulk insert %d of %d: partitions %d-%d (%.0f s)", c + 1, commits, bounds[c], bounds[c + 1] - 1,
                    time.perf_counter() - started)
    for u in range(upserts):
        write_local(uri, rows(range(u, u + 1), 1, 1000 + u), {**options, "hoodie.datasource.write.operation": "upsert"})
    return time.perf_counter() - started


def folder(target: str) -> str:
    """What a request's key (or a LIST's prefix) touches: the metadata table, the timeline, or data partitions."""
    inside = target.split(f"/{KEY}/", 1)[1] if f"/{KEY}/" in target else target.split(f"{KEY}/", 1)[-1]
    if inside.startswith(".hoodie/metadata"):
        return ".hoodie/metadata"
    return ".hoodie" if inside.startswith(".hoodie") else "data"


def requests_by_folder(server: Server, mark: int) -> Counter:
    counts: Counter = Counter()
    for verb, path in server.request_log_since(mark):
        split = urllib.parse.urlsplit(path)
        target = urllib.parse.parse_qs(split.query).get("prefix", [""])[0] if verb == "LIST" else split.path
        counts[(verb, "data" if verb == "LIST" and target in ("", f"{KEY}/") else folder(target))] += 1
    return counts


@dataclass
class Measured:
    seconds: list[float] = field(default_factory=list)
    requests: Counter = field(default_factory=Counter)  # of the last run
    detail: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def plan_snapshot(bucket: S3Bucket, metadata: str) -> str:
    cfg = ReadConfig(metadata_enable=metadata == "true")
    plan = plan_read(table_for(bucket.uri(KEY), cfg, bucket.options), cfg)
    return f"{len(plan.slices):,} file slices"


def plan_upsert(bucket: S3Bucket, metadata: str, partitions: list[str]) -> str:
    table = Table.load(bucket.uri(KEY), bucket.options)
    if metadata == "true":  # what a write does before it plans: open the metadata table, check it, run its services
        cfg = resolve_metadata_config({"hoodie.metadata.enable": metadata})
        table = run_metadata_table_services(prepare_metadata_table(table, cfg), cfg, ServicesConfig())
        table = planning_from_metadata(table)
    slices = table.file_system_view(partitions).latest_file_slices()
    return f"{len(slices):,} file slices in {len({s.partition_path for s in slices})} partitions"


def spark_schema(spark, bucket: S3Bucket, metadata: str) -> str:
    schema = spark.read.format("hoodie").options(**bucket.options, **{"hoodie.metadata.enable": metadata}) \
        .load(bucket.uri(KEY)).schema
    return f"{len(schema.fields)} columns"


def measure(server: Server, cases: dict[str, Callable[[str], str]], repeats: int) -> dict[tuple[str, str], Measured]:
    """Every case in both modes, ``repeats`` rounds, the modes taking turns within each case."""
    results: dict[tuple[str, str], Measured] = {}
    for name, run in cases.items():
        for _ in range(repeats):
            for mode, metadata in MODES.items():
                mark = server.mark()
                started = time.perf_counter()
                detail = run(metadata)
                elapsed = time.perf_counter() - started
                measured = results.setdefault((name, mode), Measured())
                measured.seconds.append(elapsed)
                measured.requests = requests_by_folder(server, mark)
                measured.detail = detail
                logger.info("%s, %s: %.2f s (%s)", name, mode, elapsed, detail)
    return results


def request_text(counts: Counter) -> str:
    return ", ".join(f"{n} {verb} {where}" for (verb, where), n in sorted(counts.items())) or "none"


def report(args: argparse.Namespace, results: dict[tuple[str, str], Measured], built: float, table_facts: str,
           command: str, loads: tuple[str, str]) -> str:
    lines = [f"# Planning from the metadata table: {args.partitions:,} partitions x {args.files} files on S3 (moto)",
             "", f"`{command}`", "",
             f"The table ({args.partitions * args.files:,} base files, one row each; {table_facts}) was built by "
             f"{args.commits} local-engine bulk inserts and {args.upserts} upserts in {built:,.0f} s. "
             f"Medians of {args.repeats} runs, each mode in turn; requests of the last run. The machine (2 cores) was "
             f"shared with other engineers' work: load average {loads[0]} before, {loads[1]} after.", ""]
    rows = []
    cases = sorted({name for name, _ in results}, key=list(dict.fromkeys(n for n, _ in results)).index)
    for name in cases:
        ours, listed = results[(name, "metadata table")], results[(name, "listing")]
        for mode, measured in (("metadata table", ours), ("listing", listed)):
            lists = sum(n for (verb, where), n in measured.requests.items() if verb == "LIST" and where == "data")
            rows.append([name, mode, f"{measured.median:.2f}", ", ".join(f"{s:.2f}" for s in measured.seconds),
                         lists, request_text(measured.requests), measured.detail])
        rows.append([name, "**listing / metadata table**", f"**{listed.median / ours.median:.1f}x**", "", "", "", ""])
    lines += markdown_table(["plan", "files from", "seconds (median)", "runs", "LISTs of data partitions",
                             "requests (verb, folder)", "planned"], rows)
    return "\n".join(lines) + "\n"


def table_shape(bucket: S3Bucket) -> str:
    """The metadata table's files partition as the planning read it: base file and log files."""
    storage = Table.load(bucket.uri(KEY), bucket.options).storage
    slices = latest_merged_slices(storage, MetadataTimeline.load(storage), MetadataPartition.FILES)
    base = sum(s.base_file.size for s in slices if s.base_file is not None)
    logs = [log for s in slices for log in s.log_files]
    return (f"the metadata table's files partition: {len(slices)} file group, a {base / 1e6:.1f} MB base HFile and "
            f"{len(logs)} log files of {sum(log.size for log in logs) / 1e6:.1f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--files", type=int, default=100, help="base files a partition")
    parser.add_argument("--commits", type=int, default=10, help="bulk inserts building the table")
    parser.add_argument("--upserts", type=int, default=3, help="single-row upserts after them")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--spark", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--name", default="metadata_planning")
    parser.add_argument("--serve", action="store_true",
                        help="build the table, print what --on takes, and keep the S3 server serving it")
    parser.add_argument("--on", help="URL,LOG,BUCKET,SECONDS --serve printed: measure the table it built")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    for noisy in ("hoodie_datasource", "py4j"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    command = "python benchmarks/metadata_planning.py " + shlex.join(sys.argv[1:])
    loads = [load_average()]
    with tempfile.TemporaryDirectory() as work:
        if args.on:
            url, log, name, seconds = args.on.split(",")
            server = Server.attached(url, Path(log))
            bucket, built = S3Bucket(name, server), float(seconds)
        else:
            server = start_moto(Path(work))
        try:
            if not args.on:
                bucket = new_s3_bucket(server)
                built = build(bucket.uri(KEY), {**OPTIONS, **bucket.options}, args.partitions, args.files,
                              args.commits, args.upserts)
            if args.serve:
                print(f"Built; measure with --on {server.url},{server.log_path},{bucket.name},{built:.0f}", flush=True)
                while True:
                    time.sleep(60)
            wanted = [partition(p) for p in np.linspace(0, args.partitions - 1, UPSERT_PARTITIONS).astype(int)]
            every = [partition(p) for p in range(args.partitions)]
            cases: dict[str, Callable[[str], str]] = {
                "snapshot": lambda metadata: plan_snapshot(bucket, metadata),
                f"upsert into {len(set(wanted))} partitions": lambda metadata: plan_upsert(bucket, metadata, wanted),
                f"upsert into every partition ({len(every):,})": lambda metadata: plan_upsert(bucket, metadata, every),
            }
            spark = None
            if args.spark:
                from benchmarks.spark_session import start
                spark = start("metadata-planning")
                cases["spark schema"] = lambda metadata: spark_schema(spark, bucket, metadata)
            try:
                results = measure(server, cases, args.repeats)
            finally:
                if spark is not None:
                    spark.stop()
            facts = table_shape(bucket)
        finally:
            server.stop()
    loads.append(load_average())
    text = report(args, results, built, facts, command, (loads[0], loads[1]))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
