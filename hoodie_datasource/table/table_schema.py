"""The table's data schema, and how an incoming batch's schema may differ from it.

Allowed, as in Apache Hudi's schema evolution on write (``HoodieSchemaUtils.deduceWriterSchema``: the
batch's schema becomes the writer's schema once ``checkValidEvolution`` finds it can read the table's
files, after ``reconcileSchemaRequirements`` promoted the batch's types to the table's where it can):

* new columns: appended, older rows read as null;
* a column whose batch type is narrower than the table's (``int`` data for a ``bigint`` column): the
  data is cast up and the table keeps its type;
* a column whose batch type is wider than the table's by an Avro promotion (``bigint`` data for an
  ``int`` column): the table's column widens, for this write and every later one; files written
  before keep their type and are cast when read.

The promotions are Avro schema resolution's numeric ones (int -> bigint, float, double; bigint -> float,
double; float -> double). Any other type change, and dropping a column, is refused.
"""

from __future__ import annotations

import logging

import pyarrow as pa

from hoodie_datasource.config.table_config import TableConfig
from hoodie_datasource.errors import SchemaMismatchError
from hoodie_datasource.schema.avro_schema import avro_to_arrow_schema
from hoodie_datasource.storage.parquet import read_parquet_schema
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.meta_columns import META_COLUMNS, data_schema_of, meta_schema
from hoodie_datasource.timeline.commit_metadata import write_stats_of
from hoodie_datasource.timeline.timeline import Timeline

logger = logging.getLogger(__name__)

# (narrower, wider) type pairs: a column stored as the first type reads as the second (Avro's
# promotions, which Hudi's writer accepts as schema evolution).
_WIDENINGS = (
    (pa.int32(), pa.int64()), (pa.int32(), pa.float32()), (pa.int32(), pa.float64()),
    (pa.int64(), pa.float32()), (pa.int64(), pa.float64()),
    (pa.float32(), pa.float64()),
)
_SQL_NAMES = {pa.int32(): "int", pa.int64(): "bigint", pa.float32(): "float", pa.float64(): "double"}


def is_widening(old: pa.DataType, new: pa.DataType) -> bool:
    """Whether a column of type ``old`` may become ``new``: its stored values read as ``new`` (Avro's
    type promotions)."""
    return (old, new) in _WIDENINGS


def type_name(typ: pa.DataType) -> str:
    """``typ`` as Spark SQL names it where the name differs from Arrow's (int, bigint, float, double)."""
    return _SQL_NAMES.get(typ, str(typ))


def allowed_widenings() -> str:
    return ", ".join(f"{type_name(old)} -> {type_name(new)}" for old, new in _WIDENINGS)


def storable_type(typ: pa.DataType) -> pa.DataType:
    """The type a column is stored as. Hudi goes through Avro, which has no 8- or 16-bit integers,
    so tinyint/smallint are stored as int (as Hudi's own files do, and as hudi-rs expects)."""
    if pa.types.is_int8(typ) or pa.types.is_int16(typ) or pa.types.is_uint8(typ) or pa.types.is_uint16(typ):
        return pa.int32()
    if pa.types.is_large_string(typ) or pa.types.is_string_view(typ):
        return pa.string()
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        return pa.list_(pa.field(typ.value_field.name, storable_type(typ.value_type), True))
    if pa.types.is_map(typ):
        return pa.map_(storable_type(typ.key_type), pa.field("value", storable_type(typ.item_type), True))
    if pa.types.is_struct(typ):
        return pa.struct([pa.field(f.name, storable_type(f.type), True) for f in typ])
    return typ


def nullable(schema: pa.Schema) -> pa.Schema:
    return pa.schema([pa.field(f.name, storable_type(f.type), True) for f in schema], metadata=None)


