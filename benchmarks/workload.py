"""Deterministic trips-like workload: uuid-like keys, event time, 30 date partitions, ~10 payload
columns (~100 bytes/row), and upsert batches as the seed's story tells them."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

DAYS = 30
BASE_EPOCH_MS = 1_700_000_000_000


def _keys(ids: np.ndarray, time_prefixed: bool, days: np.ndarray) -> pa.Array:
    hexed = pc.utf8_lpad(pc.cast(pa.array(ids * 2654435761 % (1 << 48)), pa.string()), 15, "0")
    base = pc.binary_join_element_wise(hexed, "-", pc.utf8_lpad(pc.cast(pa.array(ids), pa.string()), 12, "0"), "")
    if time_prefixed:
        day = pc.utf8_lpad(pc.cast(pa.array(days), pa.string()), 3, "0")
        return pc.binary_join_element_wise(day, base, "-")
    return base


def trips(ids: np.ndarray, version: int, seed: int, time_prefixed: bool = False, days: np.ndarray | None = None) -> pa.Table:
    rng = np.random.default_rng(seed)
    n = len(ids)
    if days is None:
        days = (ids % DAYS).astype(np.int64)
    return pa.table({
        "uuid": _keys(ids, time_prefixed, days),
        "ts": pa.array(BASE_EPOCH_MS + days * 86_400_000 + version * 1000 + (ids % 1000), pa.int64()),
        "dt": pc.strftime(pa.array((BASE_EPOCH_MS // 1000 + days * 86400).astype("datetime64[s]")), format="%Y-%m-%d"),
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


def base_table(rows: int, time_prefixed: bool = False) -> pa.Table:
    return trips(np.arange(rows, dtype=np.int64), 0, 1, time_prefixed)


def upsert_batch(rows: int, update_fraction: float = 0.01, insert_fraction: float = 0.005, seed: int = 7,
                 uniform: bool = False, time_prefixed: bool = False) -> pa.Table:
    """1% updates (mostly the latest 3 days, a tail of late data into older ones) + 0.5% inserts."""
    rng = np.random.default_rng(seed)
    n_upd = int(rows * update_fraction)
    n_ins = int(rows * insert_fraction)
    all_ids = np.arange(rows, dtype=np.int64)
    if uniform:
        upd = rng.choice(all_ids, n_upd, replace=False)
    else:
        recent = all_ids[all_ids % DAYS >= DAYS - 3]
        late = all_ids[all_ids % DAYS < DAYS - 3]
        n_recent = int(n_upd * 0.9)
        upd = np.concatenate([rng.choice(recent, n_recent, replace=False),
                              rng.choice(late, n_upd - n_recent, replace=False)])
    ins = np.arange(rows, rows + n_ins, dtype=np.int64)
    return pa.concat_tables([trips(upd, 1, seed, time_prefixed), trips(ins, 1, seed + 1, time_prefixed)])


def size_arguments(description: str):
    """The command line every benchmark takes: --rows, --runs and --out (the results folder)."""
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows in the base table")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (the median is reported)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"), help="results folder")
    return parser.parse_args()
