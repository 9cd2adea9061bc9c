"""Tables Java Hudi writes with every partition of its metadata table on (files, column_stats, bloom_filters,
record_index, with ``hoodie.index.type=RECORD_INDEX``), through a history that leaves the metadata table with
compacted base files, logs on top, a clean and a rollback: what ``test_we_read_hudis_metadata`` reads.

``hoodie.metadata.compact.max.delta.commits=3`` compacts the metadata table every three deltacommits, and the
record index has 3 file groups (``hoodie.metadata.record.index.{min,max}.filegroup.count``) so keys spread."""

from __future__ import annotations

import pyarrow as pa

from tests.hudi_oracle import HUDI_0_15, HudiOracle


def trips(ids: list[str], ts: int, cities: list[str] | None = None) -> pa.Table:
    n = len(ids)
    return pa.table({
        "id": pa.array(ids, pa.string()),
        "ts": pa.array([ts] * n, pa.int64()),
        "city": pa.array(cities or [["sf", "nyc", "la"][i % 3] for i in range(n)], pa.string()),
        "fare": pa.array([float(ts * 10 + i) for i in range(n)], pa.float64()),
        "rider": pa.array([f"rider-{i:03d}" if i % 5 else None for i in range(n)], pa.string()),
        "day": pa.array([19_000 + ts + i % 7 for i in range(n)], pa.date32()),
    })


def metadata_options(hudi: HudiOracle, table_type: str, partitioned: bool) -> dict[str, str]:
    options = {
        "hoodie.table.name": "trips",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.metadata.enable": "true",
        "hoodie.metadata.index.column.stats.enable": "true",
        "hoodie.metadata.index.bloom.filter.enable": "true",
        "hoodie.metadata.record.index.enable": "true",
        "hoodie.index.type": "RECORD_INDEX",
        "hoodie.metadata.record.index.min.filegroup.count": "3",
        "hoodie.metadata.record.index.max.filegroup.count": "3",
        "hoodie.metadata.compact.max.delta.commits": "3",
        "hoodie.cleaner.commits.retained": "2",
        "hoodie.parquet.small.file.limit": "0",  # every insert a new file group: more files to list
    }
    if partitioned:
        options["hoodie.datasource.write.partitionpath.field"] = "city"
    else:
        options["hoodie.datasource.write.keygenerator.class"] = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
    if table_type == "MERGE_ON_READ":
        options["hoodie.compact.inline"] = "true"
        options["hoodie.compact.inline.max.delta.commits"] = "3"
    if hudi.version != HUDI_0_15:
        options["hoodie.write.table.version"] = "6"
    return options


def write_history(hudi: HudiOracle, path: str, table_type: str, partitioned: bool) -> list[str]:
    """Inserts, upserts (updates and new keys), a delete, a rollback of the fifth write (Hudi 0.15), and enough
    commits for the cleaner and for metadata-table compactions; the data table's completed instants."""
    options = metadata_options(hudi, table_type, partitioned)
    upsert = {**options, "hoodie.datasource.write.operation": "upsert"}
    keys = [f"key-{i:03d}" for i in range(60)]
    hudi.write(path, trips(keys, 1), {**options, "hoodie.datasource.write.operation": "insert"}, mode="overwrite")
    hudi.write(path, trips(keys[:20] + [f"key-{i:03d}" for i in range(60, 75)], 2), upsert)
    hudi.write(path, trips(keys[40:45], 3), {**options, "hoodie.datasource.write.operation": "delete"})
    hudi.write(path, trips(keys[10:30], 4), upsert)
    last = hudi.write(path, trips(keys[50:60] + ["key-100"], 5), upsert)
    if hudi.version == HUDI_0_15:
        _roll_back_last_write(hudi, path, table_type, last)
    hudi.write(path, trips(keys[5:15], 6), upsert)
    return hudi.write(path, trips(keys[30:35] + ["key-200"], 7), upsert)


def _roll_back_last_write(hudi: HudiOracle, path: str, table_type: str, instants: list[str]) -> None:
    """``CALL rollback_to_instant`` of the latest write. Hudi 1.1.1's procedure fails on a version-6 table
    (FileNotFoundException: .hoodie/timeline, the layout-2 folder), so only 0.15 rolls back."""
    write_action = ".deltacommit" if table_type == "MERGE_ON_READ" else ".commit"
    rolled_back = max(i for i in instants if i.endswith(write_action)).split(".")[0]
    name = f"metadata_trips_{abs(hash(path))}"
    hudi.sql(f"CREATE TABLE IF NOT EXISTS {name} USING hudi LOCATION '{path}'")
    done = hudi.sql(f"CALL rollback_to_instant(table => '{name}', instant_time => '{rolled_back}')", result=True)
    assert done.column("rollback_result").to_pylist() == [True]
