"""What ../shared/hudi-tables/README.md says about each real Apache Hudi table, parsed once, and the
reads the content tests compare: our core reader, hudi-rs (the ``hudi`` package) and the README.

The README lists, per table: the snapshot row count with a few columns of every row (uuids cut to
an 8-character prefix), the row count as of every completed write instant (time travel), and the
count of an incremental read from the first instant. Lance base-file tables are left out: we do not
read Lance files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import pyarrow as pa

from tests.conftest import SHARED_TABLES, require_module, require_shared

META_PREFIX = "_hoodie_"


def hudi_rs(base: str, options=None) -> pa.Table:
    """What hudi-rs reads (all columns), as one Arrow table."""
    hudi = require_module("hudi")
    built = hudi.HudiTableBuilder.from_base_uri(base).build()
    batches = [b for b in (built.read(options) if options is not None else built.read()) if b.num_rows]
    return pa.Table.from_batches(batches) if batches else pa.table({})


@dataclass(frozen=True)
class TableSpec:
    zip: str
    version: int
    table_type: str  # "COW" | "MOR"
    snapshot_count: int
    shown_columns: tuple[str, ...]
    shown_rows: tuple[tuple[str, ...], ...]  # each as the README prints it, in shown_columns order
    instants: tuple[tuple[str, int], ...]  # (instant, rows as of it), in timeline order
    incremental_count: int | None  # hudi-rs' answer for (first instant, latest]

    @property
    def stem(self) -> str:
        return self.zip.rsplit("/", 1)[-1].removesuffix(".zip")


def _parse(section: str) -> TableSpec:
    zip_rel = section.split("`", 1)[0]
    version, table_type = re.search(r"- table v(\d+) (COW|MOR)", section).groups()
    snapshot = re.search(r"\*\*snapshot rows: (\d+)\*\*(?: \(columns shown: ([^)]*)\))?", section)
    columns = tuple(c.strip() for c in (snapshot.group(2) or "").split(",") if c.strip())
    rows = []
    for line in re.findall(r"^    - (.*)$", section, re.M):
        values = dict(pair.split("=", 1) for pair in line.split(", "))
        rows.append(tuple(values[c] for c in columns))
    travel = re.search(r"\(time travel\): (.*)", section)
    instants = tuple((ts, int(n)) for ts, n in re.findall(r"(\d{17})→(\d+)", travel.group(1) if travel else ""))
    incremental = re.search(r"incremental read \(first commit, latest\]: (\d+) rows", section)
    return TableSpec(zip_rel, int(version), table_type, int(snapshot.group(1)), columns, tuple(rows), instants,
                     int(incremental.group(1)) if incremental else None)


@lru_cache(maxsize=1)
def readme_tables() -> dict[str, TableSpec]:
    """Every table the README details, by zip path (Lance tables included)."""
    text = (require_shared() / "README.md").read_text(encoding="utf-8")
    details = text.split("\n## Details\n", 1)[1].split("\n## core_fixtures", 1)[0]
    specs = [_parse(section) for section in details.split("\n### `")[1:]]
    return {spec.zip: spec for spec in specs}


def non_lance_zips() -> list[str]:
    """The README's tables we read (parameters; the placeholder when the shared tables are missing)."""
    from tests.conftest import MISSING_SHARED

    if not SHARED_TABLES.is_dir():
        return [MISSING_SHARED]
    return sorted(z for z in readme_tables() if "lance" not in z)


def data_rows(table: pa.Table) -> list[tuple]:
    """All data columns (meta columns dropped), as (column, value) tuples, sorted: a comparison of
    keys and values that ignores row order and column order."""
    columns = sorted(c for c in table.column_names if not c.startswith(META_PREFIX))
    rows = table.select(columns).to_pylist()
    return sorted((tuple(r.items()) for r in rows), key=repr)


def shown(value) -> str:
    """A value as the README prints it (Python's str; uuids are compared by prefix)."""
    return str(value)


def matches_readme(spec: TableSpec, table: pa.Table) -> tuple[list, list]:
    """The README's snapshot rows and ours, each as sorted tuples of the shown columns (uuids cut
    to the README's prefix), for an ``==``."""
    def cut(column: str, value) -> str:
        text = shown(value)
        return text[:8] + "…" if column == "uuid" else text

    ours = sorted(tuple(cut(c, r[c]) for c in spec.shown_columns) for r in table.select(
        list(spec.shown_columns)).to_pylist())
    return ours, sorted(spec.shown_rows)
