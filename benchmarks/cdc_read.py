"""CDC query vs plain incremental read of the same commit, without Spark: a table of ``--rows`` records
in 4 partitions, then one upsert updating ``--updates`` of them (spread over every file group) and
inserting as many; the incremental pull and the CDC query of that commit are timed (median of
``--runs``, interleaved), on COW with CDC logs, COW without (changes inferred from the base files),
and MOR (inferred from the log files and the new base files).

    python benchmarks/cdc_read.py --rows 400000 --updates 20000 --runs 3
"""

from __future__ import annotations

import argparse
import logging
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.table_reader import read_table

logger = logging.getLogger(__name__)
RESULTS = Path(__file__).resolve().parent / "results"
OPTS = {"table.name": "bench", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}
KINDS = {
    "cow, CDC logs": {"storage.type": "COPY_ON_WRITE", "hoodie.table.cdc.enabled": "true"},
    "cow, inferred": {"storage.type": "COPY_ON_WRITE"},
    # no small files: the updates go to log files, the inserts to new file groups
    "mor, inferred": {"storage.type": "MERGE_ON_READ", "hoodie.parquet.small.file.limit": "0"},
}


def batch(ids: np.ndarray, ts: int) -> pa.Table:
    return pa.table({"id": ids, "ts": np.full(len(ids), ts), "p": [f"p{i % 4}" for i in ids],
                     "fare": ids * 0.5 + ts, "rider": [f"rider-{i % 977}-{ts}" for i in ids]})


def prepare(root: str, rows: int, updates: int) -> dict[str, tuple[str, str]]:
    """The tables, each with its first and last commit."""
    rng = np.random.default_rng(7)
    changed = np.concatenate([rng.choice(rows, updates, replace=False), np.arange(rows, rows + updates)])
    tables = {}
    for name, kind in KINDS.items():
        path = f"{root}/{name.replace(', ', '_').replace(' ', '_')}"
        opts = dict(OPTS, **kind, **{"hoodie.parquet.max.file.size": str(1 << 40)})
        first = write_local(path, batch(np.arange(rows), 1), opts)
        last = write_local(path, batch(changed, 2), opts)
        tables[name] = (path, first, last)
    return tables


def measure(rows: int, updates: int, runs: int) -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory(prefix="cdc-bench-") as root:
        tables = prepare(root, rows, updates)
        times: dict[str, dict[str, list[float]]] = {name: {"incremental": [], "cdc": []} for name in tables}
        counts: dict[str, dict[str, int]] = {name: {} for name in tables}
        for _ in range(runs):
            for name, (path, first, _) in tables.items():
                for query, fmt in (("incremental", "latest_state"), ("cdc", "cdc")):
                    started = time.perf_counter()
                    out = read_table(path, ReadConfig(query_type="incremental", begin_instant=first,
                                                      incremental_format=fmt))
                    times[name][query].append(time.perf_counter() - started)
                    counts[name][query] = out.num_rows
        return {name: {**{q: statistics.median(t) for q, t in by_query.items()},
                       **{f"{q} rows": float(n) for q, n in counts[name].items()}}
                for name, by_query in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--updates", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    lines = [f"# CDC query vs plain incremental read of one commit ({time.strftime('%Y-%m-%d')})", "",
             f"`python benchmarks/cdc_read.py {shlex.join(sys.argv[1:])}`: {args.rows:,} rows, one upsert of "
             f"{args.updates:,} updates + {args.updates:,} inserts; core reader (no Spark), median of {args.runs}.", "",
             "| table | incremental s | rows | CDC s | changes | CDC / incremental |", "|---|---:|---:|---:|---:|---:|"]
    for name, r in measure(args.rows, args.updates, args.runs).items():
        logger.info("%-14s incremental %.3f s (%d rows), cdc %.3f s (%d rows)", name, r["incremental"],
                    r["incremental rows"], r["cdc"], r["cdc rows"])
        lines.append(f"| {name} | {r['incremental']:.3f} | {int(r['incremental rows']):,} | {r['cdc']:.3f} | "
                     f"{int(r['cdc rows']):,} | {r['cdc'] / r['incremental']:.1f}x |")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "cdc_read.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
