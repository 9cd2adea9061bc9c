"""Our HFile writer and reader (``hoodie_datasource.hfile``) on a file shaped like a metadata-table record
index: 1,000,000 record keys (UUIDs) with Avro-like values naming a partition and a file group, written with
Hudi's defaults (1 MB blocks, GZ), then read back: a batched lookup of 100,000 sorted random keys, a lookup
of 10 keys, and a full scan, each with the seconds it took and the bytes and reads it made.

    python benchmarks/hfile.py [--keys 1000000] [--runs 3]   # writes benchmarks/results/hfile.md

Each read opens the file anew (opening's two reads are counted in it); the median of ``--runs`` runs is shown.
The file is on local disk, so the bytes and reads are what an object store would be asked for."""

from __future__ import annotations

import argparse
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401 - pa.compute

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.machine import facts, load_average, versions  # noqa: E402
from benchmarks.markdown import markdown_table  # noqa: E402
from hoodie_datasource.hfile.reader import HFileReader  # noqa: E402
from hoodie_datasource.hfile.writer import HFileWriterConfig, write_hfile  # noqa: E402
from hoodie_datasource.storage.local import LocalStorage  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "hfile.md"


def record_index_cells(count: int, seed: int = 1) -> tuple[pa.Array, pa.Array]:
    """Sorted UUID keys; values as Hudi's record index encodes a location: the record's partition, the file
    id's two halves, its index and the instant time (here random bytes of those sizes around the name)."""
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, (count, 16), dtype=np.uint8)
    hexed = np.char.mod("%02x", raw).reshape(count, 16)
    keys = sorted(f"{''.join(r[:4])}-{''.join(r[4:6])}-{''.join(r[6:8])}-{''.join(r[8:10])}-{''.join(r[10:])}"
                  for r in hexed.tolist())
    partitions = [f"city={i:03d}".encode() for i in range(100)]
    tails = rng.integers(0, 256, (count, 30), dtype=np.uint8)
    choice = rng.integers(0, len(partitions), count)
    values = [b"\x00\x0a\x00\x00\x00\x02" + struct.pack("B", 2 * len(partitions[c])) + partitions[c] + tail.tobytes()
              for c, tail in zip(choice.tolist(), tails)]
    return pa.array(keys, pa.string()).cast(pa.binary()), pa.array(values, pa.binary())


def timed(runs: int, action) -> tuple[float, object]:
    samples, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    load_before = load_average()
    keys, values = record_index_cells(args.keys)
    rng = np.random.default_rng(2)
    batch = keys.take(np.sort(rng.choice(len(keys), 100_000, replace=False)))
    ten = keys.take(np.sort(rng.choice(len(keys), 10, replace=False)))
    with tempfile.TemporaryDirectory() as work:
        config = HFileWriterConfig()
        write_seconds, data = timed(args.runs, lambda: write_hfile(keys, values, config))
        (Path(work) / "record-index.hfile").write_bytes(data)
        storage = LocalStorage(work)

        def read(action):
            def run():
                with HFileReader(storage, "record-index.hfile") as reader:
                    rows = action(reader).num_rows
                    return rows, reader.requests, reader.bytes_read
            return timed(args.runs, run)

        cases = [
            ("write 1 file", write_seconds, (args.keys, 0, 0)),
            ("lookup 100,000 sorted random keys", *read(lambda r: r.lookup(batch))),
            ("lookup 10 keys", *read(lambda r: r.lookup(ten))),
            ("full scan", *read(lambda r: r.scan())),
        ]
        with HFileReader(storage, "record-index.hfile") as reader:
            blocks = len(reader.index)
    rows = [(name, f"{seconds:.3f}", f"{found:,}", f"{requests:,}", f"{read_bytes / 2**20:,.2f}")
            for name, seconds, (found, requests, read_bytes) in cases]
    machine = facts("not used")
    lines = ["# HFile: writing and reading a record-index-shaped file", "",
             f"`python benchmarks/hfile.py --keys {args.keys} --runs {args.runs}`: {args.keys:,} keys (36-character "
             f"UUIDs) with {int(pa.compute.mean(pa.compute.binary_length(values)).as_py()):d}-byte values, Hudi's defaults "
             f"(`hoodie.hfile.block.size` 1 MB, GZ): a file of {len(data) / 2**20:.1f} MB in {blocks} data blocks. "
             f"Median of {args.runs} runs; every read opens the file anew (its two reads of the trailer and the "
             "load-on-open section are counted). Bytes and reads are what the reader asked the storage for.", "",
             *markdown_table(["what", "seconds", "cells", "reads", "MB read"], rows),
             f"Machine: {machine['CPU']}, {machine['cores']} cores, {machine['RAM']}, Python {machine['Python']}, "
             f"pyarrow {versions()['pyarrow']}. The machine was shared with other engineers' jobs while this ran "
             f"(load average {load_before} before, {load_average()} after), so the seconds are an upper bound.", ""]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
