"""Hudi's statistics procedures: write amplification per commit (``stats_wa``) and the sizes of the table's files
per commit (``stats_file_sizes``), with Hudi's argument names and result columns (``StatsWriteAmplificationProcedure``,
``StatsFileSizeProcedure``; the CLI's ``StatsCommand``).
"""

from __future__ import annotations

import fnmatch
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

import numpy as np
import pyarrow as pa

from hoodie_datasource.hoodie_table import HoodieTable
from hoodie_datasource.metadata.validation import storage_listing
from hoodie_datasource.procedures.procedure import LIMIT, TABLE, Parameter, Procedure, Rows
from hoodie_datasource.procedures.timeline_procedures import commit_totals
from hoodie_datasource.table.file_names import data_file_instant
from hoodie_datasource.timeline.instant import COMMIT, REPLACE_COMMIT

TOTAL = "Total"
ALL = "ALL"


def _java_two_decimals(value: float) -> str:
    """``new DecimalFormat("#.00").format(float)``: two decimals, half-even, no leading zero (``.50``)."""
    text = str(Decimal(repr(float(np.float32(value)))).quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN))
    return text[1:] if text.startswith("0.") else text


def _amplification(written: int, upserted: int) -> str:
    return _java_two_decimals(written / upserted) if upserted > 0 else "0"


def _stats_wa(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    """Per completed commit and replacecommit of the active timeline (Hudi's ``getCommitAndReplaceTimeline``, so a
    MERGE_ON_READ table's delta commits are not counted: their updates go to logs), oldest first: records updated,
    records written and their ratio; then the ``Total`` row."""
    timeline = table.timeline()
    rows = []
    for instant in timeline.completed((COMMIT, REPLACE_COMMIT)):
        if instant.timestamp in timeline.archived:
            continue
        totals = commit_totals(timeline.read_metadata(instant))
        written, upserted = totals[4], totals[5]
        rows.append((instant.timestamp, upserted, written, _amplification(written, upserted)))
    rows = rows[:args["limit"]]
    upserted, written = sum(r[1] for r in rows), sum(r[2] for r in rows)
    return [*rows, (TOTAL, upserted, written, _amplification(written, upserted))]


def _histogram(instant: str, sizes: np.ndarray) -> tuple[Any, ...]:
    """A Dropwizard ``UniformSnapshot`` of ``sizes`` as Hudi's ``printFileSizeHistogram`` prints it: min, 10th,
    median, mean, 95th, max, count and the sample standard deviation."""
    values = np.sort(sizes.astype(np.float64))
    n = len(values)

    def quantile(q: float) -> float:  # UniformSnapshot.getValue
        pos = q * (n + 1)
        index = int(pos)
        if index < 1:
            return float(values[0])
        if index >= n:
            return float(values[-1])
        lower, upper = values[index - 1], values[index]
        return float(lower + (pos - np.floor(pos)) * (upper - lower))

    std = float(np.std(values, ddof=1)) if n > 1 else 0.0
    return (instant, int(values[0]), quantile(0.1), quantile(0.5), float(values.mean()), quantile(0.95),
            int(values[-1]), n, std)


def _stats_file_sizes(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    """Every data file in storage (every version, base and log files, as Hudi's glob finds them) of the partitions
    ``partition_path`` matches (a glob; all when empty), grouped by the instant in its name; one row per instant,
    oldest first, up to ``limit``, then the ``ALL`` row over every file."""
    pattern = args["partition_path"]
    by_instant: dict[str, list[int]] = {}
    for partition, files in storage_listing(table.table).items():
        if pattern and not fnmatch.fnmatchcase(partition, pattern):
            continue
        for name, size in files.items():
            by_instant.setdefault(data_file_instant(name) or "", []).append(size)
    if not by_instant:
        return []
    rows = [_histogram(t, np.array(by_instant[t])) for t in sorted(by_instant)][:args["limit"]]
    return [*rows, _histogram(ALL, np.concatenate([np.array(s) for s in by_instant.values()]))]


STATS_PROCEDURES = (
    Procedure("stats_wa", (TABLE, LIMIT), pa.schema([
        ("commit_time", pa.string()), ("total_upserted", pa.int64()), ("total_written", pa.int64()),
        ("write_amplification_factor", pa.string())]), _stats_wa,
              doc="Write amplification: per commit, the records written over the records updated (`Total` last)."),
    Procedure("stats_file_sizes", (TABLE, Parameter("partition_path", default=""), LIMIT), pa.schema([
        ("commit_time", pa.string()), ("min", pa.int64()), ("10th", pa.float64()), ("50th", pa.float64()),
        ("avg", pa.float64()), ("95th", pa.float64()), ("max", pa.int64()), ("num_files", pa.int32()),
        ("std_dev", pa.float64())]), _stats_file_sizes,
              doc="The sizes of the data files in storage per instant (min, percentiles, mean, max, count, "
                  "standard deviation), `ALL` last; `partition_path` is a glob of partitions."),
)
