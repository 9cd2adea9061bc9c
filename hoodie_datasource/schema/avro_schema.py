"""Avro table schemas as Hudi writes them, and their Arrow equivalents.

Hudi keeps a table's schema as an Avro schema JSON string: in every commit's
``extraMetadata.schema``, in ``hoodie.table.create.schema`` of ``hoodie.properties`` and, with the
``_hoodie_*`` meta fields prepended, in the SCHEMA header of MOR log blocks.

Writers built on Spark produce that schema with Spark's Avro conversion and then Hudi's clean-up
(``AvroConversionUtils``). The result, which :func:`arrow_to_avro_schema` reproduces exactly:

* the table is a record ``<table>_record`` in namespace ``hoodie.<table>``;
* a nullable column is the union ``["null", T]`` with ``"default": null``; a non-nullable one is
  the bare ``T`` with no default; array items and map values are ``["null", T]`` or ``T`` the same
  way (they have no defaults: they are not fields);
* a nested struct becomes a record named after its column, in the namespace ``<parent record's
  namespace>.<parent record's name>``; an array's items and a map's values are named after the
  array or map column itself;
* a decimal is a ``fixed`` named ``fixed`` in the namespace ``<record namespace>.<record
  name>.<column>``, sized to the fewest bytes that hold its precision, with ``logicalType`` decimal;
* Spark's tinyint/smallint/int are all ``int``; date is ``int``/``date``; timestamp is
  ``long``/``timestamp-micros`` and timestamp_ntz ``long``/``local-timestamp-micros``.

Reading (:func:`avro_to_arrow_schema`) accepts anything a Hudi table may hold: both union orders
(``["int", "null"]`` is what ``hoodie.table.create.schema`` contains), decimals on ``bytes`` or
``fixed``, millisecond/microsecond/nanosecond and local timestamps, enums (read as strings, as
Spark does), uuid strings, named-type references, and logical types Avro itself ignores when
invalid or unknown (the underlying type is used, as Avro's Java parser does).

Errors: an Arrow type with no Avro form, or an Avro type with no Arrow form, raises
:class:`~hoodie_datasource.errors.UnsupportedTableError` naming the column and the type; a column
name Avro forbids (Hudi's writer would fail on it too) raises
:class:`~hoodie_datasource.errors.SchemaMismatchError`; text that is not a valid Avro schema
raises :class:`~hoodie_datasource.errors.CorruptFileError`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from hoodie_datasource.errors import CorruptFileError, HoodieConfigError, SchemaMismatchError, UnsupportedTableError

logger = logging.getLogger(__name__)

#: The five meta columns every Hudi record carries, in the order Hudi writes them.
META_FIELDS = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
               "_hoodie_file_name")
#: The optional sixth meta column (``hoodie.allow.operation.metadata.field=true``).
OPERATION_FIELD = "_hoodie_operation"

_PRIMITIVES: dict[str, pa.DataType] = {
    "null": pa.null(), "boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
    "double": pa.float64(), "bytes": pa.binary(), "string": pa.string(),
}
_NAMED_KINDS = ("record", "error", "enum", "fixed")
_MAX_DECIMAL128 = 38
_MAX_DECIMAL256 = 76
# Hudi's table-name sanitising (HoodieAvroUtils.sanitizeName): ASCII only, each bad character -> "__".
_BAD_NAME_CHAR = re.compile(r"[^A-Za-z0-9_]")
_BAD_FIRST_CHAR = re.compile(r"[^A-Za-z_]")


# --------------------------------------------------------------------------------------------------
# small helpers

def _type_check(name: str) -> Callable[[pa.DataType], bool]:
    """``pa.types.<name>``, or a check that is always false on a pyarrow too old to have it."""
    return getattr(pa.types, name, lambda _typ: False)


_is_string_view = _type_check("is_string_view")
_is_binary_view = _type_check("is_binary_view")
_is_list_view = _type_check("is_list_view")
_is_large_list_view = _type_check("is_large_list_view")


def _is_avro_name(name: str) -> bool:
    """Avro's (Java) name rule: a letter or ``_``, then letters, digits or ``_``."""
    if not name or not (name[0] == "_" or name[0].isalpha()):
        return False
    return all(ch == "_" or ch.isalpha() or ch.isdecimal() for ch in name[1:])


