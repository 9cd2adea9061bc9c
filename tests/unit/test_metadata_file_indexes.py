"""The metadata table's ``column_stats`` and ``bloom_filters`` partitions as our writes keep them
(``hoodie.metadata.index.column.stats.enable``, ``hoodie.metadata.index.bloom.filter.enable``): built from the
base files' footers, then each commit's files recorded from what its tasks took of them (a base file's footer, a
log file's records), each clean's and rollback's deleted base files recorded as deleted. After every step every
committed base file's statistics and bloom filter there equal its footer's (``tests.metadata_checks``)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.metadata.reader import MetadataTableReader
from hoodie_datasource.metadata.records import unwrap_values
from hoodie_datasource.read.data_skipping import Comparison, InValues, slices_to_read
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.table import Table
from tests.metadata_checks import assert_bloom_filters_true, assert_column_stats_true, assert_metadata_table_true
from tests.unit.small_tables import batch

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
        "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}
INDEXES = {"hoodie.metadata.index.column.stats.enable": "true", "hoodie.metadata.index.bloom.filter.enable": "true"}
COLUMNS = ["_hoodie_record_key", "_hoodie_commit_time", "id", "ts", "p", "v"]


def checked(path: str) -> None:
    assert_metadata_table_true(path)
    assert_column_stats_true(path, COLUMNS)
    assert_bloom_filters_true(path)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_every_change_keeps_the_file_indexes_true(tmp_path, table_type):
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.datasource.write.table.type": table_type}
    write_local(path, batch([(f"k{i}", 1, "xy"[i % 2], i) for i in range(6)]), opts)
    write_local(path, batch([("k1", 2, "y", 10), ("n1", 2, "x", 11)]), {**opts, **INDEXES})  # built first
    checked(path)
    write_local(path, batch([("k2", 3, "x", 0)]), {**opts, **INDEXES, "operation": "delete"})
    checked(path)
    write_local(path, batch([(f"b{i}", 4, "z", i) for i in range(3)]), {**opts, **INDEXES, "operation": "bulk_insert"})
    checked(path)
    if table_type == "MERGE_ON_READ":
        HoodieTable(path).compact()
        checked(path)
    HoodieTable(path).clean(**{"hoodie.cleaner.commits.retained": "1"})
    checked(path)
    last = write_local(path, batch([("k4", 5, "x", 40)]), {**opts, **INDEXES})
    HoodieTable(path).rollback(last)
    checked(path)


def test_a_log_file_has_the_statistics_of_its_records(tmp_path):
    """Merge-on-read: an update goes to a log file, whose statistics are its records' (sizes 0, as Hudi's)."""
    path = str(tmp_path / "t")
    opts = {**OPTS, **INDEXES, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    write_local(path, batch([("a", 1, "x", 5), ("b", 1, "x", 6)]), opts)
    write_local(path, batch([("a", 2, "x", 100), ("b", 2, "x", -3)]), opts)
    stats = MetadataTableReader(Table.load(open_storage(path))).column_stats(["v"])
    logs = stats.filter(pc.match_substring(stats.column("file_name"), ".log."))
    assert logs.select(["value_count", "null_count", "total_size"]).to_pylist() == [
        {"value_count": 2, "null_count": 0, "total_size": 0}]
    assert unwrap_values(logs.column("min_value"), pa.int64()).to_pylist() == [-3]
    assert unwrap_values(logs.column("max_value"), pa.int64()).to_pylist() == [100]
    checked(path)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_data_skipping_by_our_statistics_keeps_every_slice_with_a_matching_row(tmp_path, table_type):
    """``read.data_skipping`` judging the latest file slices by the statistics we wrote keeps every slice holding a
    row the predicate keeps (a merge-on-read update's value is in its log file's statistics only), and drops
    some: the statistics say something."""
    path = str(tmp_path / "t")
    opts = {**OPTS, **INDEXES, "hoodie.datasource.write.table.type": table_type, "hoodie.parquet.small.file.limit": "0"}
    for start in (0, 10, 20):  # each insert its own file group per partition, values apart
        write_local(path, batch([(f"k{i}", 1, "xy"[i % 2], i) for i in range(start, start + 10)]),
                    {**opts, "operation": "insert"})
    write_local(path, batch([("k3", 2, "y", 1000), ("k14", 2, "x", -50)]), opts)
    table = Table.load(open_storage(path))
    slices = table.file_system_view().latest_file_slices()
    rows = read_table(path).select(["_hoodie_partition_path", "_hoodie_file_name", "v"])
    file_ids = [name.split("_")[0] for name in rows.column("_hoodie_file_name").to_pylist()]
    reader = MetadataTableReader(table)
    for predicate, truth in [(Comparison("v", ">", 500), pc.greater(rows.column("v"), 500)),
                             (Comparison("v", "<", 0), pc.less(rows.column("v"), 0)),
                             (InValues("v", (21, 22)), pc.is_in(rows.column("v"), pa.array([21, 22]))),
                             (Comparison("v", "=", 12), pc.equal(rows.column("v"), 12))]:
        kept = {(s.partition_path, s.file_id) for s in slices_to_read(slices, predicate, reader, table.schema)}
        holding = {(p, f) for p, f, hit in zip(rows.column("_hoodie_partition_path").to_pylist(), file_ids,
                                               truth.to_pylist()) if hit}
        assert holding and holding <= kept, f"{predicate}: slices holding matches {holding}, kept {kept}"
        assert len(kept) < len(slices), f"{predicate}: nothing skipped"
