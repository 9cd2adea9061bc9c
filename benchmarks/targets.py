"""The targets of issue 5 as ratios of medians from the same run, each met or not met.

Targets set at one size (5M rows) are judged at that size when it was run; at other sizes the
ratio is shown as indicative. All write ratios use the seed batch."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from benchmarks.suite import FIRST_LOAD, GROWTH, ONE_ROW, READS, SizeResult
from benchmarks.workload import SEED

TARGET_SIZE = 5_000_000
GROWTH_FROM, GROWTH_TO = 1_000_000, 20_000_000


@dataclass(frozen=True)
class Verdict:
    target: str
    where: str
    measured: str
    met: bool | None  # None: not measured
    judged: bool = True  # False: measured at another size than the target's (indicative)

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
              passes: Callable[[float], bool], shown: Callable[[float], str], at: int | None = None) -> Iterator[Verdict]:
    found = False
    for rows, result in results.items():
        value = measure(result)
        if value is None:
            continue
        found = True
        judged = at in (None, rows)
        where = f"{rows:,} rows" if judged else f"{rows:,} rows (the target is at {at:,})"
        yield Verdict(target, where, shown(value), passes(value), judged)
    if not found or (at is not None and at not in results):
        yield Verdict(target, f"{at:,} rows (not run)" if at else "-", "-", None)


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


def verdicts(results: dict[int, SizeResult]) -> list[Verdict]:
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
    for label, key in (("COW bulk_insert <= 1.5x Spark's partitioned parquet write", "cow"),
                       ("MOR bulk_insert <= 1.5x Spark's partitioned parquet write", "mor")):
        found += _per_size(results, label, lambda r, k=key: _ratio(r, (FIRST_LOAD, k), (FIRST_LOAD, "spark")),
                           lambda v: v <= 1.5, ratio)
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