def _base_file_schema(storage: Storage, stat: dict) -> pa.Schema | None:
    """The parquet schema of the base file a write stat names (its path, or a log's base file)."""
    path = stat.get("path") or ""
    if not path.endswith(".parquet") and stat.get("baseFile"):
        partition = stat.get("partitionPath") or ""
        path = f"{partition}/{stat['baseFile']}" if partition else stat["baseFile"]
    if not path.endswith(".parquet"):
        return None
    try:
        return data_schema_of(read_parquet_schema(storage, path)).remove_metadata()
    except FileNotFoundError:  # cleaned since (the commit's metadata still names it)
        return None


def table_data_schema(storage: Storage, config: TableConfig, timeline: Timeline,
                      as_of: str | None = None) -> pa.Schema | None:
    """The table's data schema as of the latest completed write (at or before ``as_of``, when given: a time
    travel reads the table with the columns and types it had then, as Hudi's ``HoodieBaseRelation`` takes
    ``TableSchemaResolver.getTableAvroSchema(timestamp)`` for ``as.of.instant``).

    The Avro schema in the commit metadata is authoritative for which columns exist; the parquet
    schema of a base file keeps the exact Arrow types Avro cannot express (tinyint and smallint
    are ``int`` in Avro), so it is used for every column it has."""
    for instant in reversed(timeline.completed_writes_upto(as_of)):
        metadata = timeline.read_metadata(instant)
        avro = (metadata.get("extraMetadata") or {}).get("schema")
        parquet = next(filter(None, (_base_file_schema(storage, s) for s in write_stats_of(metadata))), None)
        if parquet is None and avro is None:
            continue
        if avro is None:
            return parquet
        declared = avro_to_arrow_schema(avro)
        if parquet is None:
            return declared
        # a base file written before a column widened holds the narrower type: the declared one wins
        declared_types = {f.name: f.type for f in declared}
        exact = {f.name: f for f in parquet
                 if f.name not in declared_types or not is_widening(f.type, declared_types[f.name])}
        return pa.schema([exact.get(f.name, f) for f in declared])
    if config.create_schema:
        return avro_to_arrow_schema(config.create_schema)
    return None


# Key generators whose partition columns Hudi's Spark reads type as strings, whatever the commits' schemas
# say (SparkHoodieTableFileIndex: the partition schema of a timestamp-based key generator is StringType)
STRING_PARTITION_KEY_GENERATORS = ("TimestampBasedKeyGenerator", "TimestampBasedAvroKeyGenerator")


def read_schema(config: TableConfig, data: pa.Schema | None) -> pa.Schema:
    """What a reader of the table reads: the meta columns (when the table has them) and the data columns
    ``data`` (``table_data_schema``), the partition columns of a timestamp-based key generator as strings."""
    data = data or pa.schema([])
    if config.keygen_class.rsplit(".", 1)[-1] in STRING_PARTITION_KEY_GENERATORS:
        data = pa.schema([f.with_type(pa.string()) if f.name in config.partition_fields else f for f in data])
    if not config.populate_meta_fields:
        return data
    return pa.schema(list(meta_schema()) + [f for f in data if f.name not in META_COLUMNS])


def evolve_schema(table: pa.Schema | None, incoming: pa.Schema, allow_missing: bool = False) -> pa.Schema:
    """The schema this write stores: the table's, with columns the incoming data widens widened, plus
    any new incoming columns."""
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
    fields = []
    for field in table:
        given = by_name.get(field.name)
        if given is None or given.type == field.type or is_widening(given.type, field.type):
            fields.append(field)  # the data is cast up to the table's type
        elif is_widening(field.type, given.type):
            logger.info("Column %r widens from %s to %s", field.name, type_name(field.type), type_name(given.type))
            fields.append(field.with_type(given.type))
        else:
            raise SchemaMismatchError(
                f"Column {field.name!r} is {type_name(given.type)} in the incoming data but "
                f"{type_name(field.type)} in the table, and neither type widens to the other; allowed type "
                f"changes are the widenings {allowed_widenings()} (data of the narrower type is cast up to "
                "the table's type; data of the wider type widens the table's column)"
            )
    added = [f for f in incoming if f.name not in set(table.names)]
    return pa.schema(fields + added)
