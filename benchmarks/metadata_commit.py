"""What the metadata table adds to a commit: each commit's time with the metadata table off, with its ``files``
partition alone, and with ``files`` and each other partition (``column_stats``, ``bloom_filters``,
``record_index``), on local disk and on S3 (moto on loopback, ``tests/object_stores.py``).

    python benchmarks/metadata_commit.py                  # writes benchmarks/results/metadata_commit.md
    python benchmarks/metadata_commit.py --rows 20000 --commits 4 --name metadata_commit_smoke

For each place and configuration a table of ``--rows`` trips over 30 day partitions is bulk-inserted (the first
write, which also builds the metadata table: timed apart), then ``--commits`` upserts run, each updating
``--updates`` of the rows (drawn evenly: every day's file group is rewritten, or appended to on merge-on-read) and
inserting as many new keys as it updates (the record index has keys to add). On merge-on-read small files take no
inserts (``hoodie.parquet.small.file.limit=0``), so the updates append log files and the inserts open new file groups
(with BLOOM, Hudi too rewrites a small file's slice that takes inserts). The configurations take turns commit
by commit, so a busy moment of the shared machine falls on all of them. Every write runs on the library's local
engine (pyarrow in this process, no JVM): the metadata table's records are written by the driver in either engine,
and the values the tasks carry (column statistics from the written footers, bloom filters, record keys) are part
of the write stage here as in Spark's tasks.

Per commit: its wall time, the part spent applying it to the metadata table (``sync_commit``, under the commit's
lock), and the part spent on the metadata table before the write (its preparation and table services: compaction
after ``hoodie.metadata.compact.max.delta.commits``, clean, archival); on S3 also the requests the commit makes
(counted from moto's access log). The metadata table's compaction falls on one commit of ten, so the mean carries
its cost spread over the commits and the median the common commit. Afterwards each local table's metadata table
is checked against a listing of its committed files (and its record index against its keys).
"""

from __future__ import annotations

import argparse
import logging
import shlex
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tests.conftest  # noqa: E402, F401 - first: tests.object_stores imports from it
from benchmarks.machine import load_average  # noqa: E402
from benchmarks.markdown import markdown_table  # noqa: E402
from benchmarks.workload import (  # noqa: E402  # noqa: E402
    DAYS,
    INSERT_ID_BASE,
    INSERTS_START_MS,
    KEY,
    ORDERING,
    PARTITION,
    SEED,
    base_table,
    stored_trips,
    trips,
)
from hoodie_datasource.client import write_client  # noqa: E402
from hoodie_datasource.client.local_engine import write_local  # noqa: E402
from tests.metadata_checks import assert_metadata_table_true, assert_record_index_true  # noqa: E402
from tests.object_stores import new_s3_bucket, start_moto  # noqa: E402

logger = logging.getLogger("benchmarks.metadata_commit")
RESULTS = Path(__file__).resolve().parent / "results"
BASE = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": KEY,
        "hoodie.datasource.write.precombine.field": ORDERING, "hoodie.datasource.write.partitionpath.field": PARTITION}
CONFIGURATIONS = {
    "off": {"hoodie.metadata.enable": "false"},
    "files": {"hoodie.metadata.enable": "true"},
    "files + column_stats": {"hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "true"},
    "files + bloom_filters": {"hoodie.metadata.enable": "true", "hoodie.metadata.index.bloom.filter.enable": "true"},
    "files + record_index": {"hoodie.metadata.enable": "true", "hoodie.metadata.record.index.enable": "true"},
}
# the steps of a write that are the metadata table's, as ``write_client`` calls them
BEFORE_WRITE = ("prepare_metadata_table", "build_metadata_table", "run_metadata_table_services")
AT_COMMIT = "sync_commit"


@dataclass
class Series:
    """One configuration's commits at one place."""

    first_write: float = 0.0
    first_write_metadata: float = 0.0
    seconds: list[float] = field(default_factory=list)
    sync: list[float] = field(default_factory=list)
    before_write: list[float] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)
    verbs: Counter = field(default_factory=Counter)


