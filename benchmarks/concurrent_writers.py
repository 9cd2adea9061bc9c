"""Two writers at once against one writer doing both batches: the throughput optimistic concurrency
control buys on disjoint partitions, and what its lock and conflict check cost.

    python benchmarks/concurrent_writers.py --rows 1000000 --runs 3

A base table of ``--rows`` trips over 30 day partitions; batch A updates ``--fraction`` of the trips of
days 0-14, batch B the same share of days 15-29 (disjoint partitions, so no conflict). Each run starts
from a fresh copy of the base table and times, wall clock:

* one writer: one process writes A, then B (single_writer mode);
* two writers: two processes write A and B at the same time (optimistic_concurrency_control with the
  storage-based lock, the default under OCC), started together; timed until both committed.

Both use the library's local engine (pyarrow in the writer's process, no JVM), so the comparison shows
the concurrency machinery and the parallelism, not Spark's start-up. The two tables must end equal.
Results: ``benchmarks/results/concurrent_writers.md``.
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.workload import DAYS, KEY, ORDERING, PARTITION, SEED, base_table, stored_trips  # noqa: E402
from hoodie_datasource.client.local_engine import write_local  # noqa: E402
from hoodie_datasource.read.table_reader import read_table  # noqa: E402

logger = logging.getLogger("benchmarks.concurrent_writers")
RESULTS = Path(__file__).resolve().parent / "results"
BASE = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": KEY,
        "hoodie.datasource.write.precombine.field": ORDERING, "hoodie.datasource.write.partitionpath.field": PARTITION,
        "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}
OCC = {**BASE, "hoodie.write.concurrency.mode": "optimistic_concurrency_control"}


def batch(rows: int, fraction: float, days: range, version: int) -> pa.Table:
    """Updates of ``fraction`` of the trips whose day is in ``days``."""
    ids = np.arange(rows, dtype=np.int64)
    ids = ids[np.isin(ids % DAYS, np.array(list(days)))]
    chosen = np.random.default_rng(version).choice(ids, int(len(ids) * fraction), replace=False)
    return stored_trips(np.sort(chosen), version, version, False)


def _write(path: str, data: pa.Table, options: dict[str, str], start: multiprocessing.Event) -> None:
    start.wait()
    write_local(path, data, options)


def one_writer(path: str, a: pa.Table, b: pa.Table) -> float:
    started = time.perf_counter()
    write_local(path, a, BASE)
    write_local(path, b, BASE)
    return time.perf_counter() - started


def two_writers(path: str, a: pa.Table, b: pa.Table) -> float:
    context = multiprocessing.get_context("spawn")  # a fork of a process running Arrow threads can deadlock
    start = context.Event()
    workers = [context.Process(target=_write, args=(path, data, OCC, start)) for data in (a, b)]
    for worker in workers:
        worker.start()
    time.sleep(3.0)  # both processes are up (spawned: they import the library) and waiting
    started = time.perf_counter()
    start.set()
    for worker in workers:
        worker.join()
    seconds = time.perf_counter() - started
    if any(w.exitcode != 0 for w in workers):
        raise RuntimeError(f"a writer failed: exit codes {[w.exitcode for w in workers]}")
    return seconds


def contents(path: str) -> pa.Table:
    table = read_table(path).select([KEY, ORDERING])
    return table.sort_by(KEY)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--fraction", type=float, default=0.1, help="share of a batch's days' trips it updates")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--name", default="concurrent_writers")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s")
    command = shlex.join(["python", "benchmarks/concurrent_writers.py", *sys.argv[1:]])
    a = batch(args.rows, args.fraction, range(0, DAYS // 2), 1)
    b = batch(args.rows, args.fraction, range(DAYS // 2, DAYS), 2)
    times: dict[str, list[float]] = {"one writer, A then B": [], "two writers, A and B at once (OCC)": []}
    with tempfile.TemporaryDirectory() as work:
        base = str(Path(work) / "base")
        write_local(base, base_table(args.rows, SEED), {**BASE, "hoodie.datasource.write.operation": "bulk_insert"})
        finals = {}
        for run in range(args.runs):
            for index, (name, scenario) in enumerate(zip(times, (one_writer, two_writers))):
                path = str(Path(work) / f"run{run}-{index}")
                shutil.copytree(base, path)
                times[name].append(scenario(path, a, b))
                finals[name] = path
                logger.warning("%s: %.2f s", name, times[name][-1])
        tables = [contents(p) for p in finals.values()]
        assert tables[0].equals(tables[1]), "the two ways ended with different tables"
        stored = tables[1].num_rows
    rows = a.num_rows + b.num_rows
    one, two = (statistics.median(t) for t in times.values())
    lines = [f"# Two concurrent writers on disjoint partitions vs one writer, {args.rows:,} rows", "",
             f"`{command}`", "",
             f"Batches A (days 0-14) and B (days 15-29): {a.num_rows:,} + {b.num_rows:,} updates; local engine "
             f"(pyarrow in each writer's process), median of {args.runs}; 2 cores. The two tables ended equal "
             f"({stored:,} rows).", "",
             "| writers | seconds | updates per second | vs one writer |", "|---|---:|---:|---:|"]
    for name, seconds in ((n, statistics.median(t)) for n, t in times.items()):
        lines.append(f"| {name} | {seconds:.2f} | {rows / seconds:,.0f} | {one / seconds:.2f}x |")
    lines += ["", f"Two writers: {one / two:.2f}x the throughput of one (each run: "
              + ", ".join(f"{s:.2f} s" for s in times["two writers, A and B at once (OCC)"]) + ")."]
    text = "\n".join(lines) + "\n"
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
