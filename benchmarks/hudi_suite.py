"""Everything measured against Apache Hudi 0.15 at one table size.

Both sides get the same rows as the same parquet files, each staged once into a cached DataFrame in its own
process. Each side writes and reads tables it loaded itself (our ``bulk_insert``, Hudi's ``bulk_insert`` in each
of its configurations), so each upsert continues a table its own writer made. Groups are interleaved as in
``suite.py``: the first load (``bulk_insert`` of the base table into a new table), the upsert of each batch
(COW and MOR), the upsert of 1 row, and reads of the tables as the seed batch left them: snapshot (full scan;
``count(*)`` and ``sum(fare)``; COW and MOR) and the incremental query of the last commit (COW).
"""

from __future__ import annotations

import logging
import math
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession

from benchmarks import ours, peer_hudi, reads
from benchmarks.copies import restore
from benchmarks.cpu_time import CpuClock
from benchmarks.memory import PeakMemory
from benchmarks.peer_hudi import CONFIGS, HudiConfig, HudiPeer
from benchmarks.pristine import Tables, keep_loaded, stage
from benchmarks.size_result import FIRST_LOAD, ONE_ROW, READS, WRITES, SizeResult, measure
from benchmarks.spark_parquet import AGGREGATE, count_and_sum, full_scan
from benchmarks.timing import Case
from benchmarks.workload import SEED, Variant, apply_batch, base_table, one_row, parquet_bytes, upsert_batch
from hoodie_datasource import HoodieTable

logger = logging.getLogger(__name__)

TABLE_TYPES = {"cow": (ours.COW, "COW"), "mor": (ours.MOR, "MOR")}
# Spark splits a staged file across the session's 2 cores by bytes, a row group whole: in 8 row groups a
# large input is a DataFrame of 2 partitions, as rows read from many files would be. A single row group is
# one partition, one task: Hudi's bulk_insert (sort mode NONE) keeps the input's partitioning, so it would
# write the whole base table on one core.
INPUT_ROW_GROUPS = 8
# A JVM's JIT compiles a scan over its first ten or so runs (1M rows, each JVM alone: our full scan 1.01 s on
# its 2nd run, 0.55 s from its 11th; Hudi's 0.79 s, then 0.53 s), and a round runs Hudi's reads twice (one
# table per configuration), so with one warm-up round Hudi's scans are measured warmer than ours.
READ_WARMUP = 8
BASE, ONE = "base", "one_row"


def hudi_format(config: HudiConfig, kind: str) -> str:
    """The name of a Hudi table of ``config`` and ``kind`` (cow, mor) among the size's tables."""
    return f"{config.key}_{kind}"


def load_labels() -> dict[str, str]:
    """What loaded each table, by its name among the size's tables."""
    labels = {kind: f"hoodie {label} bulk_insert" for kind, (_, label) in TABLE_TYPES.items()}
    for config in CONFIGS:
        labels.update({hudi_format(config, kind): f"Apache Hudi {peer_hudi.VERSION} {label} bulk_insert ({config.label})"
                       for kind, (_, label) in TABLE_TYPES.items()})
    return labels


@dataclass(frozen=True)
class Expected:
    """What a snapshot of the table after the seed batch holds: computed from the rows, not read back."""

    rows: int
    fare_sum: float
    batch_rows: int  # what the incremental query of the last commit returns
    batch_fare_sum: float


