"""ALTER TABLE on storage: a new table schema committed to the timeline, as Apache Hudi does it.

Hudi's ``AlterHoodieTableAddColumnsCommand.commitWithSchema`` (which ``AlterHoodieTableChangeColumnCommand``
uses for type changes too) completes an instant that writes no file and whose commit metadata has operation
``ALTER_SCHEMA`` and ``extraMetadata.schema`` = the new Avro schema: a commit on copy-on-write, a
deltacommit on merge-on-read (``CommitUtils.getCommitActionType``). Readers (ours through
``table.table_schema``, hudi-rs, Hudi's ``TableSchemaResolver``) and later writes take the table schema
from the latest commit's metadata, so older rows read an added column as null and a widened column in
its new type.

Allowed: new nullable columns, appended after the table's columns; a column's type widened
(``int -> bigint``, ``float -> double``, ...). Refused, with nothing changed: dropping or reordering
columns, narrowing or any other type change, and a type change of a record key or partition column.
"""

from __future__ import annotations

import logging

import pyarrow as pa

from hoodie_datasource.errors import SchemaMismatchError
from hoodie_datasource.schema.avro_schema import arrow_to_avro_schema, avro_record_name_and_namespace, to_avro_json
from hoodie_datasource.table.table import Table
from hoodie_datasource.table.table_schema import allowed_widenings, is_widening, storable_type, type_name
from hoodie_datasource.timeline.commit_metadata import CommitMetadata
from hoodie_datasource.timeline.instant import COMMIT, DELTA_COMMIT
from hoodie_datasource.timeline.instant_time import new_instant_time
from hoodie_datasource.timeline.transitions import create_requested, transition_to_completed, transition_to_inflight

logger = logging.getLogger(__name__)

ALTER_SCHEMA_OPERATION = "ALTER_SCHEMA"


def evolved_schema(current: pa.Schema, requested: pa.Schema, fixed: tuple[str, ...] = ()) -> pa.Schema:
    """The table schema ``requested`` asks for: the current columns in their order with their types as
    requested (each the same or a widening), then the requested columns the table lacks, nullable.
    ``fixed``: columns whose type cannot change (record key and partition fields)."""
    by_name = {f.name: f for f in requested}
    dropped = [name for name in current.names if name not in by_name]
    if dropped:
        raise SchemaMismatchError(
            f"ALTER TABLE cannot drop column(s) {', '.join(dropped)} of a hoodie table; "
            f"its columns are: {', '.join(current.names)}")
    fields = []
    for field in current:
        wanted = storable_type(by_name[field.name].type)
        if wanted != field.type:
            if field.name in fixed:
                raise SchemaMismatchError(
                    f"Column {field.name!r} is a record key or partition column; its type ({field.type}) cannot change")
            if not is_widening(field.type, wanted):
                raise SchemaMismatchError(
                    f"Column {field.name!r} cannot change from {type_name(field.type)} to {type_name(wanted)}: "
                    f"only widening changes are allowed ({allowed_widenings()})")
            field = field.with_type(wanted)
        fields.append(field)
    added = [pa.field(f.name, storable_type(f.type), True) for f in requested if f.name not in current.names]
    return pa.schema(fields + added)


def alter_table_schema(table: Table, requested: pa.Schema) -> str | None:
    """Commit ``requested`` (every column of the table, new ones included) as the table's schema;
    returns the instant, or None when the schema is already that."""
    config, timeline = table.config, table.timeline
    current = table.data_schema or pa.schema([])
    schema = evolved_schema(current, requested, config.record_key_fields + config.partition_fields)
    if schema.equals(current):
        return None
    avro = to_avro_json(arrow_to_avro_schema(schema, *avro_record_name_and_namespace(config.name)))
    action = DELTA_COMMIT if config.table_type == "MERGE_ON_READ" else COMMIT
    metadata = CommitMetadata(ALTER_SCHEMA_OPERATION, [], {"schema": avro})
    requested_instant = create_requested(table, new_instant_time(timeline.last_instant_time()), action)
    inflight = transition_to_inflight(table, requested_instant)
    transition_to_completed(table, inflight, metadata.to_json())
    logger.info("Committed %s %s: table schema now %s", action, inflight.timestamp, ", ".join(
        f"{f.name} {f.type}" for f in schema))
    return inflight.timestamp
