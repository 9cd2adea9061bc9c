"""Whether a table's metadata table tells the truth: what its reader lists (``metadata.reader``, counting what
Hudi's readers count) against a listing of the storage, filtered by the data timeline here, independently of
the writer's own listing code.

A data file is committed when its instant is a completed write (or older than the timeline), a log file when
its slice's base instant is (or a pending compaction's, whose slice its logs join) and no pending instant marked
it; a CDC log file like a base file. The files a pending clean or rollback plans to delete are left out of the
comparison: the metadata table lists them until its record of the clean or rollback counts (once the clean or
rollback completes, as in Hudi), though some may be gone, and a log file a pending rollback deletes looks
committed by its name."""

from __future__ import annotations

import posixpath

from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.index.bloom_filter import FOOTER_BLOOM_KEY, FOOTER_TYPE_KEY
from hoodie_datasource.metadata.file_slices import latest_merged_slices
from hoodie_datasource.metadata.reader import MetadataTableReader
from hoodie_datasource.metadata.records import MetadataPartition, record_locations
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.services.metadata_compaction import merged_records
from hoodie_datasource.storage.parquet import read_parquet_metadata
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.file_names import BaseFileName, LogFileName
from hoodie_datasource.table.markers import marked_files
from hoodie_datasource.table.meta_columns import FILE_NAME_COLUMN, PARTITION_PATH_COLUMN, RECORD_KEY_COLUMN
from hoodie_datasource.table.metadata_table import ready_partitions
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.instant import CLEAN, ROLLBACK, State
from hoodie_datasource.write.column_stats import footer_column_stats

Listing = dict[str, dict[str, int]]  # partition -> file name -> size


def committed_listing(table: Table) -> Listing:
    storage, timeline = table.storage, table.timeline
    done = {i.timestamp for i in timeline.completed()}
    start = timeline.start or ""
    pending_compactions = {i.timestamp for i in timeline.pending() if timeline.is_compaction(i)}
    marked = {path for i in timeline.pending() for path in marked_files(storage, i.timestamp)}
    listing: Listing = {}
    for info in storage.list_tree(""):
        if info.path.startswith(".hoodie/"):
            continue
        partition = posixpath.dirname(info.path)
        if info.name == ".hoodie_partition_metadata":
            listing.setdefault(partition, {})
            continue
        base, log, cdc = BaseFileName.parse(info.name), LogFileName.parse(info.name), LogFileName.parse_cdc(info.name)
        parsed = base or log or cdc
        if parsed is None or info.path in marked:
            continue
        instant = parsed.instant_time
        if instant in done or instant < start or (log is not None and instant in pending_compactions):
            listing.setdefault(partition, {})[info.name] = info.size
    return listing


def _deleted_by_pending(table: Table) -> set[tuple[str, str]]:
    """(partition, name) of the files pending cleans and rollbacks plan to delete."""
    found = set()
    for instant in table.timeline.pending():
        if instant.action not in (CLEAN, ROLLBACK):
            continue
        plan = table.timeline.read_plan(instant.with_state(State.REQUESTED))
        for partition, entries in (plan.get("filePathsToBeDeletedPerPartition") or {}).items():
            found |= {(partition, posixpath.basename(e["filePath"])) for e in entries}
        for request in plan.get("RollbackRequests") or ():
            found |= {(request["partitionPath"], posixpath.basename(f)) for f in request.get("filesToBeDeleted") or ()}
    return found


def metadata_listing(table: Table) -> Listing:
    reader = MetadataTableReader(table)
    return reader.partition_files(reader.all_partitions())


