"""The whole write in one Python process with pyarrow: for tests, small tables and for the data
source's own ``commit()`` (SQL inserts), where no SparkSession is available."""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.table.file_names import UNKNOWN_WRITE_TOKEN
from hoodie_datasource.write import tagging
from hoodie_datasource.write.file_group_writer import WriteTarget, write_file_group
from hoodie_datasource.write.keygen import PARTITION_PATH_COLUMN
from hoodie_datasource.write.records import FILE_ID_COLUMN
from hoodie_datasource.write.write_client import WriteSession, start_write


def _timed(session: WriteSession, stage: str, started: float) -> float:
    now = time.monotonic()
    session.stage_seconds[stage] = session.stage_seconds.get(stage, 0.0) + now - started
    return now


def tag_and_route(session: WriteSession, records: pa.Table) -> tuple[pa.Table, dict[tuple[str, str], WriteTarget]]:
    """Tag, profile, plan inserts and route: every record gets its target file id."""
    cfg = session.config
    t = time.monotonic()
    partitions = pc.unique(records.column(PARTITION_PATH_COLUMN)).to_pylist()
    files = session.key_ranges(None if cfg.index.is_global else partitions)
    if session.needs_tagging and files:
        cands = tagging.candidates(records, files, cfg.index.prune_by_ranges, cfg.index.is_global)
        locations = tagging.confirm(session.base_path, cands, cfg.index.uses_bloom)
        records = tagging.apply_tags(records, locations, cfg.index.is_global)
        if cfg.index.is_global:
            records = tagging.split_partition_moves(records)
    else:
        records = tagging.untagged(records)
    t = _timed(session, "tag", t)
    counts = tagging.insert_counts(records)
    plan = session.insert_plan(counts, files)
    routed = tagging.route(records, plan)
    targets = session.targets(files, plan)
    session.mark_inflight({p: {"inserts": n} for p, n in counts.items()})
    _timed(session, "profile", t)
    return routed, targets


def write_local(path: str, data: pa.Table, options: Mapping[str, str]) -> str:
    """Write ``data`` with the operation in ``options``; return the committed instant time."""
    session = start_write(path, options, data.schema)
    try:
        return _run(session, data)
    except BaseException:
        session.abort()
        raise


def _run(session: WriteSession, data: pa.Table) -> str:
    cfg = session.config
    records = tagging.with_keys(data, cfg.keygen, is_delete=cfg.operation == "delete")
    if cfg.operation == "delete_partition":
        partitions = pc.unique(records.column(PARTITION_PATH_COLUMN)).to_pylist()
        session.mark_inflight({})
        return session.commit([], session.replaced_file_groups(partitions))
    routed, targets = tag_and_route(session, records)
    t = time.monotonic()
    ctx = session.context()
    stats = []
    part_col = routed.column(PARTITION_PATH_COLUMN).combine_chunks()
    file_col = routed.column(FILE_ID_COLUMN).combine_chunks()
    group_key = pc.binary_join_element_wise(part_col, file_col, "\x00")
    encoded = pc.dictionary_encode(group_key)
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(encoded.dictionary) + 1))
    for code, joined in enumerate(encoded.dictionary.to_pylist()):
        partition, file_id = joined.split("\x00")
        rows = routed.take(pa.array(order[bounds[code]:bounds[code + 1]]))
        stat = write_file_group(ctx, targets[(partition, file_id)], rows, UNKNOWN_WRITE_TOKEN, 0)
        if stat is not None:
            stats.append(stat)
    _timed(session, "write", t)
    written_partitions = pc.unique(part_col).to_pylist() if len(part_col) else []
    return session.commit(stats, session.replaced_file_groups(written_partitions))
