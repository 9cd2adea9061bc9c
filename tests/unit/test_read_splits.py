"""How file slices are grouped into read tasks (``hoodie_datasource.read.splits``)."""

from __future__ import annotations

import pytest

from hoodie_datasource.config.read_config import resolve_read_config
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.read.splits import OPEN_COST, split_slices
from hoodie_datasource.table.file_group import BaseFile, FileSlice, LogFile

MB = 1024 * 1024


def file_slice(partition: str, file_id: str, base_mb: float, log_mb: float = 0) -> FileSlice:
    base = BaseFile(f"{file_id}_0-1-0_001.parquet", file_id, "001", int(base_mb * MB))
    logs = (LogFile(f".{file_id}_001.log.1_0-1-0", file_id, "001", 1, "0-1-0", int(log_mb * MB)),) if log_mb else ()
    return FileSlice(partition, file_id, "001", base, logs)


def ids(splits) -> list[list[str]]:
    return [[s.file_id for s in split] for split in splits]


def test_a_small_table_is_spread_over_every_core():
    slices = [file_slice(f"dt={day:02d}", f"f{day:02d}", 2.5) for day in range(30)]  # 75 MB, like 1M bench rows
    assert len(split_slices(slices, 128 * MB, 1)) == 2  # 30 x (2.5 MB + the opening cost) in splits of 128 MB
    for cores in (2, 4, 8):
        splits = split_slices(slices, 128 * MB, cores)
        assert len(splits) == cores
        assert sorted(i for split in ids(splits) for i in split) == [s.file_id for s in slices]  # each slice once


def test_a_large_table_is_split_by_size_in_partition_order():
    slices = [file_slice("dt=02", "b", 100), file_slice("dt=01", "a", 100, log_mb=20), file_slice("dt=01", "c", 10)]
    assert ids(split_slices(slices, 128 * MB, 2)) == [["a"], ["c", "b"]]  # log files count toward a slice's size
    assert ids(split_slices(slices, 1 * MB, 2)) == [["a"], ["c"], ["b"]]  # a slice bigger than a split is one split


def test_many_empty_slices_still_cost_their_opening():
    slices = [file_slice("", f"f{i:03d}", 0) for i in range(64)]
    splits = split_slices(slices, 128 * MB, 2)
    assert len(splits) == 2 and {len(split) for split in splits} == {32}
    assert split_slices([], 128 * MB, 2) == []
    assert OPEN_COST == 4 * MB


def test_read_parallelism_option():
    assert resolve_read_config({"read.parallelism": "6"}).parallelism == 6
    assert resolve_read_config({"hoodie.read.parallelism": "3"}).parallelism == 3
    assert resolve_read_config({}).parallelism >= 1
    for bad in ("-2", "many"):
        with pytest.raises(HoodieConfigError, match="read.parallelism"):
            resolve_read_config({"read.parallelism": bad})
    with pytest.raises(HoodieConfigError, match="split.size"):
        resolve_read_config({"split.size": "0"})


def test_a_read_can_turn_the_metadata_table_off() -> None:
    """``hoodie.metadata.enable=false`` on a read: the table is listed even when its metadata table is ready."""
    assert resolve_read_config({}).metadata_enable is True
    assert resolve_read_config({"hoodie.metadata.enable": "false"}).metadata_enable is False
