"""Merge-on-read: a file slice's base file merged with its log blocks, by record key.

Only blocks of completed instants (at or before the query's instant) count, and blocks a rollback
command block targets are dropped. Per key, the record with the highest ordering value wins and
ties go to the later write (the base file is oldest, then blocks in log order); a delete removes
the key unless a record was written after it. The merge sorts whole Arrow tables: no Python
work per record. Memory: one file slice (base + its logs) is held at a time.
"""

from __future__ import annotations

import logging
from collections.abc import Collection

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.log.data_block import decode_data_block
from hoodie_datasource.log.delete_block import decode_delete_block
from hoodie_datasource.log.log_format import BlockType, read_log_blocks
from hoodie_datasource.storage.parquet import read_parquet
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.meta_columns import RECORD_KEY_COLUMN, conform

logger = logging.getLogger(__name__)

SEQ = "__hoodie_seq"


def read_merged_slice(
    storage: Storage,
    file_slice: FileSlice,
    schema: pa.Schema,
    visible_instants: Collection[str],
    ordering_field: str | None,
) -> pa.Table:
    parts: list[pa.Table] = []
    if file_slice.base_file is not None:
        base = read_parquet(storage, file_slice.base_relative_path)
        parts.append(conform(base, schema))
    seqs = [0] * len(parts)
    delete_keys: list[pa.Array] = []
    delete_seqs: list[np.ndarray] = []
    blocks = []
    rolled_back: set[str] = set()
    for log in file_slice.log_files:
        for block in read_log_blocks(storage, file_slice.relative_path(log.name)):
            if block.instant_time not in visible_instants:
                continue
            if block.block_type == BlockType.COMMAND:
                rolled_back.add(block.target_instant_time)
            blocks.append(block)
    seq = 0
    for block in blocks:
        if block.instant_time in rolled_back or block.block_type == BlockType.COMMAND:
            continue
        seq += 1
        if block.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA):
            parts.append(conform(decode_data_block(block), schema))
            seqs.append(seq)
        elif block.block_type == BlockType.DELETE:
            deleted = decode_delete_block(block).column(RECORD_KEY_COLUMN).combine_chunks()
            delete_keys.append(deleted)
            delete_seqs.append(np.full(len(deleted), seq, np.int64))
        else:
            logger.warning("Skipping unsupported %s block in %s", block.block_type.name, file_slice.file_id)
    if not parts:
        return schema.empty_table()
    data = pa.concat_tables(parts)
    seq_col = np.concatenate([np.full(p.num_rows, s, np.int64) for p, s in zip(parts, seqs)])
    if len(parts) == 1 and not delete_keys:
        return data
    return _merge(data, seq_col, delete_keys, delete_seqs, ordering_field)


def _merge(data: pa.Table, seq: np.ndarray, delete_keys: list[pa.Array], delete_seqs: list[np.ndarray],
           ordering_field: str | None) -> pa.Table:
    keys = data.column(RECORD_KEY_COLUMN)
    sort_table = pa.table({"k": keys, SEQ: seq})
    sort_keys = [("k", "ascending")]
    if ordering_field and ordering_field in data.column_names:
        sort_table = sort_table.append_column("o", data.column(ordering_field))
        sort_keys.append(("o", "descending"))
    sort_keys.append((SEQ, "descending"))
    order = pc.sort_indices(sort_table, sort_keys=sort_keys).to_numpy()
    sorted_keys = pc.take(keys, pa.array(order))
    first = np.ones(len(order), dtype=bool)
    if len(order) > 1:
        first[1:] = ~pc.equal(sorted_keys[1:], sorted_keys[:-1]).to_numpy(zero_copy_only=False)
    winners = order[first]
    if delete_keys:
        deletes = pa.table({"k": pa.concat_arrays(delete_keys), "d": np.concatenate(delete_seqs)})
        last_delete = deletes.group_by("k").aggregate([("d", "max")])
        winner_table = pa.table({"k": pc.take(keys, pa.array(winners)), "w": seq[winners], "i": winners})
        joined = winner_table.join(last_delete, "k", join_type="left outer")
        alive = pc.or_(pc.is_null(joined.column("d_max")),
                       pc.greater(joined.column("w"), joined.column("d_max")))
        winners = np.sort(joined.filter(pc.fill_null(alive, True)).column("i").to_numpy())
    else:
        winners = np.sort(winners)
    return data.take(pa.array(winners))
