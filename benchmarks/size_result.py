"""What one table size's measurements produced, by group: the shape every report and target reads."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from benchmarks.cpu_time import CpuClock
from benchmarks.memory import PeakMemory
from benchmarks.timing import Case, Measurement, interleave

logger = logging.getLogger(__name__)

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


def measure(result: SizeResult, group: str, cases: list[Case], runs: int, warmup: int, memory: PeakMemory,
            cpu: CpuClock | None) -> None:
    """``cases`` interleaved (``timing.interleave``), kept in ``result`` as ``group``."""
    logger.info("%s rows: measuring %s (%d cases x %d runs after %d warm-up)", f"{result.rows:,}", group, len(cases),
                runs, warmup)
    result.groups[group] = interleave(group, cases, runs, warmup, memory, cpu)
