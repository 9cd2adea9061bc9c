"""What a table service returns: the instants it completed (or scheduled), and the table after it, so the
next service, or the caller, goes on from there without listing the timeline again where the service knows
what it changed."""

from __future__ import annotations

from dataclasses import dataclass

from hoodie_datasource.table.table import Table


@dataclass(frozen=True)
class ServiceRun:
    instants: tuple[str, ...]
    table: Table