def _fixed_size(precision: int) -> int:
    """The fewest bytes whose two's complement range holds every ``precision``-digit integer
    (Spark's ``minBytesForPrecision``)."""
    size = 1
    while 2 ** (8 * size - 1) < 10 ** precision:
        size += 1
    return size


def _max_precision(size: int) -> int:
    """The most decimal digits a ``size``-byte two's complement integer always holds."""
    return len(str(2 ** (8 * size - 1) - 1)) - 1


def _join(namespace: str | None, name: str) -> str:
    return f"{namespace}.{name}" if namespace else name


def _describe(avro: Any) -> str:
    return json.dumps(avro, separators=(",", ":"), ensure_ascii=False)


def avro_record_name_and_namespace(table_name: str) -> tuple[str, str]:
    """``(record name, namespace)`` Hudi gives a table's schema: ``<table>_record`` and
    ``hoodie.<table>``, with characters Avro names cannot hold replaced by ``__`` as Hudi does
    (``my-table`` -> ``my__table_record`` / ``hoodie.my__table``)."""
    if not table_name:
        raise HoodieConfigError("The table name is empty; hoodie.table.name must be set to build its Avro schema")
    name = table_name
    if _BAD_FIRST_CHAR.match(name[0]):
        name = "__" + name[1:]
    name = _BAD_NAME_CHAR.sub("__", name)
    return f"{name}_record", f"hoodie.{name}"


# --------------------------------------------------------------------------------------------------
# Arrow -> Avro

def arrow_to_avro_schema(schema: pa.Schema, record_name: str, namespace: str) -> dict[str, Any]:
    """The Avro schema Hudi's Spark writer records for a table whose data columns are ``schema``.

    ``record_name``/``namespace`` are ``<table>_record``/``hoodie.<table>`` for a table's schema
    (see :func:`avro_record_name_and_namespace`). Meta columns are not added; see
    :func:`with_meta_fields`."""
    if not _is_avro_name(record_name):
        raise SchemaMismatchError(
            f"Record name {record_name!r} is not a valid Avro name (a letter or '_', then letters, digits or '_'); "
            "use avro_record_name_and_namespace(table_name) to derive it as Hudi does"
        )
    if namespace and not all(_is_avro_name(part) for part in namespace.split(".")):
        raise SchemaMismatchError(
            f"Namespace {namespace!r} is not a valid Avro namespace (dot-separated Avro names)"
        )
    return _record([schema.field(i) for i in range(len(schema))], record_name, namespace, "")


def _record(fields: list[pa.Field], name: str, namespace: str, where: str) -> dict[str, Any]:
    child_namespace = _join(namespace, name)
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    for field in fields:
        path = f"{where}.{field.name}" if where else field.name
        if not _is_avro_name(field.name):
            raise SchemaMismatchError(
                f"Column {path!r} has a name Avro (and so Hudi) cannot store: names must start with a letter or "
                "'_' and contain only letters, digits and '_'; rename the column"
            )
        if field.name in seen:
            raise SchemaMismatchError(f"Column {path!r} appears twice; Avro records need distinct field names")
        seen.add(field.name)
        avro_type = _field_type(field.type, field.nullable, field.name, child_namespace, path)
        entry: dict[str, Any] = {"name": field.name, "type": avro_type}
        doc = _comment_of(field)
        if doc is not None:
            entry["doc"] = doc
        if isinstance(avro_type, list):
            entry["default"] = None
        out.append(entry)
    record: dict[str, Any] = {"type": "record", "name": name}
    if namespace:
        record["namespace"] = namespace
    record["fields"] = out
    return record


def _comment_of(field: pa.Field) -> str | None:
    """A Spark column comment travels as the Avro field's ``doc``; Arrow keeps it as field
    metadata ``comment``."""
    metadata = field.metadata or {}
    comment = metadata.get(b"comment")
    return comment.decode("utf-8") if comment else None


