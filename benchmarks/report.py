"""The results as markdown: targets, figures, index counts, stage timings, method."""

from __future__ import annotations

from benchmarks import index_stats
from benchmarks.fixtures import LOADS
from benchmarks.markdown import (
    MB,
    Run,
    loads_table,
    machine_section,
    markdown_table,
    measurements_table,
    opening,
    stages_table,
    targets_section,
    workload_section,
)
from benchmarks.size_result import FIRST_LOAD, GROWTH, ONE_ROW, READS, WRITES, SizeResult
from benchmarks.targets import Verdict
from benchmarks.timing import Measurement
from benchmarks.workload import SEED, VARIANTS


def _index(result: SizeResult) -> list[str]:
    rows = []
    for group in result.groups:
        name = group.removeprefix(f"{WRITES}/")
        counts = index_stats.median_run(result.writes(name).get("cow")) if group.startswith(f"{WRITES}/") else None
        if counts is None:
            continue
        rows.append([name, f"{counts.keys:,}", f"{counts.files:,}", f"{counts.pairs_by_partition:,}",
                     f"{counts.pairs_in_range:,}", f"{counts.pairs_pruned:,}", f"{counts.files_pruned:,}",
                     f"{counts.bloom_probes:,}", f"{counts.bloom_positives:,}", f"{counts.exact_checks:,}",
                     f"{counts.false_positives_checked:,}", f"{counts.stored:,}",
                     _throughput(result.writes(name), "cow"), _throughput(result.writes(name), "mor")])
    return markdown_table(["batch", "keys", "files in touched partitions", "(key, file) pairs by partition",
                           "pairs in key range", "pairs pruned by ranges", "files pruned by ranges", "bloom probes",
                           "bloom positives", "exact key checks", "false positives (of those checked)",
                           "keys found (updates)", "COW tagging keys/s", "MOR tagging keys/s"], rows)


def _throughput(group: dict[str, Measurement], key: str) -> str:
    counts = index_stats.median_run(group.get(key))
    speed = counts.keys_per_second if counts else None
    return "-" if speed is None else f"{speed:,.0f}"


def _growth(results: dict[int, SizeResult]) -> list[str]:
    smallest = min(results)
    base: dict[str, float] = {}
    rows = []
    for rows_count, result in sorted(results.items()):
        group = result.groups.get(GROWTH) or result.writes(SEED.name)
        cells = [f"{rows_count:,}"]
        for key in ("cow", "mor"):
            measured = group.get(key)
            if measured is None:
                cells += ["-", "-"]
                continue
            base.setdefault(key, measured.median)
            cells += [f"{measured.median:.2f}", f"{measured.median / base[key]:.2f}x"]
        rows.append(cells)
    batch = results[smallest].batch_rows.get(SEED.name)
    return [f"The seed batch of the {smallest:,}-row table ({batch:,} rows) upserted into each size.",
            ""] + markdown_table(["table rows", "COW upsert s", "COW vs smallest", "MOR upsert s", "MOR vs smallest"], rows)


def _size(result: SizeResult, charts: dict[str, str]) -> list[str]:
    lines = [f"## Figures at {result.rows:,} rows", ""]
    for name in VARIANTS:
        group = result.writes(name)
        if group:
            size = result.batch_bytes[name]
            lines += [f"### Upsert of the {name} batch ({result.batch_rows[name]:,} rows, {size / MB:.1f} MB as parquet)",
                      ""] + measurements_table(group, size)
    if FIRST_LOAD in result.groups:
        lines += [f"### First load: the {result.rows:,} rows from one cached DataFrame (write amp. against its "
                  f"{result.batch_bytes[FIRST_LOAD] / MB:.1f} MB parquet file)", ""] + measurements_table(
            result.groups[FIRST_LOAD], result.batch_bytes[FIRST_LOAD])
    if ONE_ROW in result.groups:
        lines += ["### Fixed cost of a commit: upsert of 1 row", ""] + measurements_table(result.groups[ONE_ROW], None)
    if READS in result.groups:
        lines += ["### Reads (the tables as the seed batch left them)", ""] + measurements_table(result.groups[READS],
                                                                                                 None)
        lines += [f"Checked first: {'; '.join(result.checks)}.", ""]
    for name in VARIANTS:
        if f"{READS}/{name}" in result.groups:
            lines += [f"### Merge-on-read snapshots with the {name} batch in the logs", ""] + measurements_table(
                result.groups[f"{READS}/{name}"], None)
    if GROWTH in result.groups:
        lines += [f"### Upsert of the cost-growth batch ({result.batch_rows[GROWTH]:,} rows: the smallest size's seed "
                  "batch)", ""] + measurements_table(result.groups[GROWTH], result.batch_bytes[GROWTH])
    lines += ["### Index work of tagging each batch", "",
              "From the COW commit's `extraMetadata` (`hoodie.stage.index.<count>`, summed over the tasks that "
              "tagged; the run with the median tagging time). A key only one bloom filter claims goes to that file "
              "group unchecked, so false positives are known only among the exact key checks (keys several filters "
              "claim). Tagging keys/s = batch keys / the commit's `tag_task` time (summed over the tasks that "
              "tagged; median run).", ""] + _index(result)
    lines += ["### Loading the base table (context: one run each)", ""] + loads_table(result, LOADS)
    lines += ["### Stage timings of each measured commit", "",
              "From each commit's `extraMetadata` (`hoodie.stage.<stage>.ms`; `_task` stages are summed over the tasks).",
              ""] + stages_table(result)
    for title, file in charts.items():
        lines += [f"![{title}]({file})", ""]
    return lines


