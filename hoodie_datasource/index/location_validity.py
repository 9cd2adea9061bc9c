"""Which stored locations an index that keeps them outside the data files (the record index, HBase) may trust:
Apache Hudi's ``HoodieIndexUtils.checkIfValidCommit``, and a file group that is still live.

A location counts when its commit is a completed instant of the data table or older than its timeline (a failed
or rolled-back write's locations are ignored, so nothing needs to undo them), and names a live file group with a
base file (one a clustering or an overwrite replaced holds no current record)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.index.key_ranges import FileKeyRange
from hoodie_datasource.timeline.timeline import Timeline


def committed_instants(timeline: Timeline, instants: list[str]) -> np.ndarray:
    """Whether each of ``instants`` is a completed instant of ``timeline`` or older than it; an instant of the
    second-granularity format counts as itself with milliseconds added (``HoodieInstantTimeGenerator
    .DEFAULT_MILLIS_EXT``, or 000 as the record index converts it)."""
    committed = timeline.committed_upto(None)
    return np.array([committed(t) or (len(t) == 17 and t[14:] in ("000", "999") and committed(t[:14]))
                     for t in instants], dtype=bool)


def committed_mask(instants: pa.Array | pa.ChunkedArray, timeline: Timeline) -> pa.Array:
    """``committed_instants`` of each of ``instants`` (non-null), each distinct one decided once."""
    if isinstance(instants, pa.ChunkedArray):
        instants = instants.combine_chunks()
    encoded = pc.dictionary_encode(instants)
    committed = committed_instants(timeline, encoded.dictionary.to_pylist())
    return pa.array(committed[encoded.indices.to_numpy(zero_copy_only=False)], pa.bool_())


def valid_locations(instants: pa.Array | pa.ChunkedArray, partitions: pa.Array | pa.ChunkedArray,
                    file_ids: pa.Array | pa.ChunkedArray, timeline: Timeline, files: Sequence[FileKeyRange]
                    ) -> pa.Array:
    """Per location (its commit's instant, partition and file group), whether it counts."""
    live = pa.array(sorted({f"{f.partition}\x00{f.file_id}" for f in files}), pa.string())
    in_live = pc.is_in(pc.binary_join_element_wise(partitions, file_ids, "\x00"), value_set=live)
    return pc.and_(committed_mask(instants, timeline), pc.fill_null(in_live, False))