def _field_type(typ: pa.DataType, nullable: bool, name: str, namespace: str, where: str) -> Any:
    bare = _bare_type(typ, name, namespace, where)
    if nullable and bare != "null":
        return ["null", bare]
    return bare


def _unsupported(where: str, typ: pa.DataType, hint: str) -> UnsupportedTableError:
    return UnsupportedTableError(f"Column {where!r} has Arrow type {typ}, which has no Avro form in a Hudi schema; {hint}")


def _bare_type(typ: pa.DataType, name: str, namespace: str, where: str) -> Any:
    t = pa.types
    if t.is_dictionary(typ):
        return _bare_type(typ.value_type, name, namespace, where)
    if t.is_null(typ):
        return "null"
    if t.is_boolean(typ):
        return "boolean"
    if t.is_int8(typ) or t.is_int16(typ) or t.is_int32(typ) or t.is_uint8(typ) or t.is_uint16(typ):
        return "int"
    if t.is_int64(typ) or t.is_uint32(typ):
        return "long"
    if t.is_float32(typ):
        return "float"
    if t.is_float64(typ):
        return "double"
    if t.is_string(typ) or t.is_large_string(typ) or _is_string_view(typ):
        return "string"
    if t.is_binary(typ) or t.is_large_binary(typ) or _is_binary_view(typ) or t.is_fixed_size_binary(typ):
        return "bytes"
    if t.is_decimal(typ):
        return _decimal(typ, name, namespace, where)
    if t.is_date(typ):
        return {"type": "int", "logicalType": "date"}
    if t.is_time32(typ):
        return {"type": "int", "logicalType": "time-millis"}
    if t.is_time64(typ):
        if typ.unit != "us":
            raise _unsupported(where, typ, "Avro times stop at microseconds; cast the column to time64('us')")
        return {"type": "long", "logicalType": "time-micros"}
    if t.is_timestamp(typ):
        # Avro has no second-precision timestamp; seconds are stored as milliseconds (as parquet does).
        unit = {"s": "millis", "ms": "millis", "us": "micros", "ns": "nanos"}[typ.unit]
        prefix = "timestamp" if typ.tz is not None else "local-timestamp"
        return {"type": "long", "logicalType": f"{prefix}-{unit}"}
    if t.is_list(typ) or t.is_large_list(typ) or t.is_fixed_size_list(typ) or _is_list_view(typ) \
            or _is_large_list_view(typ):
        item = typ.value_field
        return {"type": "array", "items": _field_type(item.type, item.nullable, name, namespace, f"{where}.element")}
    if t.is_map(typ):
        key = typ.key_type.value_type if t.is_dictionary(typ.key_type) else typ.key_type
        if not (t.is_string(key) or t.is_large_string(key) or _is_string_view(key)):
            raise _unsupported(where, typ, "Avro map keys are strings; cast the keys to string or use a list of structs")
        value = typ.item_field
        return {"type": "map", "values": _field_type(value.type, value.nullable, name, namespace, f"{where}.value")}
    if t.is_struct(typ):
        return _record([typ.field(i) for i in range(typ.num_fields)], name, namespace, where)
    if t.is_float16(typ):
        raise _unsupported(where, typ, "cast it to float32")
    if t.is_uint64(typ):
        raise _unsupported(where, typ, "cast it to int64, or to decimal(20, 0) if values exceed 2**63 - 1")
    if t.is_duration(typ) or t.is_interval(typ):
        raise _unsupported(where, typ, "store it as an int64 count of a fixed unit")
    raise _unsupported(where, typ, "cast it to a supported type")


def _decimal(typ: pa.DataType, name: str, namespace: str, where: str) -> dict[str, Any]:
    if not 0 <= typ.scale <= typ.precision:
        raise _unsupported(where, typ, "Avro decimals need 0 <= scale <= precision; rescale the column")
    return {"type": "fixed", "name": "fixed", "namespace": _join(namespace, name), "size": _fixed_size(typ.precision),
            "logicalType": "decimal", "precision": typ.precision, "scale": typ.scale}


