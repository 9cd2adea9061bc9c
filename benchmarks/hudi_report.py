"""The results against Apache Hudi 0.15 as markdown, with PNG charts: targets, figures, Hudi's settings, method."""

from __future__ import annotations

from pathlib import Path

from benchmarks import charts, peer_hudi
from benchmarks.hudi_driver import HUDI_SPARK_CONF
from benchmarks.hudi_suite import READ_WARMUP, load_labels
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
from benchmarks.size_result import FIRST_LOAD, ONE_ROW, READS, SizeResult
from benchmarks.targets import Verdict
from benchmarks.workload import VARIANTS

METHOD = """## How it is measured

- Two processes on the same machine, each a warm local[2] Spark session with the same settings
  (`spark.sql.shuffle.partitions` {shuffle}, driver memory {memory}, UTC): ours (pyspark 4, the jvm-shim) and
  Apache Hudi's (pyspark 3.5 with the `hudi-spark3.5-bundle_2.12-{version}.jar`, `benchmarks/hudi_driver.py`),
  started once and kept for the whole run. Each group of cases is interleaved across both processes (ours, Hudi
  with its metadata table, Hudi without, ours, ...); the first {warmup} round(s) are not counted ({read_warmup}
  for the reads: each JVM's JIT takes about ten scans to compile one, and a round reads Hudi's two
  tables); figures are the median of {runs} runs.
- The same rows on both sides: the workload's base table and batches are written once as parquet files; each
  side reads a file into a DataFrame it caches and counts before any run, so a write's time is the write of
  cached rows. Hudi's seconds are measured in its process around `df.write.format("hudi")...save()` (a read:
  `spark.read.format("hudi")...load()` to the `noop` sink or the collected `count(*)`, `sum(fare)`), so the pipe
  between the processes is not in them; ours are measured the same way around `df.write.format("hoodie")`.
- Each side upserts into tables its own `bulk_insert` made (loaded once, kept as pristine copies); every
  write starts from a fresh copy restored at the same path before the timer starts. Reads run on tables each
  side upserted once with the seed batch; before any read is timed, every table's snapshot is checked
  against the workload: its row count and `sum(fare)` equal those of the base table with the batch applied
  (computed with pyarrow), and the incremental query returns exactly the batch's rows.
- A restored copy has the same file names at the same path, so after the warm-up round our tagging finds
  the key ranges and bloom filters it decoded from those files in its caches (per process and per host,
  `benchmarks/copies.py`), as it does for the files an earlier write left untouched; Hudi keeps no such
  cache and reads the footers on every write. The commit table below shows our `tag_task` time.
- CPU s: CPU time of the processes a case ran in, read from `/proc` before and after the run (outside the
  timed region): ours, our Python driver and our JVM with its Python workers; Hudi's, its Python driver and
  its JVM. Waiting for a core is not in it, so on a busy machine it says more than wall time; the targets
  are judged on wall time, with the ratio of CPU times beside each.
- Bytes written: `totalWriteBytes` of the commit's write stats (data and log files; Hudi's metadata table
  is not in them). Peak memory as in the other results: per run, Linux `VmHWM` reset through
  `/proc/PID/clear_refs`{resettable}; JVM = the JVM the case ran in (ours or Hudi's), driver +MB = our Python
  driver.
"""


def settings_section() -> list[str]:
    """Hudi's options and session settings as the cases pass them."""
    by_config = {key for config in peer_hudi.CONFIGS for key in config.options}
    rows = [[key, value] for key, value in peer_hudi.write_options(peer_hudi.COW, "upsert", peer_hudi.METADATA_ON).items()
            if key not in by_config]
    rows += [[key, f"{value} ({config.label})"] for config in peer_hudi.CONFIGS for key, value in config.options.items()]
    return ["## Apache Hudi's settings", "",
            "Hudi's defaults but for the workload's fields, the index ours uses (BLOOM, as Hudi recommends for "
            "Spark) and our parquet codec (snappy; Hudi 0.15's default is gzip). `operation` is `bulk_insert` for "
            "the first load; reads pass the configuration's `hoodie.metadata.enable`, and the incremental query "
            "`hoodie.datasource.query.type=incremental` with `hoodie.datasource.read.begin.instanttime` the commit "
            "before the last. Session: " + ", ".join(f"`{k}={v}`" for k, v in HUDI_SPARK_CONF.items()) + ".",
            ""] + markdown_table(["write option (COW upsert)", "value"], rows)


