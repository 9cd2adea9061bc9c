"""CPU time of one copy-on-write merge of a file group at the 20M-row shape, without Spark.

The 20M-row table has base files of about 83k rows (8 in each of its 30 day partitions). This writes
one such file with our own writer (``write_file_group`` creating a file group of the workload's trips
of one day), then merges a batch into it as a write task does (``write_file_group`` on a MERGE target:
``--updates`` of its keys at a newer version and ``--inserts`` new trips), ``--repeat`` times warm.
Prints the median CPU time (``time.process_time``) of a merge and the merged file's size;
``--merged-base`` merges into a file a merge wrote (the steady state of a table), ``--profile`` prints a
cProfile of one merge.

    python -m benchmarks.merge_profile --work /tmp/mergeprof
"""

from __future__ import annotations

import argparse
import cProfile
import logging
import pstats
import shutil
import statistics
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from benchmarks import workload
from hoodie_datasource.config.write_config import IndexConfig
from hoodie_datasource.index import base_file_cache
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.write.file_group_writer import write_file_group
from hoodie_datasource.write.targets import MERGE, WriteContext, WriteTarget

logger = logging.getLogger(__name__)

DAY = workload.DAYS - 1
FILE_ID = "00000000-0000-0000-0000-000000000000-0"


def _records(trips: pa.Table) -> pa.Table:
    """Trips as a write task receives them: the data columns and the record key column."""
    return trips.append_column("_hoodie_record_key", trips.column(workload.KEY))


def _context(storage, instant: str, schema: pa.Schema, compression: str) -> WriteContext:
    return WriteContext(storage=storage, instant=instant, data_schema=schema, index=IndexConfig(),
                        compression=compression, precombine_field=workload.ORDERING, dedupe=False,
                        event_time_ordering=False, record_key_fields=(workload.KEY,))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", required=True, help="scratch directory (emptied)")
    parser.add_argument("--rows", type=int, default=83_333, help="rows of the base file")
    parser.add_argument("--updates", type=int, default=833)
    parser.add_argument("--inserts", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--compression", default="snappy")
    parser.add_argument("--merged-base", action="store_true",
                        help="merge into a base file that is itself a merge's (two row groups, two commits)")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    storage = open_storage(str(work))
    ids = DAY + workload.DAYS * np.arange(args.rows, dtype=np.int64)
    base = workload.stored_trips(ids, 0, 1, False)
    partition = base.column(workload.PARTITION)[0].as_py()
    schema = base.schema
    created = write_file_group(_context(storage, "20231114000000000", schema, args.compression),
                               WriteTarget(partition, FILE_ID), _records(base), "0-0-0", 0)
    rng = np.random.default_rng(3)
    updated = workload.stored_trips(np.sort(rng.choice(ids, args.updates, replace=False)), 1, 7, False)
    fresh = np.arange(args.inserts, dtype=np.int64)
    inserted = workload.trips(workload.INSERT_ID_BASE + fresh, np.full(args.inserts, DAY),
                              workload.INSERTS_START_MS + fresh, 1, 8, False)
    batch = _records(pa.concat_tables([updated, inserted]))
    target = WriteTarget(partition, FILE_ID, created.path, "20231114000000000", MERGE, created.fileSizeInBytes)
    if args.merged_base:
        earlier = _records(workload.stored_trips(np.sort(rng.choice(ids, args.updates, replace=False)), 1, 5, False))
        merged = write_file_group(_context(storage, "20231114120000000", schema, args.compression), target, earlier,
                                  "0-0-0", 0)
        target = WriteTarget(partition, FILE_ID, merged.path, "20231114120000000", MERGE, merged.fileSizeInBytes)

    cpu, sizes = [], []
    for i in range(args.repeat + 1):
        base_file_cache.clear()
        ctx = _context(storage, f"20231115{i:06d}000", schema, args.compression)
        started = time.process_time()
        stat = write_file_group(ctx, target, batch, "0-0-0", 0)
        cpu.append(time.process_time() - started)
        sizes.append(stat.fileSizeInBytes)
        assert stat.numWrites == args.rows + args.inserts and stat.numUpdateWrites == args.updates
    logger.info("base file %d rows, %d bytes; merge of %d updates + %d inserts (%s): median CPU %.1f ms over %d "
                "warm repeats (min %.1f), merged file %d bytes", args.rows, created.fileSizeInBytes, args.updates,
                args.inserts, args.compression, statistics.median(cpu[1:]) * 1000, args.repeat, min(cpu[1:]) * 1000,
                sizes[-1])
    if args.profile:
        base_file_cache.clear()
        ctx = _context(storage, "20231116000000000", schema, args.compression)
        profiler = cProfile.Profile()
        profiler.enable()
        write_file_group(ctx, target, batch, "0-0-0", 0)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
