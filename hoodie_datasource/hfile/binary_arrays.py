"""Byte strings held as Arrow binary arrays, taken apart into and built from numpy offsets and bytes: the
form in which cells are cut out of blocks, written into them and searched, with no Python object per cell."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from hoodie_datasource.errors import InvalidRecordError
from hoodie_datasource.log.avro_codec import gather_ranges


def as_binary(values) -> pa.Array:
    """``values`` (an Arrow array or chunked array of binary or string, or a sequence of ``bytes`` or ``str``)
    as one Arrow binary array; strings are their UTF-8 bytes."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not isinstance(values, pa.Array):
        values = pa.array([v.encode() if isinstance(v, str) else bytes(v) for v in values], pa.binary())
    if pa.types.is_large_binary(values.type) or pa.types.is_large_string(values.type):
        values = values.cast(pa.large_binary())
    elif not pa.types.is_binary(values.type):
        values = values.cast(pa.binary())
    if values.null_count:
        raise InvalidRecordError("An HFile cell cannot have a null key or value")
    return values


def parts(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The ``len(values) + 1`` offsets (int64) of a binary array and the bytes they index."""
    width = np.int64 if pa.types.is_large_binary(values.type) else np.int32
    _, offsets_buffer, data_buffer = values.buffers()
    offsets = np.frombuffer(offsets_buffer, width, len(values) + 1, values.offset * width().itemsize).astype(np.int64)
    data = np.frombuffer(data_buffer, np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    return offsets, data


def lengths_of(values: pa.Array) -> np.ndarray:
    return np.diff(parts(values)[0])


def slices(source: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """``source[starts[i]:starts[i] + lengths[i]]`` for each i, as a binary array."""
    data = gather_ranges(source, starts, lengths)
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    kind, width = (pa.large_binary(), np.int64) if offsets[-1] >= 1 << 31 else (pa.binary(), np.int32)
    return pa.Array.from_buffers(kind, len(lengths), [None, pa.py_buffer(offsets.astype(width)), pa.py_buffer(data)])