# --------------------------------------------------------------------------------------------------
# Avro -> Arrow

def avro_to_arrow_schema(avro: dict[str, Any] | str, unions: bool = False) -> pa.Schema:
    """The Arrow schema of an Avro record schema (a dict, or its JSON text).

    A union of several non-null types has no Arrow form in a table (Spark has none, nor has parquet) and is
    refused, unless ``unions``: then it is an Arrow dense union with a child per branch, in branch order, each
    named after its type (``"null"`` for the null branch, a record's or fixed's name without its namespace, a
    primitive's name), as Hudi's metadata records need for their wrapped column statistics."""
    if isinstance(avro, (str, bytes)):
        try:
            avro = json.loads(avro)
        except ValueError as exc:
            raise CorruptFileError(f"The Avro schema is not valid JSON: {exc}") from None
    if not isinstance(avro, dict) or avro.get("type") not in ("record", "error"):
        kind = avro.get("type") if isinstance(avro, dict) else avro
        raise UnsupportedTableError(f"A table schema must be an Avro record, not {_describe(kind)}")
    struct = _AvroToArrow(unions).record(avro, None, "")
    return pa.schema([struct.field(i) for i in range(struct.num_fields)])


class _AvroToArrow:
    """One conversion: remembers named types (records, enums, fixeds) so later references resolve."""

    def __init__(self, unions: bool = False) -> None:
        # full name -> Arrow type; None while a record is still being converted (a self-reference
        # then is a recursive type, which Arrow cannot hold)
        self.named: dict[str, pa.DataType | None] = {}
        self.unions = unions

    def convert(self, avro: Any, namespace: str | None, where: str) -> tuple[pa.DataType, bool]:
        """(Arrow type, whether it admits null) of the Avro type ``avro`` found at column ``where``;
        ``namespace`` is the enclosing namespace names are resolved in."""
        if isinstance(avro, list):
            return self._union(avro, namespace, where)
        if isinstance(avro, str):
            return self._named_or_primitive(avro, namespace, where), avro == "null"
        if not isinstance(avro, dict):
            raise CorruptFileError(f"Field {where!r}: {_describe(avro)} is not an Avro type")
        kind = avro.get("type")
        if isinstance(kind, (list, dict)):  # {"type": {...}} / {"type": [...]}: a wrapped type
            return self.convert(kind, namespace, where)
        if not isinstance(kind, str):
            raise CorruptFileError(f"Field {where!r}: Avro type {_describe(avro)} has no 'type'")
        if kind in ("record", "error"):
            return self.record(avro, namespace, where), False
        if kind == "enum":
            self._define(avro, namespace, where, pa.string())
            return pa.string(), False
        if kind == "fixed":
            return self._fixed(avro, namespace, where), False
        if kind == "array":
            if "items" not in avro:
                raise CorruptFileError(f"Field {where!r}: Avro array {_describe(avro)} has no 'items'")
            item, item_nullable = self.convert(avro["items"], namespace, f"{where}.element")
            return pa.list_(pa.field("element", item, item_nullable)), False
        if kind == "map":
            if "values" not in avro:
                raise CorruptFileError(f"Field {where!r}: Avro map {_describe(avro)} has no 'values'")
            value, value_nullable = self.convert(avro["values"], namespace, f"{where}.value")
            return pa.map_(pa.string(), pa.field("value", value, value_nullable)), False
        if kind in _PRIMITIVES:
            logical = self._logical(kind, avro, where)
            return (logical if logical is not None else _PRIMITIVES[kind]), kind == "null"
        return self._named_or_primitive(kind, namespace, where), False

    def record(self, avro: dict[str, Any], namespace: str | None, where: str) -> pa.StructType:
        full_name, own_namespace = self._full_name(avro, namespace, where)
        fields = avro.get("fields")
        if not isinstance(fields, list):
            raise CorruptFileError(f"Field {where or '<root>'!r}: Avro record {full_name!r} has no 'fields' list")
        self.named[full_name] = None
        arrow_fields = []
        for field in fields:
            if not isinstance(field, dict) or not isinstance(field.get("name"), str) or "type" not in field:
                raise CorruptFileError(f"Avro record {full_name!r} has a malformed field {_describe(field)}")
            path = f"{where}.{field['name']}" if where else field["name"]
            typ, nullable = self.convert(field["type"], own_namespace, path)
            doc = field.get("doc")
            metadata = {b"comment": doc.encode("utf-8")} if isinstance(doc, str) and doc else None
            arrow_fields.append(pa.field(field["name"], typ, nullable or pa.types.is_null(typ), metadata=metadata))
        struct = pa.struct(arrow_fields)
        self.named[full_name] = struct
        return struct

    def _union(self, branches: list[Any], namespace: str | None, where: str) -> tuple[pa.DataType, bool]:
        values = [b for b in branches if not _is_null_type(b)]
        has_null = len(values) < len(branches)
        if not values:
            return pa.null(), True
        if len(values) > 1 and self.unions:
            return self._dense_union(branches, namespace, where), has_null
        if len(values) > 1:
            raise UnsupportedTableError(
                f"Field {where!r}: Avro union {_describe(branches)} has {len(values)} non-null branches; "
                "only a single type, optionally with null, has an Arrow form"
            )
        typ, nullable = self.convert(values[0], namespace, where)
        return typ, has_null or nullable

    def _dense_union(self, branches: list[Any], namespace: str | None, where: str) -> pa.DataType:
        fields = []
        for branch in branches:
            typ, _ = self.convert(branch, namespace, where)
            fields.append(pa.field(union_branch_name(branch), typ))
        names = [f.name for f in fields]
        if len(set(names)) != len(names):
            raise UnsupportedTableError(f"Field {where!r}: Avro union {_describe(branches)} has two branches named alike")
        return pa.dense_union(fields)

    def _named_or_primitive(self, name: str, namespace: str | None, where: str) -> pa.DataType:
        if name in _PRIMITIVES:
            return _PRIMITIVES[name]
        candidates = [name] if "." in name else [_join(namespace, name), name]
        for candidate in candidates:
            if candidate in self.named:
                found = self.named[candidate]
                if found is None:
                    raise UnsupportedTableError(
                        f"Field {where!r}: Avro record {candidate!r} contains itself; recursive types have no Arrow form"
                    )
                return found
        raise UnsupportedTableError(f"Field {where!r}: unknown Avro type {name!r} (not a primitive or a type defined "
                                    "earlier in the schema)")

    def _full_name(self, avro: dict[str, Any], namespace: str | None, where: str) -> tuple[str, str | None]:
        name = avro.get("name")
        if not isinstance(name, str) or not name:
            raise CorruptFileError(f"Field {where or '<root>'!r}: Avro {avro.get('type')} {_describe(avro)[:200]} "
                                   "has no name")
        if "." in name:
            return name, name.rsplit(".", 1)[0]
        own = avro["namespace"] if isinstance(avro.get("namespace"), str) else namespace
        return _join(own, name), own or None

    def _define(self, avro: dict[str, Any], namespace: str | None, where: str, typ: pa.DataType) -> None:
        full_name, _ = self._full_name(avro, namespace, where)
        self.named[full_name] = typ

    def _fixed(self, avro: dict[str, Any], namespace: str | None, where: str) -> pa.DataType:
        size = avro.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise CorruptFileError(f"Field {where!r}: Avro fixed {_describe(avro)} has no valid 'size'")
        typ = self._logical("fixed", avro, where)
        if typ is None:
            typ = pa.binary(size)
        self._define(avro, namespace, where, typ)
        return typ

    def _logical(self, kind: str, avro: dict[str, Any], where: str) -> pa.DataType | None:
        """The Arrow type of a logical type on ``kind``; None to use the underlying type (no
        logical type, or one Avro itself would ignore: unknown, or on the wrong type)."""
        logical = avro.get("logicalType")
        if logical is None:
            return None
        if logical == "decimal" and kind in ("bytes", "fixed"):
            return _decimal_type(avro, kind, where)
        known = {
            ("int", "date"): pa.date32(),
            ("int", "time-millis"): pa.time32("ms"),
            ("long", "time-micros"): pa.time64("us"),
            ("long", "timestamp-millis"): pa.timestamp("ms", "UTC"),
            ("long", "timestamp-micros"): pa.timestamp("us", "UTC"),
            ("long", "timestamp-nanos"): pa.timestamp("ns", "UTC"),
            ("long", "local-timestamp-millis"): pa.timestamp("ms"),
            ("long", "local-timestamp-micros"): pa.timestamp("us"),
            ("long", "local-timestamp-nanos"): pa.timestamp("ns"),
        }
        if (kind, logical) in known:
            return known[(kind, logical)]
        if (kind, logical) not in (("string", "uuid"), ("fixed", "uuid"), ("fixed", "duration")):
            logger.debug("Field %r: ignoring logicalType %r on Avro %s, as Avro does", where, logical, kind)
        return None


