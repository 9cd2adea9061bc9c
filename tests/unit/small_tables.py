"""Tiny (id, ts, p, v) tables for the no-JVM tests, and reading them back as (id, v) pairs."""

from __future__ import annotations

import pyarrow as pa

from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.table_reader import read_table


def batch(rows):
    ids, ts, ps, vs = zip(*rows)
    return pa.table({"id": list(ids), "ts": list(ts), "p": list(ps), "v": list(vs)})


def read_pairs(path, **cfg):
    out = read_table(path, ReadConfig(**cfg))
    return sorted(zip(out.column("id").to_pylist(), out.column("v").to_pylist()))