def assert_metadata_table_true(path: str, expect_ready: bool = True) -> None:
    """The metadata table of the table at ``path`` lists exactly its committed files (``expect_ready``: it has a
    ready ``files`` partition)."""
    table = Table.load(open_storage(path))
    ready = MetadataPartition.FILES.path in ready_partitions(table.config)
    assert ready == expect_ready, f"files partition ready: {ready}"
    if not ready:
        return
    expected = committed_listing(table)
    if not table.config.is_partitioned:
        expected = {"": expected.get("", {})}
    listed = metadata_listing(table)
    # a partition whose first commit was rolled back keeps its folder (its metafile) but is no longer listed
    unlisted = {p for p, files in expected.items() if files and p not in listed}
    assert not unlisted and set(listed) <= set(expected), \
        f"partitions: metadata {sorted(listed)}, storage {sorted(expected)}"
    uncertain = _deleted_by_pending(table)
    for partition, files in expected.items():
        got = listed.get(partition, {})
        missing = {n for n in files if n not in got and (partition, n) not in uncertain}
        assert not missing, f"{partition}: committed files the metadata table misses: {sorted(missing)}"
        wrong = {n: (got[n], s) for n, s in files.items() if n in got and got[n] != s}
        assert not wrong, f"{partition}: sizes (metadata, storage) differ: {wrong}"
        extra = {n for n in got if n not in files and (partition, n) not in uncertain}
        assert not extra, f"{partition}: files the metadata table lists that are not committed: {sorted(extra)}"


def record_index(table: Table) -> dict[str, tuple[str, str]]:
    """Every key the metadata table's record index holds: key -> (partition, file id)."""
    reader = MetadataTableReader(table)
    found = {}
    for file_slice in latest_merged_slices(table.storage, reader.timeline, MetadataPartition.RECORD_INDEX):
        records = merged_records(reader, MetadataPartition.RECORD_INDEX, file_slice)
        for row in record_locations(records).to_pylist():
            found[row["key"]] = (row["partition"], row["file_id"])
    return found


def table_keys(path: str) -> dict[str, tuple[str, str]]:
    """Every key of the table's snapshot: key -> (partition, file id)."""
    rows = read_table(path, ReadConfig()).select([RECORD_KEY_COLUMN, PARTITION_PATH_COLUMN, FILE_NAME_COLUMN])
    found = {}
    for key, partition, name in zip(*(rows.column(c).to_pylist() for c in rows.column_names)):
        parsed = BaseFileName.parse(name)
        found[key] = (partition, parsed.file_id if parsed else name)
    return found


def assert_record_index_true(path: str) -> None:
    """The record index holds exactly the table's keys, each at the file group holding it."""
    table = Table.load(open_storage(path))
    assert MetadataPartition.RECORD_INDEX.path in ready_partitions(table.config), "record_index is not ready"
    indexed, stored = record_index(table), table_keys(path)
    wrong = {k: (indexed.get(k), stored.get(k)) for k in set(indexed) | set(stored) if indexed.get(k) != stored.get(k)}
    assert not wrong, f"record index vs the table's keys (key: (indexed, stored)): {wrong}"


def _footer(table: Table, partition: str, name: str):
    return read_parquet_metadata(table.storage, posixpath.join(partition, name) if partition else name)


def assert_column_stats_true(path: str, columns: list[str]) -> None:
    """Every committed base file's statistics of ``columns`` in the metadata table equal its footer's; no file
    the storage listing lacks has statistics."""
    table = Table.load(open_storage(path))
    reader = MetadataTableReader(table)
    listing = committed_listing(table)
    bases = [(p, n) for p, files in listing.items() for n in files if n.endswith(".parquet")]
    # one column at a time: the reader folds a key's records comparing their values as one type
    got = [row for column in columns for row in reader.column_stats([column]).to_pylist()]
    by_file = {}
    for row in got:
        by_file.setdefault(row["file_name"], {})[row["column_name"]] = row
    for partition, name in bases:
        expected = footer_column_stats(_footer(table, partition, name), table.schema, columns).to_pylist()
        assert by_file.get(name, {}) == {r["column_name"]: {**r, "file_name": name} for r in expected}, name
    committed = {n for files in listing.values() for n in files}
    assert set(by_file) <= committed, f"statistics of files not committed: {sorted(set(by_file) - committed)}"


def assert_bloom_filters_true(path: str) -> None:
    """Every committed base file's bloom filter in the metadata table is its footer's."""
    table = Table.load(open_storage(path))
    reader = MetadataTableReader(table)
    bases = [(p, n) for p, files in committed_listing(table).items() for n in files if n.endswith(".parquet")]
    found = reader.bloom_filters(bases)
    for partition, name in bases:
        kv = _footer(table, partition, name).metadata
        assert found.get((partition, name)) == (kv.get(FOOTER_TYPE_KEY.encode(), b"SIMPLE").decode(),
                                                kv[FOOTER_BLOOM_KEY.encode()]), name
