"""Deterministic trips-like workload: a base table and upsert batches in three variants.

Row ``i`` of a base table is a trip on day ``i % 30`` (the date partition ``dt``) starting
``(i // 30) * 100`` ms after that day's midnight, so rows of a day are in time order by id and any
table size up to ``MAX_ROWS`` uses the same ids, days and keys for its first rows. Keys are
uuid-like (a 48-bit multiplicative hash of the id, then the id) or, in the time-prefixed variant,
the trip's creation time in ms followed by that uuid-like key, so keys sort by time. ``ts`` (the
ordering field) is the creation time plus the record's version. ~10 payload columns of mixed types,
~100 bytes a row in memory.

Batches (``--rows`` picks the table; the batch is 1% updates and 0.5% inserts of it):

* seed: 90% of the updates in the latest 3 days, a late-arriving tail of 10% in the other 27; the
  inserts are new trips of the latest 3 days, later than every stored trip.
* uniform: updates drawn evenly from the whole table, inserts spread evenly over the 30 days.
* time_prefixed: the seed batch over a table with time-prefixed keys (new trips' keys sort after
  every stored key of their day, so key ranges prune the files they cannot be in).

Insert ids start at ``INSERT_ID_BASE``, above every base id, so the batch made for one size inserts
new keys into a table of any size: cost growth applies the same batch to every size.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

DAYS = 30
DAY_MS = 86_400_000
EPOCH_MS = 1_699_920_000_000  # 2023-11-14T00:00:00Z, the first day
ROW_SPACING_MS = 100
INSERTS_START_MS = 80_000_000  # 22:13 on the day: after the last base trip of a MAX_ROWS table
MAX_ROWS = DAYS * (INSERTS_START_MS // ROW_SPACING_MS)
INSERT_ID_BASE = 100_000_000_000
UPDATE_FRACTION = 0.01
INSERT_FRACTION = 0.005
RECENT_DAYS = 3
RECENT_SHARE = 0.9
KEY = "uuid"
ORDERING = "ts"
PARTITION = "dt"


@dataclass(frozen=True)
class Variant:
    name: str
    description: str
    uniform: bool = False
    time_prefixed: bool = False


SEED = Variant("seed", "1% updates, 90% of them into the latest 3 of 30 days and a late-arriving tail into the other 27; "
                       "0.5% inserts of new trips into the latest 3 days")
UNIFORM = Variant("uniform", "1% updates drawn evenly from the whole table; 0.5% inserts spread over all 30 days",
                  uniform=True)
TIME_PREFIXED = Variant("time_prefixed", "the seed batch over keys that begin with the trip's creation time "
                                         "(key ranges prune files)", time_prefixed=True)
VARIANTS = {v.name: v for v in (SEED, UNIFORM, TIME_PREFIXED)}


def _uuid_like(ids: np.ndarray) -> pa.Array:
    hashed = pc.utf8_lpad(pc.cast(pa.array(ids * 2654435761 % (1 << 48)), pa.string()), 15, "0")
    return pc.binary_join_element_wise(hashed, pc.utf8_lpad(pc.cast(pa.array(ids), pa.string()), 12, "0"), "-")


def _keys(ids: np.ndarray, created_ms: np.ndarray, time_prefixed: bool) -> pa.Array:
    if not time_prefixed:
        return _uuid_like(ids)
    return pc.binary_join_element_wise(pc.cast(pa.array(created_ms), pa.string()), _uuid_like(ids), "-")


def trips(ids: np.ndarray, days: np.ndarray, offsets_ms: np.ndarray, version: int, seed: int,
          time_prefixed: bool) -> pa.Table:
    """Trips ``ids`` created ``offsets_ms`` into their ``days``, as written by version ``version``."""
    rng = np.random.default_rng(seed)
    n = len(ids)
    created = EPOCH_MS + days * DAY_MS + offsets_ms
    day_starts = (EPOCH_MS // 1000 + days * 86_400).astype("datetime64[s]")
    return pa.table({
        KEY: _keys(ids, created, time_prefixed),
        ORDERING: pa.array(created + version, pa.int64()),
        PARTITION: pc.strftime(pa.array(day_starts), format="%Y-%m-%d"),
        "rider": pc.binary_join_element_wise("rider-", pc.cast(pa.array(ids % 5000), pa.string()), ""),
        "driver": pc.binary_join_element_wise("driver-", pc.cast(pa.array(ids % 700), pa.string()), ""),
        "fare": pa.array(np.round(rng.uniform(3, 90, n), 2)),
        "tip": pa.array(np.round(rng.uniform(0, 15, n), 2)),
        "distance_km": pa.array(rng.uniform(0.3, 40, n).astype(np.float32)),
        "passengers": pa.array(rng.integers(1, 5, n).astype(np.int32)),
        "begin_lat": pa.array(rng.uniform(-90, 90, n)),
        "begin_lon": pa.array(rng.uniform(-180, 180, n)),
        "paid": pa.array(rng.integers(0, 2, n).astype(bool)),
        "version": pa.array(np.full(n, version, np.int32)),
    })


def stored_trips(ids: np.ndarray, version: int, seed: int, time_prefixed: bool) -> pa.Table:
    """Trips of the base table (ids below ``MAX_ROWS``) at ``version``."""
    return trips(ids, ids % DAYS, (ids // DAYS) * ROW_SPACING_MS, version, seed, time_prefixed)


def base_table(rows: int, variant: Variant) -> pa.Table:
    if rows > MAX_ROWS:
        raise ValueError(f"at most {MAX_ROWS:,} rows fit the day layout")
    return stored_trips(np.arange(rows, dtype=np.int64), 0, 1, variant.time_prefixed)


def upsert_batch(rows: int, variant: Variant, seed: int = 7) -> pa.Table:
    """The variant's batch for a table of ``rows`` rows (updates first, then inserts)."""
    rng = np.random.default_rng(seed)
    ids = np.arange(rows, dtype=np.int64)
    n_updates, n_inserts = int(rows * UPDATE_FRACTION), int(rows * INSERT_FRACTION)
    if variant.uniform:
        updated = rng.choice(ids, n_updates, replace=False)
    else:
        recent = ids % DAYS >= DAYS - RECENT_DAYS
        n_recent = int(n_updates * RECENT_SHARE)
        updated = np.concatenate([rng.choice(ids[recent], n_recent, replace=False),
                                  rng.choice(ids[~recent], n_updates - n_recent, replace=False)])
    fresh = np.arange(n_inserts, dtype=np.int64)
    spread = DAYS if variant.uniform else RECENT_DAYS
    days = DAYS - spread + fresh % spread
    inserts = trips(INSERT_ID_BASE + fresh, days, INSERTS_START_MS + fresh // spread, 1, seed + 1, variant.time_prefixed)
    return pa.concat_tables([stored_trips(updated, 1, seed, variant.time_prefixed), inserts])


def one_row(rows: int, variant: Variant) -> pa.Table:
    """An update of the table's last trip: the fixed cost of a commit."""
    return stored_trips(np.array([rows - 1], dtype=np.int64), 2, 11, variant.time_prefixed)


def apply_batch(base: pa.Table, batch: pa.Table) -> pa.Table:
    """``base`` with ``batch`` upserted (batch rows are newer): what a full reload writes."""
    kept = base.filter(pc.invert(pc.is_in(base.column(KEY), value_set=batch.column(KEY))))
    return pa.concat_tables([kept, batch.select(base.column_names)])


def parquet_bytes(table: pa.Table) -> int:
    """Size of ``table`` as one snappy parquet file: the unit write amplification divides by."""
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.tell()
