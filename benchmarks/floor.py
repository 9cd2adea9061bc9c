"""The floor: what an upsert must do at least, in plain pyarrow over plain parquet files.

The table is one parquet file per ``dt=<day>`` folder (the partition column lives in the folder
name). For each day the batch touches, the key column of each file is read; a file holding updated
keys is rewritten (rows kept + the batch's rows for those keys) to a new file and the old one
removed; the batch's remaining rows (inserts) go to a new file of the day. No timeline, no meta
columns, no index, no ordering-field comparison (the batch is newer by construction), one thread
per core over the days.
"""

from __future__ import annotations

import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from benchmarks.copies import restore
from benchmarks.timing import Case
from benchmarks.workload import KEY, PARTITION


def load(base: pa.Table, root: Path) -> None:
    days = base.column(PARTITION)
    for day in pc.unique(days).to_pylist():
        folder = root / f"{PARTITION}={day}"
        folder.mkdir(parents=True)
        pq.write_table(base.filter(pc.equal(days, day)).drop_columns([PARTITION]), folder / "part-0.parquet")


def _upsert_day(folder: Path, rows: pa.Table) -> int:
    written = 0
    folder.mkdir(exist_ok=True)
    for path in sorted(folder.glob("*.parquet")):
        stored = pq.read_table(path, columns=[KEY]).column(0)
        hit = pc.is_in(stored, value_set=rows.column(KEY))
        if not pc.any(hit).as_py():
            continue
        found = pc.is_in(rows.column(KEY), value_set=stored)
        table = pq.read_table(path)
        rewritten = pa.concat_tables([table.filter(pc.invert(hit)), rows.filter(found).select(table.column_names)])
        written += _write(rewritten, folder)
        path.unlink()
        rows = rows.filter(pc.invert(found))
    if rows.num_rows:
        written += _write(rows, folder)
    return written


def _write(table: pa.Table, folder: Path) -> int:
    path = folder / f"part-{uuid.uuid4().hex}.parquet"
    pq.write_table(table, path)
    return path.stat().st_size


def upsert(root: Path, batch: pa.Table) -> int:
    """Apply ``batch``; returns the bytes written."""
    days = batch.column(PARTITION)
    work = [(root / f"{PARTITION}={day}", batch.filter(pc.equal(days, day)).drop_columns([PARTITION]))
            for day in pc.unique(days).to_pylist()]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        return sum(pool.map(lambda job: _upsert_day(*job), work))


def upsert_case(key: str, label: str, batch: pa.Table, pristine: Path, target: Path) -> Case:
    written: list[int] = []
    return Case(key, label, run=lambda: written.append(upsert(target, batch)),
                prepare=lambda: restore(pristine, target), facts=lambda: {"bytes": written.pop()}, spark=False)
