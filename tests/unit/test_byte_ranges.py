"""The Avro codec's byte-range helpers (``gather_ranges``, ``scatter_ranges``) against Python's slicing: short
values (indexed byte by byte), long ones (copied value by value) and a mix, across the chunk bound."""

from __future__ import annotations

import numpy as np
import pytest

from hoodie_datasource.log.avro_codec import gather_ranges, scatter_ranges


@pytest.mark.parametrize("lengths", [
    [0, 3, 1, 7, 0, 12] * 50,  # short values
    [430_000, 500_000, 8, 120_000, 1 << 23, 5],  # bloom-filter sized, one past the chunk bound
    [5000] * 3000 + [0, 1] * 1000,  # long values, then many short ones, in one chunk
])
def test_gather_and_scatter_move_each_value(lengths):
    rng = np.random.default_rng(len(lengths))
    lengths = np.array(lengths, np.int64)
    gaps = rng.integers(0, 9, len(lengths))
    starts = np.cumsum(lengths + gaps) - lengths  # values apart, in order
    source = rng.integers(0, 256, int(starts[-1] + lengths[-1]) + 3, dtype=np.uint8)
    expected = b"".join(source[s:s + n].tobytes() for s, n in zip(starts.tolist(), lengths.tolist()))
    gathered = gather_ranges(source, starts, lengths)
    assert gathered.tobytes() == expected
    back = np.zeros_like(source)
    scatter_ranges(back, starts, gathered, lengths)
    for s, n in zip(starts.tolist(), lengths.tolist()):
        assert back[s:s + n].tobytes() == source[s:s + n].tobytes()


def test_values_of_one_long_width_scatter_without_an_index_per_byte():
    """Bloom filters of one size: 300 values of 430 KB, each copied (an index per byte would take 1 GB)."""
    lengths = np.full(300, 430_000, np.int64)
    starts = np.arange(300, dtype=np.int64) * 430_007
    data = np.random.default_rng(1).integers(0, 256, int(lengths.sum()), dtype=np.uint8)
    back = np.zeros(int(starts[-1]) + 430_000, np.uint8)
    scatter_ranges(back, starts, data, lengths)
    assert gather_ranges(back, starts, lengths).tobytes() == data.tobytes()
