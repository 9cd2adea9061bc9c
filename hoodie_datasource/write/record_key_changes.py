"""The record keys a written file adds to and removes from the table, which the metadata table's record index
takes from the write stats (Hudi's ``WriteStatus.getWrittenRecordDelegates``): collected only while the
record index is kept (``WriteContext.tracks_record_keys``), as Hudi's write statuses track their records only
then (``HoodieTable.shouldTrackSuccessRecords``)."""

from __future__ import annotations

import pyarrow as pa

from hoodie_datasource.write.targets import WriteContext


def record_key_changes(ctx: WriteContext, inserted: pa.Array | pa.ChunkedArray | None,
                       deleted: pa.Array | pa.ChunkedArray | None = None) -> pa.Table | None:
    """``key`` and ``deleted`` of the keys a file added and removed; None when the record index is not kept."""
    if not ctx.tracks_record_keys:
        return None
    parts = [pa.array([], pa.string())]
    flags = []
    for keys, is_deleted in ((inserted, False), (deleted, True)):
        if keys is not None and len(keys):
            keys = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
            parts.append(keys.cast(pa.string()))
            flags.append(pa.array([is_deleted] * len(keys), pa.bool_()))
    return pa.table({"key": pa.concat_arrays(parts),
                     "deleted": pa.concat_arrays(flags) if flags else pa.array([], pa.bool_())})