class MetadataClock:
    """Seconds spent in the metadata table's steps of a write since the last ``take``: the write client's calls
    wrapped while the benchmark runs."""

    def __init__(self) -> None:
        self.spent = Counter()

    @contextmanager
    def installed(self) -> Iterator[None]:
        originals = {name: getattr(write_client, name) for name in (*BEFORE_WRITE, AT_COMMIT)}
        for name, call in originals.items():
            setattr(write_client, name, self._timed(name, call))
        try:
            yield
        finally:
            for name, call in originals.items():
                setattr(write_client, name, call)

    def _timed(self, name: str, call):
        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return call(*args, **kwargs)
            finally:
                self.spent[name] += time.perf_counter() - started
        return timed

    def take(self) -> tuple[float, float]:
        """(seconds before the write, seconds at the commit) since the last take."""
        spent, self.spent = self.spent, Counter()
        return sum(spent[name] for name in BEFORE_WRITE), spent[AT_COMMIT]


def upsert(rows: int, updates: float, commit: int) -> pa.Table:
    """``updates`` of the base table's trips drawn evenly, and as many new trips, none inserted before."""
    rng = np.random.default_rng(commit)
    count = int(rows * updates)
    updated = np.sort(rng.choice(np.arange(rows, dtype=np.int64), count, replace=False))
    fresh = np.arange(count, dtype=np.int64) + commit * count
    inserts = trips(INSERT_ID_BASE + fresh, fresh % DAYS, INSERTS_START_MS + fresh // DAYS, commit + 1, commit, False)
    return pa.concat_tables([stored_trips(updated, commit + 1, commit, False), inserts])


@dataclass
class Place:
    name: str
    root: str
    options: dict[str, str]
    server: object | None = None  # tests.object_stores.Server, counting S3 requests

    def uri(self, configuration: str) -> str:
        return f"{self.root}/{configuration.replace(' + ', '_')}"


def timed_write(place: Place, configuration: str, data: pa.Table, options: dict[str, str],
                clock: MetadataClock) -> tuple[float, float, float, Counter]:
    mark = place.server.mark() if place.server else None
    clock.take()
    started = time.perf_counter()
    write_local(place.uri(configuration), data, {**options, **place.options})
    seconds = time.perf_counter() - started
    before, sync = clock.take()
    verbs = place.server.requests_since(mark) if place.server else Counter()
    return seconds, before, sync, verbs


def measure(place: Place, args: argparse.Namespace, clock: MetadataClock) -> dict[str, Series]:
    options = {**BASE, "hoodie.datasource.write.table.type": args.table_type}
    if args.table_type == "MERGE_ON_READ":  # no small file takes inserts: updates append log files, as Hudi's with BLOOM
        options["hoodie.parquet.small.file.limit"] = "0"
    series = {name: Series() for name in CONFIGURATIONS}
    base = base_table(args.rows, SEED)
    warm_up = {**options, "hoodie.datasource.write.operation": "bulk_insert"}
    write_local(f"{place.root}/warm-up", base, {**warm_up, **place.options})  # imports, caches, connections
    clock.take()
    for name, config in CONFIGURATIONS.items():
        seconds, before, sync, _ = timed_write(
            place, name, base, {**options, **config, "hoodie.datasource.write.operation": "bulk_insert"}, clock)
        series[name].first_write, series[name].first_write_metadata = seconds, before + sync
        logger.warning("%s, %s: first write %.2f s (metadata table %.2f s)", place.name, name, seconds, before + sync)
    for commit in range(args.commits):
        batch = upsert(args.rows, args.updates, commit)
        for name, config in CONFIGURATIONS.items():
            seconds, before, sync, verbs = timed_write(place, name, batch, {**options, **config}, clock)
            found = series[name]
            found.seconds.append(seconds)
            found.before_write.append(before)
            found.sync.append(sync)
            found.requests.append(sum(verbs.values()))
            found.verbs.update(verbs)
        logger.warning("%s: commit %d done", place.name, commit + 1)
    return series


def check_local(place: Place) -> None:
    for name, config in CONFIGURATIONS.items():
        if config["hoodie.metadata.enable"] == "true":
            assert_metadata_table_true(place.uri(name))
        if "hoodie.metadata.record.index.enable" in config:
            assert_record_index_true(place.uri(name))


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:,.0f}"