def _size(result: SizeResult, chart_files: dict[str, str]) -> list[str]:
    lines = [f"## Figures at {result.rows:,} rows", ""]
    if FIRST_LOAD in result.groups:
        lines += [f"### First load: bulk_insert of the {result.rows:,} rows (write amp. against their "
                  f"{result.batch_bytes[FIRST_LOAD] / MB:.1f} MB parquet file)", ""]
        lines += measurements_table(result.groups[FIRST_LOAD], result.batch_bytes[FIRST_LOAD])
    for name in VARIANTS:
        group = result.writes(name)
        if group:
            size = result.batch_bytes[name]
            lines += [f"### Upsert of the {name} batch ({result.batch_rows[name]:,} rows, {size / MB:.1f} MB as "
                      "parquet)", ""] + measurements_table(group, size)
    if ONE_ROW in result.groups:
        lines += ["### Fixed cost of a commit: upsert of 1 row", ""] + measurements_table(result.groups[ONE_ROW], None)
    if READS in result.groups:
        lines += ["### Reads (each side's tables after its upsert of the seed batch)", ""]
        lines += measurements_table(result.groups[READS], None) + [f"Checked first: {'; '.join(result.checks)}.", ""]
    lines += ["### Loading the tables the upserts start from (context: one run each)", ""]
    lines += loads_table(result, load_labels())
    lines += ["### Each measured commit", "",
              "From each commit's metadata: our stage timings (`hoodie.stage.<stage>.ms` in `extraMetadata`; `_task` "
              "stages are summed over the tasks; Hudi records none), the files and bytes its write stats list.", ""]
    lines += stages_table(result)
    return lines + [line for title, file in chart_files.items() for line in (f"![{title}]({file})", "")]


def size_charts(result: SizeResult, folder: Path, name: str) -> dict[str, str]:
    """The writes, then the reads and the 1-row upsert, as stacked bars; file names by title."""
    made = {}
    writes = [(f"First load: bulk_insert of {result.rows:,} rows", result.groups.get(FIRST_LOAD, {}))]
    writes += [(f"Upsert of the {v} batch ({result.batch_rows[v]:,} rows)", result.writes(v))
               for v in VARIANTS if v in result.batch_rows]
    writes = [(title, group) for title, group in writes if group]
    if writes:
        made[f"writes at {result.rows:,} rows"] = charts.stacked(writes, folder, f"{name}-writes-{result.rows}.png")
    others = [(title, result.groups[key]) for key, title in ((READS, "Reads"), (ONE_ROW, "Upsert of 1 row"))
              if key in result.groups]
    if others:
        made[f"reads and the 1-row upsert at {result.rows:,} rows"] = charts.stacked(
            others, folder, f"{name}-reads-{result.rows}.png")
    return made


def render(run: Run, results: dict[int, SizeResult], verdicts: list[Verdict], chart_files: dict[int, dict[str, str]],
           variants: list[str], shuffle_partitions: int, driver_memory: str) -> str:
    lines = opening(run, f"hoodie-datasource side by side with Apache Hudi {peer_hudi.VERSION}")
    lines += targets_section("Targets (issue 27, section 5)", verdicts)
    lines += machine_section(run) + settings_section() + workload_section(VARIANTS[v] for v in variants)
    for rows in sorted(results):
        lines += _size(results[rows], chart_files.get(rows, {}))
    lines += [METHOD.format(shuffle=shuffle_partitions, memory=driver_memory, version=peer_hudi.VERSION,
                            warmup=run.warmup, read_warmup=max(run.warmup, READ_WARMUP), runs=run.runs,
                            resettable="" if run.memory_resettable else " (not possible here: lifetime peaks)")]
    return "\n".join(lines)
