"""Everything measured at one table size.

Tables with uuid-like keys serve the seed and uniform batches; time-prefixed keys need tables of
their own. Each batch variant is a group of write cases, interleaved. The seed batch also gets the
whole suite: the first load (bulk insert against Spark's partitioned parquet write), the reload
baseline, pyiceberg and delta-rs with its change data feed among the writes, then the fixed cost of a
1-row commit, the reads, and the cost-growth batch.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from benchmarks import floor, ours, peer_delta, peer_iceberg, reads
from benchmarks.copies import restore
from benchmarks.cpu_time import CpuClock
from benchmarks.fixtures import COW, DELTA, DELTA_CDF, ICEBERG, MOR, MOR_BUCKET, PLAIN, RELOAD, load
from benchmarks.memory import PeakMemory
from benchmarks.pristine import Tables, stage
from benchmarks.size_result import FIRST_LOAD, GROWTH, ONE_ROW, READS, WRITES, SizeResult, measure
from benchmarks.spark_parquet import partitioned_write_case, reload_case
from benchmarks.timing import Case
from benchmarks.workload import SEED, Variant, apply_batch, base_table, one_row, parquet_bytes, upsert_batch
from hoodie_datasource import HoodieTable

MERGED = "merged.parquet"


@dataclass
class SizeSuite:
    spark: SparkSession
    rows: int
    root: Path
    memory: PeakMemory
    runs: int
    warmup: int
    growth_batch: pa.Table | None  # the batch of the smallest size; None at that size
    cpu: CpuClock | None = None  # the session's CPU time, read around every run
    result: SizeResult = field(init=False)

    def __post_init__(self) -> None:
        self.result = SizeResult(self.rows)

    def measure(self, group: str, cases: list[Case]) -> None:
        measure(self.result, group, cases, self.runs, self.warmup, self.memory, self.cpu)

    def run(self, variants: list[Variant]) -> SizeResult:
        for time_prefixed in (False, True):
            chosen = [v for v in variants if v.time_prefixed == time_prefixed]
            if chosen:
                self._key_style("time_prefixed" if time_prefixed else "uuid", chosen)
        return self.result

    def _key_style(self, style: str, variants: list[Variant]) -> None:
        full = SEED in variants
        base = base_table(self.rows, variants[0])
        formats = (COW, MOR, DELTA, PLAIN) + ((MOR_BUCKET, DELTA_CDF, ICEBERG, RELOAD) if full else ())
        root = self.root / style
        tables = load(self.spark, base, root, formats)
        self.result.load_seconds[style], self.result.table_bytes[style] = tables.load_seconds, tables.table_bytes
        if full:
            self.first_load(base, root)
        merged_rows = self._stage_merged(base, root) if full else 0
        del base  # the driver keeps no table of the size's rows while runs are measured
        pa.default_memory_pool().release_unused()
        for variant in variants:
            batch = upsert_batch(self.rows, variant)
            self.result.batch_rows[variant.name] = batch.num_rows
            self.result.batch_bytes[variant.name] = parquet_bytes(batch)
            batch_df = stage(self.spark, batch, root / "staging" / f"{variant.name}.parquet", cache=True)
            merged = None
            if variant is SEED:  # the reload's rows, cached so that only its rewrite is timed
                merged = self.spark.read.parquet(str(root / "staging" / MERGED)).cache()
                merged.count()
            self.measure(f"{WRITES}/{variant.name}", self._write_cases(tables, batch, batch_df, merged))
            if merged is not None:
                merged.unpersist()
            if variant is SEED:
                self._fixed_cost(tables)
                self._reads(tables, batch, batch_df, expected_rows=merged_rows)
                self._growth(tables, root)
            elif not variant.time_prefixed:
                self._merge_on_read_reads(tables, variant, batch_df)
            batch_df.unpersist()
        shutil.rmtree(root)

    def _stage_merged(self, base: pa.Table, root: Path) -> int:
        """The base table with the seed batch applied (what the reload writes), staged as a parquet file
        the seed batch's writes read; returns its row count."""
        after = apply_batch(base, upsert_batch(self.rows, SEED))
        stage(self.spark, after, root / "staging" / MERGED, cache=False)
        return after.num_rows

    def first_load(self, base: pa.Table, root: Path) -> None:
        """The base table loaded from the same cached DataFrame by hoodie ``bulk_insert`` (COW, MOR) and by
        Spark's own partitioned parquet write, each run into a new directory."""
        rows = stage(self.spark, base, root / "staging" / "first_load.parquet", cache=True)
        work = root / FIRST_LOAD
        self.result.batch_bytes[FIRST_LOAD] = (root / "staging" / "first_load.parquet").stat().st_size
        self.measure(FIRST_LOAD, [
            ours.bulk_insert_case("cow", "hoodie COW bulk_insert", rows, work / "cow", ours.COW),
            ours.bulk_insert_case("mor", "hoodie MOR bulk_insert", rows, work / "mor", ours.MOR),
            partitioned_write_case("spark", 'Spark partitionBy("dt").parquet', rows, work / "spark"),
        ])
        rows.unpersist()
        shutil.rmtree(work, ignore_errors=True)

    def _write_cases(self, tables: Tables, batch: pa.Table, batch_df: DataFrame, merged: DataFrame | None) -> list[Case]:
        p, w = tables.pristine, tables.work
        cases = [ours.upsert_case("cow", "hoodie COW upsert", batch_df, p(COW), w(COW), ours.COW),
                 ours.upsert_case("mor", "hoodie MOR upsert", batch_df, p(MOR), w(MOR), ours.MOR)]
        if MOR_BUCKET in tables.formats:  # loaded with the seed batch's suite; the uniform batch uses it too
            cases.append(ours.upsert_case("mor_bucket", "hoodie MOR upsert, BUCKET index", batch_df, p(MOR_BUCKET),
                                          w(MOR_BUCKET), ours.MOR, ours.BUCKET_INDEX))
        if merged is not None:
            cases.append(reload_case("reload", "Spark parquet bulk reload (all rows, batch applied)", merged,
                                     p(RELOAD), w(RELOAD)))
        cases.append(peer_delta.merge_case("delta", "delta-rs MERGE", batch, p(DELTA), w(DELTA)))
        if merged is not None:
            cases += [peer_delta.merge_case("delta_cdf", "delta-rs MERGE, change data feed on", batch, p(DELTA_CDF),
                                            w(DELTA_CDF)),
                      peer_iceberg.upsert_case("iceberg", "pyiceberg upsert (SQLite catalog)", batch, p(ICEBERG),
                                               w(ICEBERG))]
        cases.append(floor.upsert_case("floor", "pyarrow floor: rewrite only the files holding updated keys", batch,
                                       p(PLAIN), w(PLAIN)))
        return cases

    def _fixed_cost(self, tables: Tables) -> None:
        row = one_row(self.rows, SEED)
        row_df = stage(self.spark, row, tables.root / "staging" / "one_row.parquet", cache=True)
        p, w = tables.pristine, tables.work
        self.measure(ONE_ROW, [
            ours.upsert_case("cow", "hoodie COW upsert of 1 row", row_df, p(COW), w(COW), ours.COW),
            ours.upsert_case("mor", "hoodie MOR upsert of 1 row", row_df, p(MOR), w(MOR), ours.MOR),
            peer_delta.merge_case("delta", "delta-rs MERGE of 1 row", row, p(DELTA), w(DELTA)),
        ])
        row_df.unpersist()

    def _reads(self, tables: Tables, batch: pa.Table, batch_df: DataFrame, expected_rows: int) -> None:
        """Read the tables as the seed batch left them: upserted once, and (MOR) compacted."""
        read = tables.root / "read"
        cow, mor, compacted, delta = read / "cow", read / "mor", read / "mor_compacted", read / "delta_cdf"
        for fmt, path in ((COW, cow), (MOR, mor)):
            restore(tables.pristine(fmt), path)
            ours.write(batch_df, path, ours.COW if fmt == COW else ours.MOR, "upsert")
        restore(mor, compacted)
        HoodieTable(str(compacted)).compact()
        restore(tables.pristine(DELTA_CDF), delta)
        peer_delta.merge(delta, batch)
        for label, path in (("COW", cow), ("MOR", mor), ("MOR compacted", compacted)):
            found = reads.snapshot(self.spark, path).count()
            if found != expected_rows:
                raise RuntimeError(f"{label} snapshot holds {found:,} rows, expected {expected_rows:,}")
            self.result.checks.append(f"{label} snapshot after the upsert: {found:,} rows, as expected")
        self.measure(READS, reads.incremental_cases(self.spark, cow)
                     + [peer_delta.change_data_feed_case("delta_cdf", "delta-rs change data feed of the MERGE version "
                                                         "(to Arrow)", delta, peer_delta.version(delta))]
                     + reads.snapshot_cases(self.spark, cow) + reads.merge_on_read_cases(self.spark, mor, compacted)
                     + [ours.compaction_case("compaction", "hoodie MOR compaction of the upsert", mor,
                                             tables.work("mor_compaction"))])

    def _merge_on_read_reads(self, tables: Tables, variant: Variant, batch_df: DataFrame) -> None:
        """MOR snapshots before and after compaction with ``variant``'s batch in the logs (the uniform batch
        leaves a log in every file slice, the seed batch in most)."""
        read = tables.root / "read"
        mor, compacted = read / f"mor_{variant.name}", read / f"mor_{variant.name}_compacted"
        restore(tables.pristine(MOR), mor)
        ours.write(batch_df, mor, ours.MOR, "upsert")
        restore(mor, compacted)
        HoodieTable(str(compacted)).compact()
        self.measure(f"{READS}/{variant.name}", reads.merge_on_read_cases(self.spark, mor, compacted))

    def _growth(self, tables: Tables, root: Path) -> None:
        """The smallest size's seed batch, the same rows at every size (at that size it is the seed batch)."""
        if self.growth_batch is None:
            return
        self.result.batch_rows[GROWTH] = self.growth_batch.num_rows
        self.result.batch_bytes[GROWTH] = parquet_bytes(self.growth_batch)
        fixed = stage(self.spark, self.growth_batch, root / "staging" / "growth.parquet", cache=True)
        p, w = tables.pristine, tables.work
        self.measure(GROWTH, [ours.upsert_case("cow", "hoodie COW upsert", fixed, p(COW), w(COW), ours.COW),
                              ours.upsert_case("mor", "hoodie MOR upsert", fixed, p(MOR), w(MOR), ours.MOR)])
        fixed.unpersist()
