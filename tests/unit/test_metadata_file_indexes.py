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
