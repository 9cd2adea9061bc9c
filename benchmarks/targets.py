"""The targets of issues 15 and 5 as ratios of medians from the same run, each met or not met.

Targets set at some sizes (5M and 20M rows) are judged at those sizes when they were run; at other
sizes the ratio is shown as indicative. Issue 15's write and read targets hold for the seed and the
uniform batch alike; issue 5's write ratios use the seed batch."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from benchmarks.peer_hudi import CONFIGS, VERSION, case_key
from benchmarks.size_result import FIRST_LOAD, GROWTH, ONE_ROW, READS, WRITES, SizeResult
from benchmarks.workload import SEED, UNIFORM

TARGET_SIZE = 5_000_000
GROWTH_FROM, GROWTH_TO = 1_000_000, 20_000_000


@dataclass(frozen=True)
class Verdict:
    target: str
    where: str
    measured: str
    met: bool | None  # None: not measured
    judged: bool = True  # False: measured at another size than the target's (indicative)
    issue: int = 5  # the issue that set the target

    @property
    def status(self) -> str:
        if self.met is None:
            return "not measured"
        verdict = "met" if self.met else "**not met**"
        return verdict if self.judged else f"indicative: {verdict}"


def _median(result: SizeResult, group: str, key: str) -> float | None:
    measured = result.groups.get(group, {}).get(key)
    return measured.median if measured else None


def _ratio(result: SizeResult, numerator: tuple[str, str], denominator: tuple[str, str]) -> float | None:
    top, bottom = _median(result, *numerator), _median(result, *denominator)
    return top / bottom if top is not None and bottom else None


def _per_size(results: dict[int, SizeResult], target: str, measure: Callable[[SizeResult], float | None],
              passes: Callable[[float], bool], shown: Callable[[float], str], at: int | tuple[int, ...] | None = None,
              issue: int = 5) -> Iterator[Verdict]:
    sizes = (at,) if isinstance(at, int) else at
    found = False
    for rows, result in results.items():
        value = measure(result)
        if value is None:
            continue
        found = True
        judged = sizes is None or rows in sizes
        where = f"{rows:,} rows" if judged else f"{rows:,} rows (the target is at {_sizes(sizes)})"
        yield Verdict(target, where, shown(value), passes(value), judged, issue)
    missing = [] if sizes is None else [n for n in sizes if n not in results]
    if not found and not missing:
        yield Verdict(target, "-", "-", None, issue=issue)
    for rows in missing:
        yield Verdict(target, f"{rows:,} rows (not run)", "-", None, issue=issue)


def _sizes(sizes: tuple[int, ...]) -> str:
    return " and ".join(f"{n:,}" for n in sizes)


def _growth(results: dict[int, SizeResult]) -> Verdict:
    target = "COW upsert time grows < 1.5x from 1M to 20M rows (same batch)"
    sizes = sorted(results)

    def cow(rows: int) -> float | None:
        return _median(results[rows], GROWTH, "cow") or _median(results[rows], f"writes/{SEED.name}", "cow")

    if len(sizes) < 2 or cow(sizes[0]) is None or cow(sizes[-1]) is None:
        return Verdict(target, "needs two sizes: --rows 1000000,20000000", "-", None)
    ratio = cow(sizes[-1]) / cow(sizes[0])
    judged = sizes[0] == GROWTH_FROM and sizes[-1] == GROWTH_TO
    return Verdict(target, f"{sizes[0]:,} -> {sizes[-1]:,} rows", f"{ratio:.2f}x", ratio < 1.5, judged)


def _tagging_rate(result: SizeResult, variant: str, key: str) -> float | None:
    """Keys tagged per second of task time: the batch's keys / the median run's ``tag_task`` stage (summed
    over the tasks, so per core)."""
    measured = result.writes(variant).get(key)
    tag_ms = sorted(f["stages"]["tag_task"] for f in measured.facts if f.get("stages", {}).get("tag_task")) \
        if measured else []
    return result.batch_rows[variant] / (tag_ms[len(tag_ms) // 2] / 1000) if tag_ms else None


def issue15(results: dict[int, SizeResult]) -> list[Verdict]:
    """Issue 15: ahead of delta-rs on every upsert, bulk loads at Spark's speed, a bucket index, tagging at
    hashing speed, merge-on-read snapshots near compacted speed."""
    ratio = "{:.2f}x".format
    big = (5_000_000, 20_000_000)
    found: list[Verdict] = []

    def add(target: str, measure: Callable[[SizeResult], float | None], passes: Callable[[float], bool],
            shown: Callable[[float], str] = ratio, at: int | tuple[int, ...] | None = None) -> None:
        found.extend(_per_size(results, target, measure, passes, shown, at, issue=15))

    for variant in (SEED.name, UNIFORM.name):
        writes = f"writes/{variant}"
        for label, key, theirs, limit, at in (
                ("COW upsert <= 1.0x delta-rs MERGE", "cow", "delta", 1.0, big),
                ("COW upsert <= 1.3x the pyarrow floor", "cow", "floor", 1.3, big),
                ("MOR upsert (BLOOM) <= 0.3x delta-rs MERGE", "mor", "delta", 0.3, big),
                ("MOR upsert (BUCKET) <= 0.15x delta-rs MERGE", "mor_bucket", "delta", 0.15, 20_000_000)):
            add(f"{label}, {variant} batch", lambda r, k=key, t=theirs, w=writes: _ratio(r, (w, k), (w, t)),
                lambda v, m=limit: v <= m, at=at)
        reads = READS if variant == SEED.name else f"{READS}/{variant}"
        add(f"MOR snapshot full scan before compaction <= 1.5x after compaction, {variant} batch",
            lambda r, g=reads: _ratio(r, (g, "mor_scan"), (g, "mor_compacted_scan")), lambda v: v <= 1.5, at=big)
        for label, key in (("COW", "cow"), ("MOR", "mor")):
            add(f"Tagging >= 500k keys/s per core ({label} upsert, BLOOM, random uuids), {variant} batch",
                lambda r, k=key, v=variant: _tagging_rate(r, v, k), lambda v: v >= 500_000, "{:,.0f} keys/s".format,
                at=20_000_000)
    for label, key in (("COW", "cow"), ("MOR", "mor")):
        add(f"{label} bulk_insert <= 1.5x Spark's partitioned parquet write",
            lambda r, k=key: _ratio(r, (FIRST_LOAD, k), (FIRST_LOAD, "spark")), lambda v: v <= 1.5)
    for label, key, limit in (("MOR", "mor", 0.3), ("COW", "cow", 0.5)):
        add(f"Fixed cost of a commit (1-row {label} upsert into 5M rows) <= {limit} s",
            lambda r, k=key: _median(r, ONE_ROW, k), lambda v, m=limit: v <= m, "{:.2f} s".format, at=TARGET_SIZE)
    return found


def verdicts(results: dict[int, SizeResult]) -> list[Verdict]:
    """Issue 15's targets, then issue 5's."""
    return issue15(results) + issue5(results)


def issue5(results: dict[int, SizeResult]) -> list[Verdict]:
    writes = f"writes/{SEED.name}"
    times = "{:.1f}x faster".format
    ratio = "{:.2f}x".format
    found = list(_per_size(results, "COW upsert >= 10x faster than the bulk reload, at 5M rows",
                           lambda r: _ratio(r, (writes, "reload"), (writes, "cow")), lambda v: v >= 10, times,
                           at=TARGET_SIZE))
    found.append(_growth(results))
    for label, key, limit in (("COW upsert <= 1x delta-rs MERGE", "cow", 1.0),
                              ("MOR upsert <= 0.3x delta-rs MERGE", "mor", 0.3)):
        found += _per_size(results, label, lambda r, k=key: _ratio(r, (writes, k), (writes, "delta")),
                           lambda v, m=limit: v <= m, ratio)
    for label, key in (("COW upsert faster than pyiceberg upsert", "cow"),
                       ("MOR upsert faster than pyiceberg upsert", "mor")):
        found += _per_size(results, label, lambda r, k=key: _ratio(r, (writes, k), (writes, "iceberg")),
                           lambda v: v < 1, ratio)
    found += _per_size(results, "Incremental pull of the last commit (1% of the rows) <= 0.1x a full scan",
                       lambda r: _ratio(r, (READS, "incremental"), (READS, "cow_scan")), lambda v: v <= 0.1, ratio)
    for label, ours_key, theirs in (("Snapshot full scan <= 1.3x spark.read.parquet", "cow_scan", "parquet_scan"),
                                    ("Snapshot count + sum <= 1.3x spark.read.parquet", "cow_agg", "parquet_agg"),
                                    ("SQL snapshot full scan <= 1.3x spark.read.parquet (data columns)", "sql_scan",
                                     "parquet_data_scan"),
                                    ("SQL snapshot count + sum <= 1.3x spark.read.parquet", "sql_agg", "parquet_agg")):
        found += _per_size(results, label, lambda r, a=ours_key, b=theirs: _ratio(r, (READS, a), (READS, b)),
                           lambda v: v <= 1.3, ratio)
    for label, key in (("COW 1-row upsert into 5M rows < 2 s", "cow"), ("MOR 1-row upsert into 5M rows < 2 s", "mor")):
        found += _per_size(results, label, lambda r, k=key: _median(r, ONE_ROW, k), lambda v: v < 2,
                           "{:.2f} s".format, at=TARGET_SIZE)
    return found


HUDI_READS = (("COW snapshot full scan", "cow_scan"), ("COW snapshot count + sum(fare)", "cow_agg"),
              ("COW incremental query of the last commit", "incremental"), ("MOR snapshot full scan", "mor_scan"),
              ("MOR snapshot count + sum(fare)", "mor_agg"))


def _cpu_ratio(result: SizeResult, group: str, ours: str, theirs: str) -> float | None:
    top, bottom = (result.groups.get(group, {}).get(key) for key in (ours, theirs))
    if top is None or bottom is None or top.median_cpu is None or not bottom.median_cpu:
        return None
    return top.median_cpu / bottom.median_cpu


def against_hudi(results: dict[int, SizeResult], variants: tuple[str, ...] = (SEED.name, UNIFORM.name)) -> list[Verdict]:
    """Issue 27: our time against Apache Hudi 0.15's on the same rows, in each of Hudi's configurations, judged
    on the medians of wall time; the ratio of the medians of CPU time is shown beside it."""
    found: list[Verdict] = []

    def add(target: str, group: str, key: str, limit: float) -> None:
        for config in CONFIGS:
            for rows, result in results.items():
                theirs = case_key(config, key)
                wall, cpu = _ratio(result, (group, key), (group, theirs)), _cpu_ratio(result, group, key, theirs)
                if wall is not None:
                    shown = f"{wall:.2f}x" + ("" if cpu is None else f" (CPU {cpu:.2f}x)")
                    found.append(Verdict(f"{target} <= {limit}x Hudi {VERSION}'s ({config.label})", f"{rows:,} rows",
                                         shown, wall <= limit, issue=27))

    for variant in variants:
        for label, key in (("COW", "cow"), ("MOR", "mor")):
            add(f"{label} upsert of the {variant} batch", f"{WRITES}/{variant}", key, 0.5)
    add("COW bulk_insert of the base table", FIRST_LOAD, "cow", 1.0)
    for label, key in HUDI_READS:
        add(label, READS, key, 1.0)
    for label, key in (("COW", "cow"), ("MOR", "mor")):
        add(f"{label} upsert of 1 row", ONE_ROW, key, 0.25)
    return found
