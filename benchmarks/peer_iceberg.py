"""pyiceberg: a table partitioned by ``dt`` (identity) in a SQLite catalog kept inside the warehouse
folder, so a copy of the folder restored at the same path is the same table; upsert on the key.
Runs in this Python process."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.table import Table
from pyiceberg.transforms import IdentityTransform

from benchmarks.copies import restored_write
from benchmarks.timing import Case
from benchmarks.workload import KEY, PARTITION

TABLE = "bench.trips"


def _catalog(warehouse: Path) -> SqlCatalog:
    return SqlCatalog("bench", uri=f"sqlite:///{warehouse}/catalog.db", warehouse=f"file://{warehouse}")


def load(base: pa.Table, warehouse: Path) -> None:
    warehouse.mkdir(parents=True)
    catalog = _catalog(warehouse)
    catalog.create_namespace("bench")
    schema = catalog.create_table(TABLE, schema=base.schema).schema()  # assigns the field ids
    catalog.drop_table(TABLE)
    spec = PartitionSpec(PartitionField(source_id=schema.find_field(PARTITION).field_id, field_id=1000,
                                        transform=IdentityTransform(), name=PARTITION))
    catalog.create_table(TABLE, schema=schema, partition_spec=spec).append(base)


def table(warehouse: Path) -> Table:
    return _catalog(warehouse).load_table(TABLE)


def upsert(warehouse: Path, batch: pa.Table) -> None:
    table(warehouse).upsert(batch, join_cols=[KEY])


def upsert_case(key: str, label: str, batch: pa.Table, pristine: Path, target: Path) -> Case:
    return restored_write(key, label, lambda: upsert(target, batch), pristine, target, spark=False)
