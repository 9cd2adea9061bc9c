"""RECORD_INDEX tagging against GLOBAL_BLOOM and BUCKET (issue 31, section 4): the tagging step of an upsert of 1M
incoming keys, half of them stored (random, over the whole table) and half new, against a table of ``--rows`` rows
(the ``benchmarks/workload.py`` base table: uuid-like keys, 30 day partitions); and a lookup of 10 keys by key.

Tagging is the write pipeline's own (``spark.write_dag``): a write session is started on the table (``start_write``,
not timed), then its keys are tagged as the upsert would tag them and the keys found counted in one Spark job; the
session is aborted (its instant rolled back), so every run tags the same table. The bucket index keys and hashes
each batch in one pass, as the write does. RECORD_INDEX runs the write's own function
(``write_dag._tagged_in_lookup_tasks``): Spark names each key's record-index file group from the key field
(``spark.lookup_routing``), shuffles the records to a task per group, which keys and combines them, looks its keys
up and tags them; the tagged records are persisted, as the write persists them before it counts its inserts.
GLOBAL_BLOOM's records are keyed once and persisted, as the write persists them before it looks keys up, then looked
up in two distributed steps: the keys paired with candidate base files per batch, the pairs shuffled by file, the
locations found broadcast. GLOBAL_BLOOM and
RECORD_INDEX tag the same copy-on-write table (bulk-inserted, then its record index built by a one-row upsert with
``hoodie.metadata.record.index.enable=true``); BUCKET tags a table bulk-inserted under a bucket index of 4 buckets
a partition. Cases interleave (``timing.interleave``), medians of ``--runs`` after a warm-up round (footers and
bloom filters stay cached in the process after it, as in a long-lived writer).

The lookup: ``HoodieTable(path).read_keys(10 random stored keys)`` under each index, with the data file groups the
index named (the groups read: ``tests/unit/test_read_client.py``).

    python -m benchmarks.record_index --rows 20000000 --runs 3 --work /tmp/record_index --shared
"""

from __future__ import annotations

import logging
import shlex
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from benchmarks import cli, ours, spark_session
from benchmarks.machine import facts, load_average, versions
from benchmarks.memory import PeakMemory
from benchmarks.pristine import stage
from benchmarks.timing import Case, Measurement, interleave
from benchmarks.workload import DAYS, INSERT_ID_BASE, INSERTS_START_MS, KEY, PARTITION, SEED, base_table, stored_trips, trips
from hoodie_datasource import HoodieTable
from hoodie_datasource.client.write_client import start_write
from hoodie_datasource.index.index import located
from hoodie_datasource.read.key_lookup import KeyLookup
from hoodie_datasource.spark.write_dag import (
    LOCATION_FIELDS,
    _keying,
    _looked_up,
    _schema_with,
    _tagged_in_lookup_tasks,
    _tags_in_lookup_tasks,
)
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.meta_columns import (
    FILE_ID_COLUMN,
    IS_DELETE_COLUMN,
    LOCATION_PARTITION_COLUMN,
    PARTITION_PATH_COLUMN,
    RECORD_KEY_COLUMN,
)
from hoodie_datasource.table.table import Table

logger = logging.getLogger(__name__)

INCOMING = 1_000_000  # --incoming
LOOKUP_KEYS = 10
RECORD_INDEX = {"hoodie.index.type": "RECORD_INDEX", "hoodie.metadata.record.index.enable": "true"}
GLOBAL_BLOOM = {"hoodie.index.type": "GLOBAL_BLOOM", "hoodie.metadata.record.index.enable": "true"}
INDEXES = {  # case: (table, index options, label)
    "record_index": ("lookup", RECORD_INDEX, "RECORD_INDEX"),
    "global_bloom": ("lookup", GLOBAL_BLOOM, "GLOBAL_BLOOM"),
    "bucket": ("bucket", ours.BUCKET_INDEX, "BUCKET (4 buckets a partition)"),
}


