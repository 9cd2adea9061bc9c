"""The concept diagrams, drawn from the tables of ``tables``: a timeline with commits, a compaction and a
clean; the file versions of a copy-on-write table under a snapshot and an incremental query; a
merge-on-read file group with its slices and logs under a snapshot and a read-optimized query."""

from __future__ import annotations

from pathlib import Path

from hoodie_datasource.timeline.instant import COMPACTION, State

from .svg import COLORS, Svg
from .tables import TableFacts, cow_table, mor_table


class Names:
    """Short stable names for the run's instant times (t1, t2, ...) and file groups (partition/A, ...)."""

    def __init__(self, instants: list[str], groups: list[str]):
        self.instants = {t: f"t{i}" for i, t in enumerate(sorted(set(instants)), 1)}
        self.groups = {}
        for i, group in enumerate(sorted(set(groups), key=lambda g: (g.rsplit("/", 1)[0], g))):
            partition = group.rsplit("/", 1)[0] + "/" if "/" in group else ""
            self.groups[group] = f"{partition}{chr(ord('A') + i)}"

    def t(self, instant: str) -> str:
        return self.instants[instant]

    def g(self, group: str) -> str:
        return self.groups[group]


def timeline_svg(table: TableFacts) -> str:
    names = Names([i.timestamp for i in table.instants], [])
    step, left = 112, 20
    svg = Svg(left * 2 + step * len(table.instants), 150, "The timeline of a merge-on-read table")
    svg.line(left - 6, 60, left + step * len(table.instants), 60, arrow=True)
    svg.text(left + step * len(table.instants) - 2, 50, "time", size=11, anchor="end")
    for n, instant in enumerate(table.instants):
        action = COMPACTION if instant.timestamp in table.compactions else instant.action
        done = instant.state is State.COMPLETED
        x = left + n * step
        svg.box(x, 74, step - 12, 30, COLORS[action] if done else COLORS["pending"], action, dashed=not done, size=11)
        svg.text(x + (step - 12) / 2, 52, names.t(instant.timestamp), size=12, anchor="middle", bold=True)
        svg.line(x + (step - 12) / 2, 56, x + (step - 12) / 2, 74)
        state = instant.state.value if not done else ("commit" if action == COMPACTION else "completed")
        svg.text(x + (step - 12) / 2, 122, state, size=10, anchor="middle")
    svg.text(left, 22, "instants: action, then state (a completed compaction is a commit)", size=12)
    return svg.render()


def cow_svg(table: TableFacts, incremental: tuple[str, str]) -> str:
    names = Names([i.timestamp for i in table.instants], [v.group for v in table.versions])
    times = sorted({i.timestamp for i in table.instants})
    groups = sorted({v.group for v in table.versions}, key=names.g)
    col, row, left, top = 150, 58, 130, 58
    begin, end = incremental
    latest = {g: max(v.instant for v in table.versions if v.group == g) for g in groups}
    in_range = {g: max((v.instant for v in table.versions if v.group == g and begin < v.instant <= end), default=None)
                for g in groups}
    svg = Svg(max(left + col * len(times) + 20, 800), top + row * len(groups) + 78,
              "File versions of a copy-on-write table under a snapshot and an incremental query")
    for c, t in enumerate(times):
        svg.text(left + c * col + (col - 20) / 2, top - 12, f"commit {names.t(t)}", size=12, anchor="middle", bold=True)
    for r, group in enumerate(groups):
        y = top + r * row
        svg.text(10, y + 26, f"file group {names.g(group)}", size=11)
        for version in (v for v in table.versions if v.group == group):
            x = left + times.index(version.instant) * col
            svg.box(x, y, col - 20, 38, COLORS["base"], f"{names.t(version.instant)}.parquet, {version.rows} rows",
                    size=10)
            if version.instant == latest[group]:
                svg.box(x - 3, y - 3, col - 14, 44, "none", stroke=COLORS["read"])
            if version.instant == in_range[group]:
                svg.box(x - 6, y - 6, col - 8, 50, "none", stroke=COLORS["rollback"], dashed=True)
    y = top + row * len(groups) + 16
    svg.box(left, y, 16, 12, "none", stroke=COLORS["read"])
    svg.text(left + 24, y + 11, "snapshot query: the latest version of each file group", size=11)
    svg.box(left, y + 22, 16, 12, "none", stroke=COLORS["rollback"], dashed=True)
    svg.text(left + 24, y + 33, f"incremental query ({names.t(begin)}, {names.t(end)}]: the rows those commits wrote, "
             "from the latest version they wrote", size=11)
    return svg.render()


def mor_svg(table: TableFacts) -> str:
    names = Names([i.timestamp for i in table.instants], [v.group for v in table.versions])
    (group, latest_base, latest_logs), = table.latest_slices
    slices = sorted({v.slice_instant for v in table.versions})
    svg = Svg(700, 100 + 70 * len(slices), "A merge-on-read file group: file slices of a base file and its logs")
    svg.text(10, 24, f"file group {names.g(group)}", size=13, bold=True)
    for r, base_instant in enumerate(slices):
        y = 44 + r * 70
        files = [v for v in table.versions if v.slice_instant == base_instant]
        svg.box(6, y - 6, 120 + 150 * len(files), 58, COLORS["muted"], stroke="#bdbdbd")
        svg.text(14, y + 28, f"slice {names.t(base_instant)}", size=11, bold=True)
        for n, v in enumerate(sorted(files, key=lambda f: (f.kind != "base", f.instant))):
            x = 110 + n * 150
            label = (f"base, {names.t(v.instant)}, {v.rows} rows" if v.kind == "base" else f"log, {names.t(v.instant)}")
            svg.box(x, y, 136, 40, COLORS[v.kind], label, size=10)
            if base_instant == latest_base and (v.kind == "base" or v.instant in latest_logs):
                svg.box(x - 3, y - 3, 142, 46, "none", stroke=COLORS["read"])
            if base_instant == latest_base and v.kind == "base":
                svg.box(x - 7, y - 7, 150, 54, "none", stroke=COLORS["rollback"], dashed=True)
    y = 44 + 70 * len(slices) + 6
    svg.box(10, y, 16, 12, "none", stroke=COLORS["read"])
    svg.text(34, y + 11, "snapshot query: the latest slice, its base file merged with its logs by record key", size=11)
    svg.box(10, y + 22, 16, 12, "none", stroke=COLORS["rollback"], dashed=True)
    svg.text(34, y + 33, "read-optimized query: the latest slice's base file only (not yet the logs)", size=11)
    return svg.render()


def render_all(work: Path) -> dict[str, str]:
    """File name (under docs/concepts/img) -> SVG text, from tables written under ``work``."""
    cow, incremental = cow_table(str(work / "cow"))
    group_facts, timeline_facts = mor_table(str(work / "mor"))
    return {"timeline.svg": timeline_svg(timeline_facts), "cow-versions.svg": cow_svg(cow, incremental),
            "mor-file-group.svg": mor_svg(group_facts)}
