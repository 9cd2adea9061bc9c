"""MkDocs hooks: the benchmark charts in ``benchmarks/results/`` are part of the site, where the
benchmark runs write them, without a second copy under docs/."""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"


def on_files(files, config):
    for chart in sorted(RESULTS.glob("*.png")):
        files.append(File.generated(config, f"benchmarks/results/{chart.name}", abs_src_path=str(chart)))
    return files
