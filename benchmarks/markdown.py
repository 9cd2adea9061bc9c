"""Markdown pieces every results file is made of: the run's opening, targets, machine, workload, tables of
measurements, loads and stage timings."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from benchmarks import index_stats
from benchmarks.size_result import SizeResult
from benchmarks.targets import Verdict
from benchmarks.timing import Measurement
from benchmarks.workload import Variant

MB = 2**20


@dataclass
class Run:
    command: str
    started: str  # UTC
    minutes: float
    load_before: str
    load_after: str
    note: str
    runs: int
    warmup: int
    machine: dict[str, str]
    versions: dict[str, str]
    memory_resettable: bool


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return lines + [""]


def _mb(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def measurements_table(group: dict[str, Measurement], batch_bytes: int | None) -> list[str]:
    """Times (and CPU seconds where they were read) and peak memory; bytes written where the cases wrote, and
    write amplification against ``batch_bytes`` when given."""
    writes = any(m.median_fact("bytes") is not None for m in group.values())
    cpu = any(m.cpu_seconds for m in group.values())
    headers = ["case", "median s", "runs s"] + (["median CPU s"] if cpu else []) + (["MB written"] if writes else [])
    headers += (["write amp."] if writes and batch_bytes else []) + ["driver +MB", "JVM peak MB", "workers peak MB"]
    rows = []
    for m in group.values():
        written = m.median_fact("bytes")
        cells = [m.label, f"{m.median:.2f}", ", ".join(f"{s:.2f}" for s in m.seconds)]
        if cpu:
            cells.append("-" if m.median_cpu is None else f"{m.median_cpu:.2f}")
        if writes:
            cells.append("-" if written is None else f"{written / MB:,.2f}")
        if writes and batch_bytes:
            cells.append("-" if written is None else f"{written / batch_bytes:,.1f}")
        cells += [_mb(m.peak("driver_mb")), _mb(m.peak("jvm_mb")) if m.spark else "-",
                  _mb(m.peak("workers_mb")) if m.spark else "-"]
        rows.append(cells)
    return markdown_table(headers, rows)


def stages_table(result: SizeResult) -> list[str]:
    rows = []
    for group_name, group in result.groups.items():
        for m in group.values():
            for run, (seconds, facts) in enumerate(zip(m.seconds, m.facts), 1):
                if "instant" not in facts:
                    continue
                stages = ", ".join(f"{k} {v:,}" for k, v in sorted(facts["stages"].items())
                                   if not k.startswith(index_stats.PREFIX)) or "-"
                rows.append([group_name, m.label, run, facts["instant"], f"{seconds * 1000:,.0f}", stages,
                             f"{facts['files']:,}", f"{facts['bytes'] / MB:,.1f}"])
    return markdown_table(["group", "case", "run", "instant", "wall ms", "stages in commit metadata (ms)",
                           "files written", "MB written"], rows)


def loads_table(result: SizeResult, labels: dict[str, str]) -> list[str]:
    """How long loading each table took (one run) and its size; ``labels`` name the loads by format."""
    rows = [[style, labels[fmt], f"{seconds:.1f}", f"{result.table_bytes[style][fmt] / MB:,.1f}"]
            for style, loads in result.load_seconds.items() for fmt, seconds in loads.items()]
    return markdown_table(["keys", "load", "seconds (1 run)", "MB on disk"], rows)


def opening(run: Run, title: str) -> list[str]:
    """The title, the command that reproduces the run, the machine's load and the run's note."""
    lines = [f"# {title}", "", f"`{run.command}` — started {run.started} UTC, {run.minutes:.1f} minutes.", "",
             f"Load average (1, 5, 15 min) at start: {run.load_before}; at end: {run.load_after}.", ""]
    return lines + ([f"**Note:** {run.note}", ""] if run.note else [])


def targets_section(title: str, verdicts: Sequence[Verdict]) -> list[str]:
    return [f"## {title}", ""] + markdown_table(["target", "where", "measured", "status"],
                                                [[v.target, v.where, v.measured, v.status] for v in verdicts])


def machine_section(run: Run) -> list[str]:
    return ["## Machine and versions", ""] + markdown_table(["", ""], list(run.machine.items())
                                                            + list(run.versions.items()))


def workload_section(variants: Iterable[Variant]) -> list[str]:
    lines = ["## Workload", "",
             "A trips-like table (`benchmarks/workload.py`): uuid-like string key `uuid`, ordering field `ts`, "
             "date partition `dt` over 30 days, 10 payload columns of mixed types. Batches:", ""]
    return lines + [f"- **{v.name}**: {v.description}" for v in variants] + [""]