METHOD = """## How it is measured

- One warm local[2] Spark session for the whole run; delta-rs, pyiceberg and the pyarrow floor run in the
  same Python process (the driver). Each group of cases is interleaved: one run of every case per round
  (A, B, C, A, B, C, ...); the first {warmup} round(s) are not counted; figures are the median of {runs} runs.
- Every write starts from a fresh copy of its table, restored at the same path before the timer starts
  (plain file copies with new modification times, so hoodie's per-process cache of bloom filters and keys
  starts cold each run, as it is after copy-on-write rewrites those files). Reads run on tables prepared
  once: upserted with the seed batch, and a merge-on-read copy compacted.
- Library defaults for every format (hoodie: bloom index with key-range pruning, inline cleaning on, no
  inline compaction; delta-rs: MERGE on `uuid` and `dt`, so it prunes partitions; pyiceberg: upsert on `uuid`).
- Bulk reload: Spark `partitionBy("dt").mode("overwrite").parquet` of all rows with the batch applied; the
  merged rows are computed and cached beforehand, so only the rewrite is timed (the reload's best case).
- Floor: pyarrow alone over a plain parquet copy (a file per day): read the key column of each file of the
  days the batch touches, rewrite the files holding updated keys, write the inserts to new files.
- Incremental: hoodie's incremental query from the previous commit; the filtered scan is a snapshot read
  with `_hoodie_commit_time > <previous commit>`; delta-rs reads its change data feed from the MERGE's
  version into Arrow. Spark reads end in the `noop` sink (every row materialized, then dropped).
- Snapshot reads run in a session with the jvm-shim: Spark's parquet scan reads the base files our planner
  lists (the Python reader only slices with log files), and reads prune columns and take filters (the
  `through the Python reader` cases turn the parquet scan off). `format("hoodie")` returns the five
  `_hoodie_*` meta columns and is held to parquet's scan of every column; a SQL table's `SELECT *` returns
  the data columns only and is held to parquet's scan of those.
- Bytes written: hoodie from the commit metadata (`totalWriteBytes` of the write stats, data and log files);
  other formats from the files new or changed under the table after the run (data, logs and metadata).
  Write amplification = bytes written / the batch as one snappy parquet file.
- CPU s: CPU time of the Python driver and of the JVM with its Python workers, read from `/proc` before and
  after each run (outside the timed region); waiting for a core is not in it.
- Peak memory, per run: Linux `VmHWM` (what `getrusage` reports as `ru_maxrss`), reset through
  `/proc/PID/clear_refs` before each run{resettable}. driver +MB = the Python driver's peak minus its RSS
  at the start of the run (delta-rs, pyiceberg, the floor and our driver-side planning run there); JVM and
  workers = peak RSS of the Spark JVM and the sum over the live Python workers (shown for Spark cases).
  The tables show the highest run.
"""


def render(run: Run, results: dict[int, SizeResult], verdicts: list[Verdict], charts: dict[int, dict[str, str]],
           growth_chart: str | None) -> str:
    lines = opening(run, "hoodie-datasource side by side with delta-rs, pyiceberg and plain Spark / pyarrow")
    for issue, title in ((15, "Targets (issue 15)"), (5, "Earlier targets (issue 5)")):
        lines += targets_section(title, [v for v in verdicts if v.issue == issue])
    lines += machine_section(run) + workload_section(VARIANTS.values())
    for rows in sorted(results):
        lines += _size(results[rows], charts.get(rows, {}))
    if len(results) > 1:
        lines += ["## Cost growth", ""] + _growth(results)
        if growth_chart:
            lines += [f"![cost growth]({growth_chart})", ""]
    lines += [METHOD.format(warmup=run.warmup, runs=run.runs,
                            resettable="" if run.memory_resettable else " (not possible here: lifetime peaks)")]
    return "\n".join(lines)