@dataclass
class SizeResult:
    rows: int
    incoming: int
    groups: dict[str, int] = field(default_factory=dict)  # data file groups of each table
    record_index_groups: int = 0
    tagging: dict[str, Measurement] = field(default_factory=dict)
    lookup: dict[str, Measurement] = field(default_factory=dict)


def incoming(rows: int, count: int, seed: int = 31) -> pa.Table:
    """``count`` trips: half of them stored ones (random over the table), half new, shuffled."""
    rng = np.random.default_rng(seed)
    half = count // 2
    updated = rng.choice(rows, half, replace=False).astype(np.int64)
    fresh = np.arange(count - half, dtype=np.int64)
    new = trips(INSERT_ID_BASE + fresh, fresh % DAYS, INSERTS_START_MS + fresh // DAYS, 1, seed + 1,
                SEED.time_prefixed)
    batch = pa.concat_tables([stored_trips(updated, 1, seed, SEED.time_prefixed), new])
    return batch.take(pa.array(rng.permutation(batch.num_rows)))


def tag_once(path: Path, options: dict[str, str], batch: DataFrame, seen: dict[str, Any]) -> None:
    """The upsert's tagging of ``batch`` into the table at ``path`` (one Spark job counting the keys found); the
    write session aborted after. Records the job's seconds and what it found in ``seen``."""
    opts = {**ours.options(ours.COW, options), "hoodie.datasource.write.operation": "upsert"}
    session = start_write(open_storage(str(path)), opts, to_arrow_schema(batch.schema, timezone="UTC"))
    persisted = None
    try:
        started = time.perf_counter()
        index, writer = session.index, session.record_writer()
        files = writer.key_ranges(None)
        keyed_schema = _schema_with(batch.schema, (RECORD_KEY_COLUMN, T.StringType()),
                                    (PARTITION_PATH_COLUMN, T.StringType()), (IS_DELETE_COLUMN, T.BooleanType()))
        keys = _keying(session.config, batch, keyed_schema)
        if index.places_by_hash:
            scope = writer.scope
            tagged = keys.then(lambda records: index.tag(records, files, scope)[0],
                               _schema_with(keyed_schema, *LOCATION_FIELDS)).frame()
        elif _tags_in_lookup_tasks(session):  # the write's own tagging, persisted as the write persists it
            persisted = _tagged_in_lookup_tasks(session, batch, keyed_schema, writer, files).persist(
                StorageLevel.MEMORY_AND_DISK)
            tagged = persisted
        else:  # keyed as the write keys them and persisted, then looked up
            persisted = keys.frame().persist(StorageLevel.MEMORY_AND_DISK)
            tagged = _looked_up(session, persisted, writer, files)
        found = tagged.where(F.col(LOCATION_PARTITION_COLUMN).isNotNull()).count()
        seen.update(tag_s=time.perf_counter() - started, found=found, index=type(index).__name__,
                    files=len(files))
    finally:
        if persisted is not None:
            persisted.unpersist()
        session.abort()


def lookup_once(path: Path, options: dict[str, str], keys: pa.Table, seen: dict[str, Any]) -> None:
    """``HoodieTable.read_keys`` of ``keys``, and the data file groups the index named for them."""
    got = HoodieTable(str(path)).read_keys(keys, **options)
    lookup = KeyLookup.of(Table.load(str(path)), options)
    named = located(lookup.index.tag(lookup.key_rows(keys), lookup.files(None), lookup.scope)[0])
    groups = {(p, f) for p, f in zip(named.column(LOCATION_PARTITION_COLUMN).to_pylist(),
                                     named.column(FILE_ID_COLUMN).to_pylist())}
    seen.update(rows=got.num_rows, groups=len(groups))


