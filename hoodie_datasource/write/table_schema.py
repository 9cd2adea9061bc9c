"""The table's data schema, and how an incoming batch's schema may differ from it.

Allowed: the same columns (types castable without loss, e.g. int32 -> int64), or new columns
(schema evolution: they are appended and older rows read as null). Not allowed: dropping a
column or changing a type in a way that loses data.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie_datasource.errors import SchemaMismatchError
from hoodie_datasource.schema.avro_schema import avro_to_arrow_schema
from hoodie_datasource.timeline.commit_metadata import write_stats_of
from hoodie_datasource.timeline.timeline import Timeline
from hoodie_datasource.write.records import data_schema_of

_WIDENINGS = {
    (pa.int8(), pa.int16()), (pa.int8(), pa.int32()), (pa.int8(), pa.int64()),
    (pa.int16(), pa.int32()), (pa.int16(), pa.int64()), (pa.int32(), pa.int64()),
    (pa.float32(), pa.float64()), (pa.int32(), pa.float64()),
    (pa.large_string(), pa.string()), (pa.string(), pa.large_string()),
}


def nullable(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f.with_nullable(True) for f in schema], metadata=None)


def table_data_schema(timeline: Timeline) -> pa.Schema | None:
    """The data schema of the latest completed write: from its files when it wrote any, else Avro."""
    for instant in reversed(timeline.completed()):
        metadata = timeline.read_metadata(instant)
        for stat in write_stats_of(metadata):
            path = stat.get("path")
            if path and path.endswith(".parquet") and os.path.exists(os.path.join(timeline.base_path, path)):
                return data_schema_of(pq.read_schema(os.path.join(timeline.base_path, path))).remove_metadata()
        schema = (metadata.get("extraMetadata") or {}).get("schema")
        if schema:
            return avro_to_arrow_schema(schema)
    if timeline.config.create_schema:
        return avro_to_arrow_schema(timeline.config.create_schema)
    return None


def evolve_schema(table: pa.Schema | None, incoming: pa.Schema, allow_missing: bool = False) -> pa.Schema:
    """The schema this write stores: the table's, plus any new incoming columns."""
    incoming = nullable(data_schema_of(incoming))
    if table is None:
        return incoming
    by_name = {f.name: f for f in incoming}
    missing = [f.name for f in table if f.name not in by_name]
    if missing and not allow_missing:
        raise SchemaMismatchError(
            f"Incoming data lacks the table's column(s) {', '.join(missing)}; "
            f"table columns: {', '.join(table.names)}"
        )
    for field in table:
        given = by_name.get(field.name)
        if given is None or given.type == field.type or (given.type, field.type) in _WIDENINGS:
            continue
        raise SchemaMismatchError(
            f"Column {field.name!r} is {given.type} in the incoming data but {field.type} in the table; "
            "only widening changes (e.g. int -> bigint, float -> double) are allowed"
        )
    added = [f for f in incoming if f.name not in set(table.names)]
    return pa.schema(list(table) + added)
