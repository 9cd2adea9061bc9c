"""Clustering (issue 32, sections 1 and 5): many small commits, then one clustering, leave most bytes in files of
about the target size; a z-order (and hilbert) layout on two columns lets a filter on the second column read far
fewer files than a linear sort does.

``--commits`` inserts of ``--rows`` rows each (a and b uniform, a random 64-character note; local engine,
copy-on-write, one partition, every commit its own file group: ``hoodie.parquet.small.file.limit=0``), the
metadata table's ``column_stats`` on. The table is copied once per layout (linear, z-order, hilbert) and clustered
with ``hoodie.clustering.plan.strategy.sort.columns=a,b`` and a target of ``--target-mb`` MB. Reported per layout:
the clustering's time, its files, the share of bytes in files of at least 0.8x the target, and the files data
skipping (the ``column_stats`` ranges, as a query plans them) keeps for ``b BETWEEN`` a window of
``--selectivity`` of b's range (and for the same on ``a``).

    python -m benchmarks.clustering --commits 200 --rows 20000 --target-mb 8 --work /tmp/clustering_bench \\
        --out benchmarks/results/clustering.md
"""

from __future__ import annotations

import argparse
import datetime
import logging
import shutil
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from benchmarks.machine import load_average, versions
from benchmarks.markdown import markdown_table
from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.metadata.reader import MetadataTableReader
from hoodie_datasource.read.data_skipping import AllOf, Comparison, slices_to_read

logger = logging.getLogger(__name__)

VALUES = 1_000_000  # a and b are uniform over [0, VALUES)
OPTIONS = {"hoodie.table.name": "events", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "", "hoodie.datasource.write.precombine.field": "ts",
           "hoodie.datasource.write.operation": "insert", "hoodie.parquet.small.file.limit": "0",
           "hoodie.metadata.index.column.stats.enable": "true", "hoodie.clean.automatic": "false",
           "hoodie.archive.automatic": "false"}
LAYOUTS = ("linear", "z-order", "hilbert")


def batch(commit: int, rows: int, rng: np.random.Generator) -> pa.Table:
    start = commit * rows
    notes = rng.bytes(32 * rows).hex()  # 32 random bytes a row: a payload that compresses as little as real ones
    return pa.table({"id": pa.array([f"{i:012d}" for i in range(start, start + rows)]),
                     "ts": pa.array(np.full(rows, commit, np.int64)),
                     "a": pa.array(rng.integers(0, VALUES, rows)), "b": pa.array(rng.integers(0, VALUES, rows)),
                     "note": pa.array([notes[i:i + 64] for i in range(0, 64 * rows, 64)])})


def base_file_sizes(path: str) -> list[int]:
    table = HoodieTable(path).table
    return [s.base_file.size for s in table.fs_view.latest_file_slices() if s.base_file is not None]


def files_kept(path: str, column: str, low: int, high: int) -> tuple[int, int]:
    """(files data skipping keeps for ``low <= column <= high``, files of the table)."""
    table = HoodieTable(path).table
    slices = table.fs_view.latest_file_slices()
    predicate = AllOf((Comparison(column, ">=", low), Comparison(column, "<=", high)))
    return len(slices_to_read(slices, predicate, MetadataTableReader(table), table.schema)), len(slices)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--target-mb", type=float, default=8)
    parser.add_argument("--selectivity", type=float, default=0.01)
    parser.add_argument("--work", type=Path, default=Path("/tmp/clustering_bench"))
    parser.add_argument("--note", default="")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s")
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    source = str(args.work / "small")
    rng = np.random.default_rng(11)
    started = time.monotonic()
    for commit in range(args.commits):
        write_local(source, batch(commit, args.rows, rng), OPTIONS)
    writes_s = time.monotonic() - started
    small = base_file_sizes(source)
    target = int(args.target_mb * 1024 * 1024)
    low = VALUES // 3
    high = low + int(VALUES * args.selectivity) - 1
    rows = []
    for layout in LAYOUTS:
        path = str(args.work / layout)
        shutil.copytree(source, path)
        started = time.monotonic()
        done = HoodieTable(path).cluster(**{"hoodie.clustering.plan.strategy.sort.columns": "a,b",
                                            "hoodie.layout.optimize.strategy": layout,
                                            "hoodie.clustering.plan.strategy.target.file.max.bytes": str(target)})
        seconds = time.monotonic() - started
        assert len(done) == 1
        sizes = base_file_sizes(path)
        assert HoodieTable(path).scan().num_rows == args.commits * args.rows
        full = sum(s for s in sizes if s >= 0.8 * target) / sum(sizes)
        on_b, total = files_kept(path, "b", low, high)
        on_a, _ = files_kept(path, "a", low, high)
        rows.append([layout, f"{seconds:.1f}", total, f"{min(sizes) / 2**20:.1f} / {np.median(sizes) / 2**20:.1f} / "
                     f"{max(sizes) / 2**20:.1f}", f"{full:.1%}", f"{on_b} of {total}", f"{on_a} of {total}"])
        shutil.rmtree(path)
    linear_b = int(rows[0][5].split()[0])
    verdicts = [f"{r[0]}: {'met' if int(r[5].split()[0]) * 2 <= linear_b else 'missed'}" for r in rows[1:]]
    lines = [f"# Clustering ({datetime.date.today().isoformat()})", "",
             f"`python -m benchmarks.clustering --commits {args.commits} --rows {args.rows} --target-mb "
             f"{args.target_mb} --selectivity {args.selectivity}`: {args.commits} inserts of {args.rows:,} rows "
             f"(id, ts, a, b uniform over [0, {VALUES:,}), a 64-character random note) took {writes_s:.0f} s and "
             f"left {len(small)} files of "
             f"{np.median(small) / 2**20:.2f} MB (median; {sum(small) / 2**20:.0f} MB in all); each layout clusters "
             f"a copy with sort columns `a,b` and a target of {args.target_mb} MB (chosen to fit a 2-core machine: "
             f"a few dozen files). Data skipping: the files the `column_stats` ranges keep for `b BETWEEN {low} AND "
             f"{high}` (and the same on `a`). Load average at the end {load_average()}. {args.note}".rstrip(), ""]
    lines += markdown_table(["layout", "clustering s", "files", "MB min / median / max", "bytes in files >= 0.8x "
                             "target", "files read, filter on b", "files read, filter on a"], rows)
    lines += [f"Z-order and hilbert read at most half the files linear reads for the filter on b: "
              f"{', '.join(verdicts)}.", "",
              "Versions: " + ", ".join(f"{k} {v}" for k, v in versions().items()) + ".", ""]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