def place_table(place: Place, series: dict[str, Series]) -> list[str]:
    off = series["off"]
    headers = ["configuration", "first write s (metadata table s)", "commit median s", "commit mean s",
               "commit max s", "+ vs off, median s", "+ vs off, mean s", "at commit median ms",
               "before write median ms (max)"]
    if place.server:
        headers += ["requests per commit (median)", "requests per commit by verb (mean)"]
    rows = []
    for name, found in series.items():
        median, mean = statistics.median(found.seconds), statistics.fmean(found.seconds)
        cells = [name, f"{found.first_write:.2f} ({found.first_write_metadata:.2f})", f"{median:.3f}", f"{mean:.3f}",
                 f"{max(found.seconds):.3f}", f"{median - statistics.median(off.seconds):+.3f}",
                 f"{mean - statistics.fmean(off.seconds):+.3f}", _ms(found.sync),
                 f"{_ms(found.before_write)} ({max(found.before_write) * 1000:,.0f})"]
        if place.server:
            per_commit = len(found.requests)
            cells += [f"{statistics.median(found.requests):.0f}",
                      ", ".join(f"{verb} {n / per_commit:.1f}" for verb, n in found.verbs.most_common())]
        rows.append(cells)
    return [f"## {place.name}", ""] + markdown_table(headers, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--updates", type=float, default=0.01, help="share of the rows a commit updates (and inserts)")
    parser.add_argument("--commits", type=int, default=12, help="upserts after the first write (past one compaction)")
    parser.add_argument("--table-type", default="COPY_ON_WRITE", choices=["COPY_ON_WRITE", "MERGE_ON_READ"])
    parser.add_argument("--places", default="local,s3", help="local, s3 or both")
    parser.add_argument("--name", default="metadata_commit")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s")
    command = shlex.join(["python", "benchmarks/metadata_commit.py", *sys.argv[1:]])
    load_before, clock = load_average(), MetadataClock()
    started = time.perf_counter()
    sections = []
    with tempfile.TemporaryDirectory() as work, clock.installed():
        if "local" in args.places:
            local = Place("local disk", str(Path(work) / "local"), {})
            sections += place_table(local, measure(local, args, clock))
            check_local(local)
        if "s3" in args.places:
            server = start_moto(Path(work))
            try:
                bucket = new_s3_bucket(server)
                s3 = Place("S3 (moto on loopback)", bucket.uri("tables"), bucket.options, server)
                sections += place_table(s3, measure(s3, args, clock))
            finally:
                server.stop()
    lines = [f"# The metadata table's cost per commit, {args.rows:,} rows ({args.table_type})", "", f"`{command}`", "",
             f"Each commit upserts {args.updates:.1%} of the rows (evenly drawn: all {DAYS} day partitions) and "
             f"inserts as many new trips; {args.commits} commits after the first write (a bulk_insert), the "
             "configurations taking turns. Local engine (pyarrow, no JVM). Columns: a commit's wall time (median, "
             "mean, max) and its difference from the metadata table off; the part spent at the commit applying it "
             "to the metadata table (`sync_commit`, under the lock); the part spent on the metadata table before "
             "the write (preparation, its compaction every 10 deltacommits, clean, archival). Those two are the "
             "metadata table's own work, timed apart; the wall-clock differences also carry the shared machine's "
             "noise (about 0.2 s either way) and, for the index partitions, what the write tasks collect.", "",
             f"Load average before: {load_before}; after: {load_average()}; "
             f"{(time.perf_counter() - started) / 60:.1f} minutes; 2 cores shared with other work.", ""]
    text = "\n".join(lines + sections) + "\n"
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
