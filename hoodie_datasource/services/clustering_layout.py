"""The order clustering writes a group's records in (``hoodie.layout.optimize.strategy``), on whole columns.

* ``linear``: by the sort columns, one after the other (Hudi's ``RowCustomColumnsSortPartitioner``);
* ``z-order``: by the bits of every sort column interleaved, most significant first (``ZOrderingUtil``);
* ``hilbert``: by the position on a Hilbert curve through all of them (``HilbertCurveUtils``, 63 bits a
  column), which keeps neighbours closer than z-order's jumps do.

A curve needs every column as an unsigned 64-bit coordinate that keeps its order. ``direct`` (Hudi's
default ``hoodie.layout.optimize.curve.build.method``) maps the values themselves, as
``SpaceCurveSortingHelper`` does: integers and timestamps with the sign bit flipped, floating point numbers by
their IEEE bits (negatives inverted), strings and binaries by their first 8 bytes, nulls last. ``sample``
ranks each value among a sorted sample of the column and spreads the ranks over the coordinate range, so that
columns of very different ranges weigh alike (Hudi's boundary-based interleaving).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.errors import HoodieConfigError

_SIGN = np.uint64(1 << 63)
_ALL = np.uint64(0xFFFF_FFFF_FFFF_FFFF)


def _string_prefix(values: pa.Array) -> np.ndarray:
    """The first 8 bytes of each value, big-endian, zero padded."""
    binary = pc.binary_slice(values.cast(pa.binary()), 0, 8) if not pa.types.is_large_binary(values.type) \
        else pc.binary_slice(values, 0, 8).cast(pa.binary())
    binary = pc.fill_null(binary, b"")
    lengths = pc.binary_length(binary).to_numpy(zero_copy_only=False).astype(np.int64)
    offsets = np.frombuffer(binary.buffers()[1], np.int32)[binary.offset:binary.offset + len(binary) + 1]
    data = np.frombuffer(binary.buffers()[2], np.uint8) if binary.buffers()[2] is not None else np.zeros(0, np.uint8)
    padded = np.zeros((len(binary), 8), np.uint8)
    if len(binary):
        columns = np.arange(8)
        take = columns[None, :] < lengths[:, None]
        index = np.minimum(offsets[:-1, None] + columns[None, :], max(len(data) - 1, 0))
        padded[take] = data[index[take]] if len(data) else 0
    return padded.view(">u8").reshape(-1).astype(np.uint64)


def ordered_bits(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """``values`` as unsigned 64-bit integers of the same order, nulls as the largest."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    typ = values.type
    if pa.types.is_dictionary(typ):
        values, typ = values.cast(typ.value_type), typ.value_type
    if pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_binary(typ) \
            or pa.types.is_large_binary(typ):
        bits = _string_prefix(values)
    elif pa.types.is_floating(typ):
        floats = pc.fill_null(values.cast(pa.float64()), 0.0).to_numpy(zero_copy_only=False)
        raw = floats.view(np.uint64)
        bits = np.where(raw & _SIGN, ~raw, raw | _SIGN)
    elif pa.types.is_boolean(typ):
        bits = pc.fill_null(values, False).to_numpy(zero_copy_only=False).astype(np.uint64)
    elif pa.types.is_unsigned_integer(typ):
        bits = pc.fill_null(values.cast(pa.uint64()), 0).to_numpy(zero_copy_only=False).astype(np.uint64)
    elif pa.types.is_integer(typ) or pa.types.is_temporal(typ) or pa.types.is_decimal(typ):
        as_int = values.cast(pa.int64()) if not pa.types.is_decimal(typ) else values.cast(pa.float64()).cast(pa.int64())
        bits = pc.fill_null(as_int, 0).to_numpy(zero_copy_only=False).astype(np.int64).view(np.uint64) ^ _SIGN
    else:
        raise HoodieConfigError(f"Cannot order by a column of type {typ} on a space-filling curve; sort columns "
                                "must be numbers, strings, binaries, booleans, dates or timestamps")
    if values.null_count:
        bits = np.where(values.is_null().to_numpy(zero_copy_only=False), _ALL, bits)
    return bits


