"""Wall time of the key generator's partition paths (``KeyGenerator.partition_paths``), without Spark:
``--rows`` records of 30 distinct values, plain day strings (kept as they are) and URL-like values (which
are not plain relative paths, so they are escaped), plain and hive style; then timestamp-based partitions
(``TimestampBasedKeyGenerator``) of random epoch milliseconds over six years (to days in UTC, to hours in New
York) and of date strings of them (read in Kolkata, to days in UTC). Prints the best of ``--repeat``.

    python -m benchmarks.partition_paths --rows 5000000
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyarrow as pa

from hoodie_datasource.config.write_config import resolve_write_config
from hoodie_datasource.table.keygen import KeyGenerator

P = "hoodie.keygen.timebased."
TIME_BASED = {  # name: (column, options)
    "epoch ms -> yyyy/MM/dd UTC": ("ms", {P + "timestamp.type": "EPOCHMILLISECONDS",
                                          P + "output.dateformat": "yyyy/MM/dd", P + "timezone": "UTC"}),
    "epoch ms -> yyyy-MM-dd-HH New York": ("ms", {P + "timestamp.type": "EPOCHMILLISECONDS",
                                                  P + "output.dateformat": "yyyy-MM-dd-HH",
                                                  P + "timezone": "America/New_York"}),
    "strings -> yyyy/MM/dd UTC": ("text", {P + "timestamp.type": "DATE_STRING",
                                           P + "input.dateformat": "yyyy-MM-dd HH:mm:ss",
                                           P + "input.timezone": "Asia/Kolkata", P + "output.dateformat": "yyyy/MM/dd",
                                           P + "output.timezone": "UTC"}),
}


def best_ms(generator: KeyGenerator, table: pa.Table, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        generator.partition_paths(table)
        times.append(time.perf_counter() - started)
    return min(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    days = np.array([f"2026-11-{d:02d}" for d in range(1, 31)])
    picks = rng.integers(0, len(days), args.rows)
    shapes = {"days": pa.array(days[picks]), "urls": pa.array(np.char.add("https://host/", days)[picks])}
    for name, values in shapes.items():
        table = pa.table({"id": pa.array(np.arange(args.rows)), "p": values})
        for hive in (False, True):
            generator = KeyGenerator(("id",), ("p",), hive_style=hive)
            print(f"{name:5} hive={str(hive).lower():5} {best_ms(generator, table, args.repeat):7.1f} ms")
    ms = rng.integers(1_600_000_000_000, 1_800_000_000_000, args.rows)
    text = pa.array(ms // 1000, pa.timestamp("s")).cast(pa.string())
    table = pa.table({"id": pa.array(np.arange(args.rows)), "ms": ms, "text": text})
    for name, (column, options) in TIME_BASED.items():
        generator = resolve_write_config({
            "hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": column,
            "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
            **options}, None).keygen
        print(f"{name:36} {best_ms(generator, table, args.repeat):7.1f} ms")


if __name__ == "__main__":
    main()