@dataclass
class HudiSizeSuite:
    spark: SparkSession
    peer: HudiPeer
    rows: int
    root: Path
    memory: PeakMemory
    runs: int
    warmup: int
    cpu: CpuClock  # our session's; Hudi's cases carry their process's
    result: SizeResult = field(init=False)

    def __post_init__(self) -> None:
        self.result = SizeResult(self.rows)

    def measure(self, group: str, cases: list[Case], warmup: int | None = None) -> None:
        measure(self.result, group, cases, self.runs, self.warmup if warmup is None else warmup, self.memory, self.cpu)

    def _stage(self, name: str, table: pa.Table) -> DataFrame:
        """``table`` as one parquet file, cached on our side and on Hudi's under ``name``, in the same partitions."""
        path = self.root / "staging" / f"{name}.parquet"
        df = stage(self.spark, table, path, cache=True, row_groups=INPUT_ROW_GROUPS)
        ours = (table.num_rows, df.rdd.getNumPartitions())
        theirs = self.peer.stage(name, path)
        if theirs != ours:
            raise RuntimeError(f"{path} staged as (rows, partitions) {ours} here and {theirs} in Hudi's process")
        logger.info("staged %s: %s rows in %d partitions on both sides", name, f"{ours[0]:,}", ours[1])
        return df

    def _unstage(self, name: str, df: DataFrame) -> None:
        df.unpersist()
        self.peer.unstage(name)

    def run(self, variants: list[Variant]) -> SizeResult:
        base = base_table(self.rows, SEED)
        seed_batch = upsert_batch(self.rows, SEED)
        merged = apply_batch(base, seed_batch)
        expected = Expected(merged.num_rows, pc.sum(merged.column("fare")).as_py(), seed_batch.num_rows,
                            pc.sum(seed_batch.column("fare")).as_py())
        del merged, seed_batch
        base_df = self._stage(BASE, base)
        self.result.batch_bytes[FIRST_LOAD] = (self.root / "staging" / f"{BASE}.parquet").stat().st_size
        del base  # the driver keeps no table of the size's rows while runs are measured
        pa.default_memory_pool().release_unused()
        self._first_load(base_df)
        tables = self._load(base_df)
        self._unstage(BASE, base_df)
        for variant in variants:
            batch = upsert_batch(self.rows, variant)
            self.result.batch_rows[variant.name] = batch.num_rows
            self.result.batch_bytes[variant.name] = parquet_bytes(batch)
            batch_df = self._stage(variant.name, batch)
            self.measure(f"{WRITES}/{variant.name}", self._upsert_cases(tables, variant.name, batch_df))
            if variant is SEED:
                self._reads(tables, batch_df, expected)
            self._unstage(variant.name, batch_df)
        self._fixed_cost(tables)
        shutil.rmtree(self.root)
        return self.result

    def _first_load(self, base_df: DataFrame) -> None:
        """The base table bulk-inserted into a new COW table, by us and by Hudi in each configuration."""
        work = self.root / FIRST_LOAD
        cases = [ours.bulk_insert_case("cow", "hoodie COW bulk_insert", base_df, work / "cow", ours.COW)]
        cases += [peer_hudi.bulk_insert_case(self.peer, config, "cow", "COW bulk_insert", BASE,
                                             work / hudi_format(config, "cow"), peer_hudi.COW) for config in CONFIGS]
        self.measure(FIRST_LOAD, cases)
        shutil.rmtree(work, ignore_errors=True)

    def _load(self, base_df: DataFrame) -> Tables:
        """The pristine tables the upserts restore: ours and each Hudi configuration's, COW and MOR."""
        tables = Tables(self.root, ())
        labels = load_labels()
        for kind, (table_type, _) in TABLE_TYPES.items():
            keep_loaded(tables, kind, labels[kind],
                        lambda path, t=table_type: ours.write(base_df, path, t, "bulk_insert"))
            for config in CONFIGS:
                options = peer_hudi.write_options(table_type, "bulk_insert", config)
                keep_loaded(tables, hudi_format(config, kind), labels[hudi_format(config, kind)],
                            lambda path, o=options: self.peer.write(BASE, path, o))
        self.result.load_seconds["uuid"], self.result.table_bytes["uuid"] = tables.load_seconds, tables.table_bytes
        return tables

    def _upsert_cases(self, tables: Tables, staged: str, batch_df: DataFrame, what: str = "upsert") -> list[Case]:
        """Our upsert and Hudi's (each configuration) of the rows staged as ``staged``, COW then MOR."""
        p, w = tables.pristine, tables.work
        cases = []
        for kind, (table_type, label) in TABLE_TYPES.items():
            cases.append(ours.upsert_case(kind, f"hoodie {label} {what}", batch_df, p(kind), w(kind), table_type))
            cases += [peer_hudi.upsert_case(self.peer, config, kind, f"{label} {what}", staged,
                                            p(hudi_format(config, kind)), w(hudi_format(config, kind)),
                                            peer_hudi.COW if kind == "cow" else peer_hudi.MOR)
                      for config in CONFIGS]
        return cases

    def _fixed_cost(self, tables: Tables) -> None:
        row_df = self._stage(ONE, one_row(self.rows, SEED))
        self.measure(ONE_ROW, self._upsert_cases(tables, ONE, row_df, "upsert of 1 row"))
        self._unstage(ONE, row_df)

    def _reads(self, tables: Tables, batch_df: DataFrame, expected: Expected) -> None:
        """Reads of each side's tables after its upsert of the seed batch, once their rows are checked."""
        read = self.root / "read"
        for kind, (table_type, _) in TABLE_TYPES.items():
            restore(tables.pristine(kind), read / kind)
            ours.write(batch_df, read / kind, table_type, "upsert")
            for config in CONFIGS:
                path = read / hudi_format(config, kind)
                restore(tables.pristine(hudi_format(config, kind)), path)
                self.peer.write(SEED.name, path, peer_hudi.write_options(table_type, "upsert", config))
        cases = self._our_reads(read, expected)
        for config in CONFIGS:
            cases += self._hudi_reads(config, read, expected)
        self.measure(READS, cases, max(self.warmup, READ_WARMUP))

    def _check(self, label: str, count: int, fare_sum: float, expected_rows: int, expected_sum: float) -> None:
        """A table's rows against what the workload says it holds, before any of its reads is timed."""
        if count != expected_rows or not math.isclose(fare_sum, expected_sum, rel_tol=1e-9):
            raise RuntimeError(f"{label}: {count:,} rows, sum(fare) {fare_sum}; expected {expected_rows:,} rows, "
                               f"sum(fare) {expected_sum}")
        self.result.checks.append(f"{label}: {count:,} rows, sum(fare) {fare_sum:,.2f}, as expected")

    def _our_reads(self, read: Path, expected: Expected) -> list[Case]:
        cow, mor = read / "cow", read / "mor"
        begin = HoodieTable(str(cow)).completed_commits()[-2]
        for label, df, rows, total in (
                ("hoodie COW snapshot", reads.snapshot(self.spark, cow), expected.rows, expected.fare_sum),
                ("hoodie MOR snapshot", reads.snapshot(self.spark, mor), expected.rows, expected.fare_sum),
                ("hoodie COW incremental", reads.incremental(self.spark, cow, begin), expected.batch_rows,
                 expected.batch_fare_sum)):
            count, fare_sum = df.selectExpr(*AGGREGATE).collect()[0]
            self._check(label, count, fare_sum, rows, total)
        return [
            *self._read_pair("cow", "hoodie COW snapshot", lambda: reads.snapshot(self.spark, cow)),
            Case("incremental", "hoodie COW incremental query of the last commit",
                 lambda: full_scan(reads.incremental(self.spark, cow, begin))),
            *self._read_pair("mor", "hoodie MOR snapshot (the batch in log files)", lambda: reads.snapshot(self.spark, mor)),
        ]

    @staticmethod
    def _read_pair(kind: str, label: str, snapshot: Callable[[], DataFrame]) -> list[Case]:
        return [Case(f"{kind}_scan", f"{label}, full scan", lambda: full_scan(snapshot())),
                Case(f"{kind}_agg", f"{label}, count + sum(fare)", lambda: count_and_sum(snapshot()))]

    def _hudi_reads(self, config: HudiConfig, read: Path, expected: Expected) -> list[Case]:
        cow, mor = read / hudi_format(config, "cow"), read / hudi_format(config, "mor")
        begin = HoodieTable(str(cow)).completed_commits()[-2]
        incremental = peer_hudi.incremental_options(begin, config)
        name = f"Apache Hudi {peer_hudi.VERSION} ({config.label})"
        for label, path, options, rows, total in (
                (f"{name} COW snapshot", cow, config.options, expected.rows, expected.fare_sum),
                (f"{name} MOR snapshot", mor, config.options, expected.rows, expected.fare_sum),
                (f"{name} COW incremental", cow, incremental, expected.batch_rows, expected.batch_fare_sum)):
            _, count, fare_sum = self.peer.aggregate(path, options)
            self._check(label, count, fare_sum, rows, total)
        return [
            peer_hudi.scan_case(self.peer, config, "cow_scan", "COW snapshot, full scan", cow),
            peer_hudi.aggregate_case(self.peer, config, "cow_agg", "COW snapshot, count + sum(fare)", cow),
            peer_hudi.scan_case(self.peer, config, "incremental", "COW incremental query of the last commit", cow,
                                incremental),
            peer_hudi.scan_case(self.peer, config, "mor_scan", "MOR snapshot (the batch in log files), full scan", mor),
            peer_hudi.aggregate_case(self.peer, config, "mor_agg", "MOR snapshot (the batch in log files), count + "
                                                                   "sum(fare)", mor),
        ]
