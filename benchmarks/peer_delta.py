"""delta-rs (``deltalake``): the table partitioned by ``dt``, MERGE of a batch, and the change data
feed. Runs in this Python process (delta-rs's own threads)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from benchmarks.copies import restored_write
from benchmarks.timing import Case
from benchmarks.workload import KEY, PARTITION

CDF = {"delta.enableChangeDataFeed": "true"}


def load(base: pa.Table, path: Path, change_data_feed: bool) -> None:
    write_deltalake(str(path), base, partition_by=[PARTITION], configuration=CDF if change_data_feed else None)


def merge(path: Path, batch: pa.Table) -> None:
    """Upsert: update matched rows, insert the rest. The predicate names the partition column too,
    so delta-rs reads only the partitions the batch touches."""
    (DeltaTable(str(path)).merge(source=batch, predicate=f"t.{KEY} = s.{KEY} AND t.{PARTITION} = s.{PARTITION}",
                                 source_alias="s", target_alias="t")
     .when_matched_update_all().when_not_matched_insert_all().execute())


def version(path: Path) -> int:
    return DeltaTable(str(path)).version()


def change_data_feed(path: Path, starting_version: int) -> pa.Table:
    return DeltaTable(str(path)).load_cdf(starting_version=starting_version).read_all()


def merge_case(key: str, label: str, batch: pa.Table, pristine: Path, target: Path) -> Case:
    return restored_write(key, label, lambda: merge(target, batch), pristine, target, spark=False)


def change_data_feed_case(key: str, label: str, path: Path, starting_version: int) -> Case:
    return Case(key, label, lambda: change_data_feed(path, starting_version), spark=False)
