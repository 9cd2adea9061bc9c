"""The CDC log of a rewritten base file (Hudi's ``HoodieMergeHandleWithChangeLog`` + ``HoodieCDCLogger``).

With ``hoodie.table.cdc.enabled`` a merge that rewrites a file group's base file (copy-on-write
updates and deletes; small-file inserts on either table type) also writes one CDC log file for the new
slice, ``.<fileId>_<instant>.log.1_<token>.cdc``, holding a CDC_DATA block with one record per changed
key: ``i`` (new key), ``u`` (updated), ``d`` (deleted), with the images the supplemental logging mode
asks for. Its path and size go into the write stat's ``cdcStats``. Like Hudi, no CDC log is written
when the readers can derive the changes from the files alone: a new file group, or a rewrite that
wrote only inserts and kept no record. Unlike Hudi, a rewrite that deleted records always gets one:
Hudi skips it when nothing is left or only inserts are, and then its own reader fails on the write
stat unless the operation was a delete ("There should be a cdc log file", ``HoodieCDCExtractor``), as
for an upsert whose ``_hoodie_is_deleted`` records emptied the file group. Merge-on-read log appends
never get one (``HoodieAppendHandle`` has no CDC logger): readers derive their changes from the log
blocks.

A stored record that wins over an incoming one by its ordering value is not logged (Hudi logs it
as an update whose before and after images are equal).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from hoodie_datasource.log.cdc_block import (
    AFTER,
    BEFORE,
    DATA_BEFORE,
    DATA_BEFORE_AFTER,
    DELETE,
    INSERT,
    OP,
    RECORD_KEY,
    TS_MS,
    UPDATE,
    cdc_schema,
    encode_cdc_block,
)
from hoodie_datasource.log.log_format import write_log_file
from hoodie_datasource.schema.avro_schema import arrow_to_avro_schema
from hoodie_datasource.storage.storage import join
from hoodie_datasource.table.file_names import CDC_LOG_SUFFIX, LogFileName
from hoodie_datasource.table.markers import create_marker
from hoodie_datasource.table.meta_columns import RECORD_KEY_COLUMN, conform
from hoodie_datasource.write.merge import MergeResult
from hoodie_datasource.write.targets import WriteContext, WriteTarget


def needs_cdc_log(ctx: WriteContext, existing: pa.Table | None, written: int, plan: MergeResult) -> bool:
    """``HoodieMergeHandleWithChangeLog.close``: a CDC log unless nothing was written or only inserts; here
    also whenever records were deleted (see the module's doc)."""
    return ctx.cdc_logging_mode is not None and existing is not None and (
        written not in (0, plan.num_inserts) or plan.num_deletes > 0)


def _image(rows: pa.Table, present: np.ndarray) -> pa.StructArray:
    """A nullable struct column of ``rows`` (one per CDC record; null where ``present`` is false)."""
    rows = rows.combine_chunks()
    arrays = [c.chunk(0) if c.num_chunks else pa.array([], c.type) for c in rows.columns]
    return pa.StructArray.from_arrays(arrays, fields=list(rows.schema), mask=pa.array(~present))


def write_cdc_log(ctx: WriteContext, target: WriteTarget, token: str, existing: pa.Table, fresh: pa.Table,
                  plan: MergeResult) -> dict[str, int]:
    """Write the CDC log of a merge and return its ``cdcStats`` entry (relative path -> bytes).
    ``fresh`` holds the merge's written rows: the updates (in ``plan.updated_from`` order), then the inserts."""
    data = ctx.data_schema
    n_upd, n_del, n_ins = plan.num_updates, plan.num_deletes, plan.num_inserts
    old_rows = np.concatenate([plan.updated_from, plan.deleted_rows, np.zeros(n_ins, np.int64)])
    new_rows = np.concatenate([np.arange(n_upd), np.zeros(n_del, np.int64), n_upd + np.arange(n_ins)])
    has_before = np.concatenate([np.ones(n_upd + n_del, bool), np.zeros(n_ins, bool)])
    has_after = np.concatenate([np.ones(n_upd, bool), np.zeros(n_del, bool), np.ones(n_ins, bool)])
    ops = [UPDATE] * n_upd + [DELETE] * n_del + [INSERT] * n_ins
    old_keys = existing.column(RECORD_KEY_COLUMN).take(pa.array(old_rows[:n_upd + n_del]))
    new_keys = fresh.column(RECORD_KEY_COLUMN).take(pa.array(new_rows[n_upd + n_del:]))
    keys = pa.concat_arrays([old_keys.combine_chunks().cast(pa.string()), new_keys.combine_chunks().cast(pa.string())])
    columns: dict[str, pa.Array] = {OP: pa.array(ops, pa.string())}
    mode = ctx.cdc_logging_mode
    if mode == DATA_BEFORE_AFTER:
        columns[TS_MS] = pa.repeat(pa.scalar(ctx.instant, pa.string()), len(ops))
    else:
        columns[RECORD_KEY] = keys
    if mode in (DATA_BEFORE, DATA_BEFORE_AFTER):
        before = conform(existing, data).take(pa.array(np.where(has_before, old_rows, 0)))
        columns[BEFORE] = _image(before, has_before)
    if mode == DATA_BEFORE_AFTER:
        after = conform(fresh, data).take(pa.array(np.where(has_after, new_rows, 0))) if fresh.num_rows else None
        columns[AFTER] = _image(after, has_after) if after is not None else pa.nulls(len(ops), pa.struct(list(data)))
    name = ctx.table_name
    schema = cdc_schema(mode, arrow_to_avro_schema(data, f"{name}_record", f"hoodie.{name}"))
    log_name = LogFileName(target.file_id, ctx.instant, 1, token).name() + CDC_LOG_SUFFIX
    relative = join(target.partition, log_name)
    create_marker(ctx.storage, ctx.instant, target.partition, log_name, "CREATE")
    size = write_log_file(ctx.storage, relative, [encode_cdc_block(pa.table(columns), ctx.instant, schema)])
    return {relative: size}
