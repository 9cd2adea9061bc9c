"""Reading a whole query result into one Arrow table, without Spark (tests, small tables, tools)."""

from __future__ import annotations

import pyarrow as pa

from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.file_reader import read_file_slice
from hoodie_datasource.read.planner import plan_read


def read_table(path: str, cfg: ReadConfig | None = None) -> pa.Table:
    plan = plan_read(path, cfg or ReadConfig())
    row_filter = plan.commit_filter()
    batches = [b for s in plan.slices for b in read_file_slice(plan, s, row_filter)]
    return pa.Table.from_batches(batches, schema=plan.schema) if batches else plan.schema.empty_table()
