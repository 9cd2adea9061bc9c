"""The record keys a commit added and removed, from its write stats (``WriteStat.record_keys``, which the write
tasks collect when an index kept outside the data files needs them: the record index, HBase).

A key added is where its file put it (a key written twice in one commit: its last file); a key removed and added
in one commit (moved to another partition under a global index) is where it was added, not removed."""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.timeline.commit_metadata import WriteStat

ADDED_SCHEMA = pa.schema([("key", pa.string()), ("partition", pa.string()), ("file_id", pa.string())])


def written_keys(stats: Iterable[WriteStat], removed_too: Iterable[pa.Array] = ()) -> tuple[pa.Table, pa.Array]:
    """``(added, removed)``: the keys added (``ADDED_SCHEMA``) and the distinct keys removed and not added again;
    ``removed_too``: more keys the commit removed (an overwrite's replaced file groups')."""
    added, removed = [ADDED_SCHEMA.empty_table()], [pa.array([], pa.string()), *removed_too]
    for stat in stats:
        changes = stat.record_keys
        if changes is None or not changes.num_rows:
            continue
        deleted = changes.column("deleted")
        keys = changes.filter(pc.invert(deleted)).column("key").combine_chunks()
        added.append(pa.table({"key": keys, "partition": pa.array([stat.partitionPath] * len(keys), pa.string()),
                               "file_id": pa.array([stat.fileId] * len(keys), pa.string())}, schema=ADDED_SCHEMA))
        removed.append(changes.filter(deleted).column("key").combine_chunks())
    inserts = pa.concat_tables(added)
    if inserts.num_rows:
        last = inserts.append_column("row", pa.array(range(inserts.num_rows))).group_by("key").aggregate(
            [("row", "max")])
        inserts = inserts.take(last.column("row_max"))
    deletes = pa.concat_arrays([a.cast(pa.string()) for a in removed])
    return inserts, pc.unique(deletes.filter(pc.invert(pc.is_in(deletes, inserts.column("key")))))
