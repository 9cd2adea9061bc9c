"""CPU time of tagging the seed batch at the 20M-row shape, without Spark.

The 20M-row table has 8 base files of about 83k rows in each of its 30 day partitions, and the seed
batch puts 90% of its updates and all its inserts into the latest 3 days. This builds days of that
table as they are in it (8 bulk inserts, each adding one file of ~83k rows to every day, so each file
has its share of the day's uuid keys: no key-range pruning): ``--days sample``, the latest 3 and 2 of
the others, tagged as one task (``RecordWriter.tag``: key ranges, bloom filters, exact checks); ``--days
all``, the whole table, its batch tagged as the benchmark's ``--tasks`` write tasks do, each the records
of its days (days dealt to tasks in turn: Spark hashes them, so its tasks' shares differ), CPU summed
over the tasks (the commit's ``tag_task``, summed wall time of the tasks, also counts waiting for a core).
Each mode runs ``--repeat`` times: ``cold`` (process caches and the host cache emptied), ``new worker``
(process caches emptied, host cache kept: the benchmark's runs after its first, as the caches key a
file by path and size, which a restored copy keeps) and ``warm`` (both kept). Prints keys/s of CPU time
(``time.process_time``, median over the repeats); ``--profile`` prints a cProfile of one tagging in the
``--profile`` mode. ``--batch uniform`` tags the benchmark's other batch (its updates and inserts spread
over all the days; the table is the same).

    TMPDIR=/tmp/tagprof python -m benchmarks.tag_profile --work /tmp/tagprof/table --days all

Set ``TMPDIR`` to a scratch directory: the cold mode empties the host cache below it.
"""

from __future__ import annotations

import argparse
import cProfile
import logging
import pstats
import shutil
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from benchmarks import ours, workload
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.client.write_client import start_write
from hoodie_datasource.index import base_file_cache
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.fs_view import list_table_files
from hoodie_datasource.write.record_keys import keyed

logger = logging.getLogger(__name__)
TABLE_ROWS = 20_000_000
FILES_PER_DAY = 8
SAMPLE_DAYS = (0, 1, 27, 28, 29)  # the seed batch's 3 recent days and 2 of its tail's


def build(path: Path, table_type: str, days: Sequence[int]) -> None:
    """The ``days`` of the 20M-row table, each in ``FILES_PER_DAY`` base files."""
    per_day = TABLE_ROWS // workload.DAYS
    chunk = -(-per_day // FILES_PER_DAY)
    options = {**ours.options(table_type), "hoodie.datasource.write.operation": "bulk_insert"}
    for f in range(FILES_PER_DAY):
        within = np.arange(f * chunk, min((f + 1) * chunk, per_day), dtype=np.int64)
        ids = np.concatenate([within * workload.DAYS + day for day in days])
        write_local(str(path), workload.stored_trips(ids, 0, 1, False), options)
        logger.info("file %d of each day written", f + 1)


def _day_names(days: Sequence[int]) -> pa.Array:
    return pc.strftime(pa.array((workload.EPOCH_MS // 1000 + np.array(days) * 86_400).astype("datetime64[s]")),
                       format="%Y-%m-%d")


def task_batches(days: Sequence[int], tasks: int, variant: workload.Variant = workload.SEED) -> list[pa.Table]:
    """The ``variant``'s batch for the 20M-row table, its records of ``days``, as ``tasks`` tasks get them."""
    whole = workload.upsert_batch(TABLE_ROWS, variant)
    shares = [_day_names(days[t::tasks]) for t in range(min(tasks, len(days)))]
    return [whole.filter(pc.is_in(whole.column(workload.PARTITION), value_set=share)) for share in shares]


def tag_once(path: Path, table_type: str, batches: Sequence[pa.Table], profiler: cProfile.Profile | None = None
             ) -> tuple[float, dict[str, int]]:
    """CPU seconds of tagging each of ``batches`` as a task (summed) and the summed index counts (each
    write is aborted after; ``profiler`` profiles the taggings alone). Each task takes the table's listing
    from the driver, as a Spark write's tasks do."""
    storage = open_storage(str(path), {})
    options = {**ours.options(table_type), "hoodie.datasource.write.operation": "upsert"}
    listed = {folder: tuple(files) for folder, files in list_table_files(storage).items()}
    seconds, counts = 0.0, {}
    for records in batches:
        session = start_write(storage, options, records.schema)
        try:
            writer = session.record_writer(listed)
            with_keys = keyed(records, session.config)
            started = time.process_time()
            if profiler is not None:
                profiler.enable()
            tagged, _, found = writer.tag(with_keys)
            if profiler is not None:
                profiler.disable()
            seconds += time.process_time() - started
            assert tagged.num_rows == records.num_rows
            for name, value in found.as_dict().items():
                counts[name] = counts.get(name, 0) + value
        finally:
            session.abort()
    return seconds, counts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "tag_profile")
    parser.add_argument("--table-type", default=ours.COW, choices=(ours.COW, ours.MOR))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--days", default="sample", choices=("sample", "all"))
    parser.add_argument("--batch", default=workload.SEED.name, choices=(workload.SEED.name, workload.UNIFORM.name))
    parser.add_argument("--tasks", type=int, default=8, help="write tasks sharing the days (--days all)")
    parser.add_argument("--profile", choices=("cold", "new worker", "warm"))
    parser.add_argument("--sort", default="cumulative", choices=("cumulative", "tottime"), help="of the profile")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logger.setLevel(logging.INFO)
    days = SAMPLE_DAYS if args.days == "sample" else tuple(range(workload.DAYS))
    path = args.work / args.days / args.table_type
    if not path.exists():
        build(path, args.table_type, days)
    variant = {v.name: v for v in (workload.SEED, workload.UNIFORM)}[args.batch]
    batches = task_batches(days, 1 if args.days == "sample" else args.tasks, variant)
    keys = sum(b.num_rows for b in batches)
    host_cache = Path(tempfile.gettempdir()) / "hoodie-bloom-cache"
    clears = {"cold": lambda: (base_file_cache.clear(), shutil.rmtree(host_cache, ignore_errors=True)),
              "new worker": base_file_cache.clear, "warm": lambda: None}
    counts: dict[str, int] = {}
    for mode, clear in clears.items():
        runs = []
        for _ in range(args.repeat):
            clear()
            seconds, counts = tag_once(path, args.table_type, batches)
            runs.append(seconds)
        median = statistics.median(runs)
        logger.info("%s %s: %d keys in %d tasks, median %.3f s CPU (runs %s): %.0f keys/s", args.table_type, mode,
                    keys, len(batches), median, ", ".join(f"{r:.3f}" for r in runs), keys / median)
    logger.info("index counts: %s", counts)
    if args.profile:
        clears[args.profile]()
        profiler = cProfile.Profile()
        tag_once(path, args.table_type, batches, profiler)
        pstats.Stats(profiler).sort_stats(args.sort).print_stats(40)


if __name__ == "__main__":
    main()
