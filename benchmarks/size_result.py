"""What one table size's measurements produced, by group: the shape every report and target reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmarks.timing import Measurement

WRITES, ONE_ROW, READS, GROWTH, FIRST_LOAD = "writes", "one_row", "reads", "growth", "first_load"


@dataclass
class SizeResult:
    rows: int
    batch_rows: dict[str, int] = field(default_factory=dict)  # by variant, and GROWTH
    batch_bytes: dict[str, int] = field(default_factory=dict)  # the batch as one parquet file
    load_seconds: dict[str, dict[str, float]] = field(default_factory=dict)  # key style -> format -> s
    table_bytes: dict[str, dict[str, int]] = field(default_factory=dict)
    groups: dict[str, dict[str, Measurement]] = field(default_factory=dict)  # "writes/<variant>", ...
    checks: list[str] = field(default_factory=list)  # row counts verified before measuring reads

    def writes(self, variant: str) -> dict[str, Measurement]:
        return self.groups.get(f"{WRITES}/{variant}", {})
