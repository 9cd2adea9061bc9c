"""What a command prints: aligned tables for people, or exactly one JSON document for scripts (``--output json``),
on stdout; progress bars and logs on stderr, so stdout stays what a script parses.

Tables are drawn with rich (column widths from the contents, numbers right-aligned); when stdout is not a terminal
the table is not squeezed to a terminal's width, so piped output keeps whole values.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

TABLE = "table"
JSON = "json"
FORMATS = (TABLE, JSON)
_PIPED_WIDTH = 10_000  # no wrapping when stdout is a file or a pipe: rich uses only the width the table needs


def _console(stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    return Console(file=stream, width=None if stream.isatty() else _PIPED_WIDTH, highlight=False)


def _is_number(typ: pa.DataType) -> bool:
    return pa.types.is_integer(typ) or pa.types.is_floating(typ)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


@dataclass(frozen=True)
class Output:
    """The format a command prints in (``table`` or ``json``)."""

    format: str = TABLE

    @property
    def is_json(self) -> bool:
        return self.format == JSON

    def document(self, value: Any) -> None:
        """``value`` as the command's one JSON document on stdout."""
        sys.stdout.write(json.dumps(value, indent=2, default=str) + "\n")

    def rows(self, rows: pa.Table, title: str | None = None) -> None:
        """``rows``: a JSON array of objects (one per row, the columns as keys), or an aligned table."""
        if self.is_json:
            self.document(rows.to_pylist())
            return
        self.table(rows.schema.names, [list(r.values()) for r in rows.to_pylist()], title,
                   right=[_is_number(f.type) for f in rows.schema])

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None,
              right: Sequence[bool] | None = None) -> None:
        """An aligned table on stdout (human output only)."""
        shown = Table(*headers, title=title, box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False,
                      show_edge=False)
        for column, is_right in zip(shown.columns, right or [False] * len(headers)):
            column.justify = "right" if is_right else "left"
            column.no_wrap = not sys.stdout.isatty()
        for row in rows:
            shown.add_row(*(_cell(v) for v in row))
        console = _console()
        with console.capture() as captured:
            console.print(shown)
        sys.stdout.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))

    def message(self, text: str) -> None:
        """A line for people: on stdout in table output; on stderr under ``--output json``, whose stdout holds
        only the document."""
        _console(stderr=self.is_json).print(text, markup=False)


@contextmanager
def progress_bar(description: str, total: int | None = None) -> Iterator[Progress]:
    """A progress bar on stderr (a spinner while ``total`` is unknown), gone when the work ends; use
    ``bar.update(bar.task_ids[0], completed=n, total=t)``."""
    console = _console(stderr=True)
    bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=console, transient=True, disable=not console.is_terminal)
    with bar:
        bar.add_task(description, total=total)
        yield bar