def _tables(spark: SparkSession, rows: int, root: Path) -> dict[str, Path]:
    base = stage(spark, base_table(rows, SEED), root / "staging" / "base.parquet", cache=False)
    paths = {"lookup": root / "lookup", "bucket": root / "bucket"}
    started = time.perf_counter()
    ours.write(base, paths["lookup"], ours.COW, "bulk_insert")
    one = spark.createDataFrame(stored_trips(np.array([0], np.int64), 1, 5, SEED.time_prefixed))
    ours.write(one, paths["lookup"], ours.COW, "upsert", RECORD_INDEX)  # builds the record index first
    logger.info("loaded the lookup table and its record index: %.1f s", time.perf_counter() - started)
    started = time.perf_counter()
    ours.write(base, paths["bucket"], ours.COW, "bulk_insert", ours.BUCKET_INDEX)
    logger.info("loaded the bucket table: %.1f s", time.perf_counter() - started)
    return paths


def measure_size(spark: SparkSession, rows: int, count: int, runs: int, root: Path, memory: PeakMemory,
                 indexes: list[str]) -> SizeResult:
    result = SizeResult(rows, count)
    paths = _tables(spark, rows, root)
    measured = {name: INDEXES[name] for name in indexes}
    for name, path in paths.items():
        result.groups[name] = len(HoodieTable(str(path)).table.fs_view.latest_file_slices())
    lookup = KeyLookup.of(Table.load(str(paths["lookup"])), RECORD_INDEX)
    result.record_index_groups = lookup.index.lookup_tasks([])
    batch = stage(spark, incoming(rows, count), root / "staging" / "incoming.parquet", cache=True)
    seen: dict[str, dict[str, Any]] = {name: {} for name in measured}
    cases = [Case(name, label, run=lambda n=name, t=table, o=options: tag_once(paths[t], o, batch, seen[n]),
                  facts=lambda n=name: dict(seen[n]))
             for name, (table, options, label) in measured.items()]
    result.tagging = interleave(f"{rows}/tagging", cases, runs, 1, memory)
    ids = np.random.default_rng(10).choice(rows, LOOKUP_KEYS, replace=False).astype(np.int64)
    keys = stored_trips(ids, 0, 1, SEED.time_prefixed).select([KEY, PARTITION])
    looked: dict[str, dict[str, Any]] = {name: {} for name in measured}
    cases = [Case(name, label, run=lambda n=name, t=table, o=options: lookup_once(paths[t], o, keys, looked[n]),
                  facts=lambda n=name: dict(looked[n]), spark=False)
             for name, (table, options, label) in measured.items()]
    result.lookup = interleave(f"{rows}/lookup", cases, runs, 1, memory)
    for name, measured in result.lookup.items():
        assert measured.median_fact("rows") == LOOKUP_KEYS, (name, measured.facts)
    found = {name: m.median_fact("found") for name, m in result.tagging.items()}
    assert all(n == count // 2 for name, n in found.items() if name != "bucket"), found
    return result


def report(results: list[SizeResult], command: str, started: str, minutes: float, loads: tuple[str, str],
           shared: bool, java: str, note: str) -> str:
    lines = ["# RECORD_INDEX tagging against GLOBAL_BLOOM and BUCKET (issue 31, section 4)", "",
             f"`{command}`: started {started}, {minutes:.1f} minutes. Load average (1, 5, 15 min) at start: "
             f"{loads[0]}; at end: {loads[1]}.", ""]
    if shared:
        lines += ["**The machine was shared with other engineers' test runs while this ran** (2 cores, load average "
                  "above): the times are indicative; the ratios between interleaved cases hold better; keys found "
                  "and file groups are exact.", ""]
    if note:
        lines += [note, ""]
    lines += ["Tagging: incoming keys, half stored (random over the whole table), half new, as an "
              "upsert's tagging step runs it (`spark.write_dag`: BUCKET keys and hashes each batch in one pass; "
              "RECORD_INDEX shuffles the records to a task per record-index file group, named by Spark from the "
              "key field, which keys and combines them, looks their keys up and tags them, the tagged records "
              "persisted as the write persists them; GLOBAL_BLOOM keys the records once, persisted as the "
              "write persists them, and looks keys up in two distributed steps, (key, candidate base file) "
              "pairs shuffled by file, the locations broadcast), one Spark job counting the keys found; the write "
              "session started before the timed region and aborted after it. `tag s`: that job, and for "
              "GLOBAL_BLOOM the driver's read of the base files' key ranges (footers, cached after the warm-up "
              "round). local[2], tables bulk-inserted copy-on-write with the library's defaults (30 day "
              "partitions). Medians of the counted runs after one warm-up round; cases interleaved.", "",
              f"Lookup: `HoodieTable(path).read_keys(keys, **index options)` of {LOOKUP_KEYS} random stored keys "
              "(with their `dt`); `file groups`: the data file groups the index named for them, which are the "
              "ones read (`tests/unit/test_read_client.py` counts the files read).", ""]
    for r in results:
        lines += [f"## {r.rows:,} rows, {r.incoming:,} incoming keys", "",
                  f"Data file groups: {r.groups['lookup']} (RECORD_INDEX, GLOBAL_BLOOM), {r.groups['bucket']} "
                  f"(BUCKET); the record index: {r.record_index_groups} file groups.", "",
                  "| index | tag s | keys found | vs RECORD_INDEX |", "|---|---|---|---|"]
        ri = r.tagging["record_index"].median_fact("tag_s")
        for name, m in r.tagging.items():
            tag_s = m.median_fact("tag_s")
            lines.append(f"| {INDEXES[name][2]} | {tag_s:.2f} | {int(m.median_fact('found')):,} | "
                         f"{tag_s / ri:.2f}x |")
        runs = {name: ", ".join(f"{f['tag_s']:.2f}" for f in m.facts) for name, m in r.tagging.items()}
        lines += ["", "Runs, tag s: " + "; ".join(f"{name} {seconds}" for name, seconds in runs.items()), "",
            "| index | read_keys s | file groups named |", "|---|---|---|"]
        for name, m in r.lookup.items():
            lines.append(f"| {INDEXES[name][2]} | {m.median:.3f} | {int(m.median_fact('groups'))} |")
        lines.append("")
    lines += ["## Machine", ""] + [f"- {k}: {v}" for k, v in {**facts(java), **versions()}.items()] + [""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = cli.parser(__doc__)
    parser.add_argument("--work", type=Path, required=True, help="scratch folder (emptied first)")
    parser.add_argument("--shared", action="store_true", help="say in the results that the machine was shared")
    parser.add_argument("--note", default="", help="a remark printed in the results")
    parser.add_argument("--incoming", type=int, default=INCOMING, help=f"keys tagged (default {INCOMING:,})")
    parser.add_argument("--indexes", type=cli._variants(tuple(INDEXES)), default=list(INDEXES),
                        help=f"the indexes measured, comma separated (default {','.join(INDEXES)})")
    parser.add_argument("--name", default="record_index", help="the results file's name (default record_index)")
    cli.add_driver_memory(parser, why="; 12g for 20M rows")
    args = parser.parse_args(argv)
    if "record_index" not in args.indexes:
        parser.error("--indexes: record_index is what the others are compared with; it is always measured")
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    for name in (__name__, "benchmarks.timing"):
        logging.getLogger(name).setLevel(logging.INFO)
    started, began, load_start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), time.monotonic(), load_average()
    spark = spark_session.start(driver_memory=args.driver_memory)
    java = spark.sparkContext._jvm.java.lang.System.getProperty("java.version")
    memory = PeakMemory(spark_session.jvm_pid(spark))
    results = []
    for rows in args.rows:
        shutil.rmtree(args.work, ignore_errors=True)
        results.append(measure_size(spark, rows, args.incoming, args.runs, args.work / str(rows), memory,
                                    args.indexes))
        shutil.rmtree(args.work, ignore_errors=True)
    spark.stop()
    command = shlex.join(["python", "-m", "benchmarks.record_index", *(argv if argv is not None else sys.argv[1:])])
    text = report(results, command, started, (time.monotonic() - began) / 60, (load_start, load_average()),
                  args.shared, java, args.note)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.md").write_text(text)


if __name__ == "__main__":
    main()