def _ranked(bits: np.ndarray, sample_size: int) -> np.ndarray:
    """Each value's rank among a sorted sample of ``bits``, spread over the 64-bit range."""
    rng = np.random.default_rng(0)
    sample = np.unique(bits if len(bits) <= sample_size else rng.choice(bits, sample_size, replace=False))
    ranks = np.searchsorted(sample, bits, side="left").astype(np.float64)
    scale = float(np.uint64(1) << np.uint64(62)) / max(len(sample), 1)
    return (ranks * scale).astype(np.uint64) << np.uint64(1)


def _interleave(coordinates: list[np.ndarray], bits: int) -> list[np.ndarray]:
    """The words (most significant first) of the coordinates' top ``bits`` bits interleaved, first column first."""
    n = len(coordinates)
    total = bits * n
    words = [np.zeros(len(coordinates[0]), np.uint64) for _ in range((total + 63) // 64)]
    position = 0
    for bit in range(63, 63 - bits, -1):
        shift = np.uint64(bit)
        for c in coordinates:
            value = (c >> shift) & np.uint64(1)
            word, offset = divmod(position, 64)
            words[word] |= value << np.uint64(63 - offset)
            position += 1
    return words


def _hilbert_transposed(coordinates: list[np.ndarray], bits: int) -> list[np.ndarray]:
    """Skilling's ``AxestoTranspose`` over whole columns: the Hilbert index of each row, in transposed form
    (its bits interleaved as z-order interleaves coordinates), for ``bits`` bits a coordinate (the top ones)."""
    x = [(c >> np.uint64(64 - bits)).copy() for c in coordinates]
    n = len(x)
    q = np.uint64(1) << np.uint64(bits - 1)
    while q > 1:
        p = q - np.uint64(1)
        for i in range(n):
            has = (x[i] & q) != 0
            x0_flipped = x[0] ^ p
            t = (x[0] ^ x[i]) & p
            if i == 0:
                x[0] = np.where(has, x0_flipped, x[0])
                continue
            x[0] = np.where(has, x0_flipped, x[0] ^ t)
            x[i] = np.where(has, x[i], x[i] ^ t)
        q >>= np.uint64(1)
    for i in range(1, n):
        x[i] ^= x[i - 1]
    t = np.zeros_like(x[0])
    q = np.uint64(1) << np.uint64(bits - 1)
    while q > 1:
        t = np.where((x[n - 1] & q) != 0, t ^ (q - np.uint64(1)), t)
        q >>= np.uint64(1)
    return [(xi ^ t) << np.uint64(64 - bits) for xi in x]


def layout_order(records: pa.Table, columns: tuple[str, ...], strategy: str, build_method: str = "direct",
                 sample_size: int = 200_000) -> np.ndarray:
    """The row order clustering writes ``records`` in: indices into ``records``."""
    missing = [c for c in columns if c not in records.column_names]
    if missing:
        raise HoodieConfigError(f"hoodie.clustering.plan.strategy.sort.columns names {missing}, which the table "
                                f"does not have; its columns: {', '.join(records.column_names)}")
    if not columns or records.num_rows == 0:
        return np.arange(records.num_rows)
    if strategy == "linear" or len(columns) == 1:
        # nulls first, as Spark's ascending sort places them: each column is preceded by its validity (false
        # sorts first), which every pyarrow from the floor on reads the same way (where null placement is given
        # moved from SortOptions to each sort key in pyarrow 25)
        keys = {}
        for i, c in enumerate(columns):
            keys[f"valid{i}"] = pc.is_valid(records.column(c))
            keys[f"value{i}"] = records.column(c)
        return pc.sort_indices(pa.table(keys), sort_keys=[(k, "ascending") for k in keys]).to_numpy()
    coordinates = [ordered_bits(records.column(c)) for c in columns]
    if build_method == "sample":
        coordinates = [_ranked(c, sample_size) for c in coordinates]
    if strategy == "z-order":
        words = _interleave(coordinates, 64)
    elif strategy == "hilbert":
        words = _interleave(_hilbert_transposed(coordinates, 63), 63)
    else:
        raise HoodieConfigError(f"Unknown hoodie.layout.optimize.strategy {strategy!r}; valid values: linear, "
                                "z-order, hilbert")
    return np.lexsort(words[::-1])
