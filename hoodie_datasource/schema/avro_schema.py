"""Avro schemas as Hudi (through Spark's Avro conversion) writes them, and Arrow equivalents.

Hudi keeps the table schema as an Avro JSON string in ``extraMetadata.schema``: record
``<table>_record`` in namespace ``hoodie.<table>``; a nullable field is ``["null", T]`` with
``"default": null``; a nested record is named after its field, in the namespace of the record
that holds it; a decimal is a ``fixed`` named ``fixed`` sized for its precision.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from hoodie_datasource.errors import UnsupportedTableError

META_FIELDS = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
               "_hoodie_file_name")


def _decimal_size(precision: int) -> int:
    size = 1
    while 2 ** (8 * size - 1) < 10 ** precision:
        size += 1
    return size


def _avro_type(typ: pa.DataType, name: str, namespace: str) -> Any:
    if pa.types.is_boolean(typ):
        return "boolean"
    if pa.types.is_int8(typ) or pa.types.is_int16(typ) or pa.types.is_int32(typ):
        return "int"
    if pa.types.is_int64(typ):
        return "long"
    if pa.types.is_float32(typ):
        return "float"
    if pa.types.is_float64(typ):
        return "double"
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return "string"
    if pa.types.is_binary(typ) or pa.types.is_large_binary(typ):
        return "bytes"
    if pa.types.is_decimal(typ):
        return {"type": "fixed", "name": "fixed", "namespace": f"{namespace}.{name}",
                "size": _decimal_size(typ.precision), "logicalType": "decimal", "precision": typ.precision,
                "scale": typ.scale}
    if pa.types.is_date(typ):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_timestamp(typ):
        unit = "millis" if typ.unit == "ms" else "micros"
        return {"type": "long", "logicalType": f"{'timestamp' if typ.tz else 'local-timestamp'}-{unit}"}
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        return {"type": "array", "items": _nullable(_avro_type(typ.value_type, name, namespace))}
    if pa.types.is_map(typ):
        return {"type": "map", "values": _nullable(_avro_type(typ.item_type, name, namespace))}
    if pa.types.is_struct(typ):
        return _record(list(typ), name, namespace)
    raise UnsupportedTableError(f"Column {name!r} has type {typ}, which has no Avro mapping")


def _nullable(avro: Any) -> list[Any]:
    return ["null", avro]


def _record(fields: list[pa.Field], name: str, namespace: str) -> dict[str, Any]:
    full_name = f"{namespace}.{name}"
    out = []
    for field in fields:
        avro = _avro_type(field.type, field.name, full_name)
        if field.nullable:
            out.append({"name": field.name, "type": _nullable(avro), "default": None})
        else:
            out.append({"name": field.name, "type": avro})
    return {"type": "record", "name": name, "namespace": namespace, "fields": out}


def arrow_to_avro_schema(schema: pa.Schema, record_name: str, namespace: str) -> dict[str, Any]:
    return _record(list(schema), record_name, namespace)


def _arrow_type(avro: Any, where: str) -> tuple[pa.DataType, bool]:
    """(arrow type, nullable)."""
    if isinstance(avro, list):
        branches = [b for b in avro if b != "null"]
        if len(branches) != 1:
            raise UnsupportedTableError(f"Field {where!r}: union {avro} is not supported")
        typ, _ = _arrow_type(branches[0], where)
        return typ, len(branches) != len(avro)
    if isinstance(avro, str):
        simple = {"boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
                  "double": pa.float64(), "string": pa.string(), "bytes": pa.binary(), "null": pa.null()}
        if avro not in simple:
            raise UnsupportedTableError(f"Field {where!r}: Avro type {avro!r} is not supported")
        return simple[avro], False
    kind = avro.get("type")
    logical = avro.get("logicalType")
    if logical == "decimal":
        return pa.decimal128(avro["precision"], avro.get("scale", 0)), False
    if logical == "date":
        return pa.date32(), False
    if logical in ("timestamp-micros", "timestamp-millis", "local-timestamp-micros", "local-timestamp-millis"):
        unit = "ms" if logical.endswith("millis") else "us"
        return pa.timestamp(unit, "UTC" if logical.startswith("timestamp") else None), False
    if logical == "uuid" or kind == "enum":
        return pa.string(), False
    if kind == "array":
        item, item_null = _arrow_type(avro["items"], where)
        return pa.list_(pa.field("element", item, item_null)), False
    if kind == "map":
        value, value_null = _arrow_type(avro["values"], where)
        return pa.map_(pa.string(), pa.field("value", value, value_null)), False
    if kind == "record":
        return pa.struct([_arrow_field(f, where) for f in avro["fields"]]), False
    if kind == "fixed":
        return pa.binary(avro["size"]), False
    if isinstance(kind, (str, list, dict)):
        return _arrow_type(kind, where)
    raise UnsupportedTableError(f"Field {where!r}: Avro type {avro!r} is not supported")


def _arrow_field(field: dict[str, Any], parent: str) -> pa.Field:
    where = f"{parent}.{field['name']}" if parent else field["name"]
    typ, nullable = _arrow_type(field["type"], where)
    return pa.field(field["name"], typ, nullable)


def avro_to_arrow_schema(avro: dict[str, Any] | str) -> pa.Schema:
    record = json.loads(avro) if isinstance(avro, str) else avro
    return pa.schema([_arrow_field(f, "") for f in record.get("fields", [])])


def to_avro_json(avro: dict[str, Any]) -> str:
    return json.dumps(avro, separators=(",", ":"))


def meta_field_avro_fields() -> list[dict[str, Any]]:
    return [{"name": n, "type": ["null", "string"], "doc": "", "default": None} for n in META_FIELDS]


def with_meta_fields(avro: dict[str, Any]) -> dict[str, Any]:
    return {**avro, "fields": meta_field_avro_fields() + list(avro.get("fields", []))}