def union_branch_name(avro: Any) -> str:
    """The name of a union branch's Arrow child: its type's name without the namespace."""
    if isinstance(avro, dict):
        kind = avro.get("type")
        if isinstance(kind, (dict, list)):
            return union_branch_name(kind)
        name = avro.get("name") if kind in _NAMED_KINDS else kind
        return str(name).rsplit(".", 1)[-1]
    return "null" if _is_null_type(avro) else str(avro).rsplit(".", 1)[-1]


def _is_null_type(avro: Any) -> bool:
    return avro == "null" or (isinstance(avro, dict) and avro.get("type") == "null" and len(avro) == 1)


def _decimal_type(avro: dict[str, Any], kind: str, where: str) -> pa.DataType | None:
    precision, scale = avro.get("precision"), avro.get("scale", 0)
    valid = (isinstance(precision, int) and isinstance(scale, int) and not isinstance(precision, bool)
             and not isinstance(scale, bool) and precision > 0 and 0 <= scale <= precision)
    if valid and kind == "fixed" and precision > _max_precision(int(avro["size"])):
        valid = False
    if not valid:
        logger.warning("Field %r: invalid decimal %s ignored (Avro reads the column as plain %s)",
                       where, _describe(avro), kind)
        return None
    if precision <= _MAX_DECIMAL128:
        return pa.decimal128(precision, scale)
    if precision <= _MAX_DECIMAL256:
        return pa.decimal256(precision, scale)
    raise UnsupportedTableError(
        f"Field {where!r}: Avro decimal({precision}, {scale}) is wider than Arrow's {_MAX_DECIMAL256} digits"
    )


# --------------------------------------------------------------------------------------------------
# meta fields and serialisation

def meta_field_avro_fields(with_operation: bool = False) -> list[dict[str, Any]]:
    """The ``_hoodie_*`` meta fields as Hudi writes them in Avro (fresh dicts on every call)."""
    names = META_FIELDS + ((OPERATION_FIELD,) if with_operation else ())
    return [{"name": name, "type": ["null", "string"], "doc": "", "default": None} for name in names]


def with_meta_fields(avro: dict[str, Any], with_operation: bool = False) -> dict[str, Any]:
    """A copy of the record schema ``avro`` with the meta fields first. Any meta field already in
    ``avro`` is dropped from its old position first, as Hudi's ``addMetadataFields`` does."""
    meta_names = set(META_FIELDS) | {OPERATION_FIELD}
    data_fields = [f for f in avro.get("fields", []) if f.get("name") not in meta_names]
    return {**avro, "fields": meta_field_avro_fields(with_operation) + data_fields}


def to_avro_json(avro: dict[str, Any]) -> str:
    """The schema as Avro's Java ``Schema.toString()`` prints it: compact JSON, keys in the order
    given, non-ASCII characters unescaped."""
    return json.dumps(avro, separators=(",", ":"), ensure_ascii=False)
