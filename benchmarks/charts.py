"""PNG charts of the comparisons (matplotlib, Agg backend), saved next to the results markdown."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from benchmarks.size_result import GROWTH, ONE_ROW, READS, SizeResult  # noqa: E402
from benchmarks.timing import Measurement  # noqa: E402
from benchmarks.workload import SEED, VARIANTS  # noqa: E402

OURS = "#1f77b4"
OTHERS = "#b0b0b0"


def _bars(axes, title: str, group: dict[str, Measurement]) -> None:
    """Horizontal bars of the medians, whiskers from the fastest to the slowest run."""
    measured = list(group.values())[::-1]
    medians = [m.median for m in measured]
    low = [m.median - min(m.seconds) for m in measured]
    high = [max(m.seconds) - m.median for m in measured]
    colors = [OURS if m.label.startswith("hoodie") else OTHERS for m in measured]
    axes.barh([m.label for m in measured], medians, xerr=[low, high], color=colors, capsize=3)
    for y, m in enumerate(measured):
        axes.annotate(f"  {m.median:.2f} s", (max(m.seconds), y), va="center", fontsize=8)
    axes.set_title(title, fontsize=10)
    axes.set_xlabel("seconds (median; whiskers: fastest and slowest run)")
    axes.margins(x=0.25)


def _save(figure, folder: Path, file: str) -> str:
    figure.tight_layout()
    figure.savefig(folder / file, dpi=110)
    plt.close(figure)
    return file


def stacked(panels: list[tuple[str, dict[str, Measurement]]], folder: Path, file: str) -> str:
    """One panel of bars per group, stacked, each as tall as its number of bars."""
    heights = [len(group) + 1.5 for _, group in panels]
    figure, axes = plt.subplots(len(panels), 1, figsize=(10, 0.5 * sum(heights)), squeeze=False,
                                gridspec_kw={"height_ratios": heights})
    for row, (title, group) in enumerate(panels):
        _bars(axes[row][0], title, group)
    return _save(figure, folder, file)


def size_charts(result: SizeResult, folder: Path, name: str) -> dict[str, str]:
    """Charts of one size, by title; values are file names relative to ``folder``."""
    made = {}
    writes = [(f"Upsert of the {v} batch ({result.batch_rows[v]:,} rows) into {result.rows:,} rows", result.writes(v))
              for v in VARIANTS if result.writes(v)]
    if writes:
        made[f"upserts at {result.rows:,} rows"] = stacked(writes, folder, f"{name}-writes-{result.rows}.png")
    others = [(f"{title}, {result.rows:,} rows", result.groups[key])
              for key, title in ((READS, "Reads"), (ONE_ROW, "Upsert of 1 row"), (GROWTH, "Cost-growth batch"))
              if key in result.groups]
    if others:
        made[f"reads and fixed cost at {result.rows:,} rows"] = stacked(others, folder, f"{name}-reads-{result.rows}.png")
    return made


def growth_chart(results: dict[int, SizeResult], folder: Path, name: str) -> str | None:
    if len(results) < 2:
        return None
    figure, axes = plt.subplots(figsize=(7, 4))
    sizes = sorted(results)
    for key, label in (("cow", "hoodie COW upsert"), ("mor", "hoodie MOR upsert")):
        points = [(rows, (results[rows].groups.get(GROWTH) or results[rows].writes(SEED.name)).get(key))
                  for rows in sizes]
        points = [(rows, m.median) for rows, m in points if m is not None]
        if points:
            axes.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
    axes.set_xscale("log")
    axes.set_xlabel("table rows")
    axes.set_ylabel("seconds (median)")
    axes.set_title(f"The same {results[sizes[0]].batch_rows.get(SEED.name, 0):,}-row batch into growing tables")
    axes.set_ylim(bottom=0)
    axes.legend()
    return _save(figure, folder, f"{name}-growth.png")
