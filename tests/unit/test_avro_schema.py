"""Avro <-> Arrow table schemas, checked against the schemas real Hudi writers recorded.

The proof that our writer records the schema Hudi would: for every schema in the shared real tables
(commit ``extraMetadata.schema``, ``hoodie.table.create.schema``, log-block SCHEMA headers),
reading it into Arrow and writing it back gives the same Avro, down to the JSON bytes.
"""

from __future__ import annotations

import json
import logging
import re
import struct
from functools import lru_cache
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie_datasource.config.properties_file import parse_properties
from hoodie_datasource.errors import CorruptFileError, HoodieConfigError, SchemaMismatchError, UnsupportedTableError
from hoodie_datasource.schema.avro_schema import (
    META_FIELDS,
    arrow_to_avro_schema,
    avro_record_name_and_namespace,
    avro_to_arrow_schema,
    meta_field_avro_fields,
    to_avro_json,
    with_meta_fields,
)
from tests.conftest import MISSING_SHARED, SHARED_TABLES, shared_zips, unzip_table

ZIPS = shared_zips()
WRITE_ACTIONS = re.compile(r"^(\d+)(?:_\d+)?\.(commit|deltacommit|replacecommit)$")
META_COLUMNS = set(META_FIELDS) | {"_hoodie_operation"}


def _tables() -> list:
    return ZIPS


# --------------------------------------------------------------------------------------------------
# reading the real tables (unzipped once per session, never copied into the repository)

@pytest.fixture(scope="session")
def unzipped(tmp_path_factory):
    root = tmp_path_factory.mktemp("hudi_tables")

    @lru_cache(maxsize=None)
    def base_path(zip_rel: str) -> Path:
        return unzip_table(zip_rel, root / zip_rel.replace("/", "__"))

    return base_path


def _completed_writes(base: Path) -> list[tuple[str, dict]]:
    """(instant, commit metadata) of every completed commit/deltacommit/replacecommit, oldest first:
    v6 JSON files in ``.hoodie/``, v8/v9 Avro containers in ``.hoodie/timeline/``."""
    hoodie = base / ".hoodie"
    timeline = hoodie / "timeline" if (hoodie / "timeline").is_dir() else hoodie
    out = []
    for path in sorted(timeline.iterdir()):
        match = WRITE_ACTIONS.match(path.name)
        if not match or not path.is_file():
            continue
        raw = path.read_bytes()
        if raw[:4] == b"Obj\x01":
            with path.open("rb") as stream:
                (metadata,) = list(fastavro.reader(stream))
        else:
            metadata = json.loads(raw) if raw.strip() else {}
        out.append((match.group(1), metadata))
    return out


def _schema_text(metadata: dict) -> str | None:
    return (metadata.get("extraMetadata") or {}).get("schema")


def _base_files(base: Path, metadata: dict) -> list[Path]:
    """Parquet base files a commit's write stats name (its new files, or its logs' base file)."""
    found = []
    for stats in (metadata.get("partitionToWriteStats") or {}).values():
        for stat in stats or []:
            path = stat.get("path") or ""
            if not path.endswith(".parquet") and stat.get("baseFile"):
                partition = stat.get("partitionPath") or ""
                path = f"{partition}/{stat['baseFile']}" if partition else stat["baseFile"]
            if path.endswith(".parquet") and (base / path).is_file():
                found.append(base / path)
    return found


def _table_properties(base: Path) -> dict[str, str]:
    return parse_properties((base / ".hoodie" / "hoodie.properties").read_text(encoding="latin-1"))


def _log_schema_headers(path: Path) -> list[str]:
    """SCHEMA header values of every block in a MOR log file (framing per the format spec §7)."""
    raw, pos, headers = path.read_bytes(), 0, []
    while pos < len(raw):
        assert raw[pos:pos + 6] == b"#HUDI#", f"{path.name}: no block magic at offset {pos}"
        (block_length,) = struct.unpack_from(">q", raw, pos + 6)
        cursor = pos + 14 + 8  # magic, block length, format version, block type
        (count,) = struct.unpack_from(">i", raw, cursor)
        cursor += 4
        for _ in range(count):
            key, length = struct.unpack_from(">ii", raw, cursor)
            if key == 2:  # SCHEMA
                headers.append(raw[cursor + 8:cursor + 8 + length].decode("utf-8"))
            cursor += 8 + length
        pos += 14 + block_length
    return headers


# --------------------------------------------------------------------------------------------------
# precise comparison of a declared (Avro-derived) schema with a parquet file's

def _differences(declared: pa.Field, stored: pa.Field, where: str) -> list[str]:
    """Every way ``stored`` (from a parquet footer) differs from ``declared`` (from Avro), except
    the one difference Hudi's files legitimately show:

    * a list in parquet-avro's legacy 2-level layout (the repeated group is named ``array``) has
      non-null elements in Arrow, because that layout cannot mark elements optional, while the
      Avro items are ``["null", T]``. Only that combination is allowed.

    Element/entry field *names* are not compared (Arrow's own list/map equality ignores them);
    everything else (names and order of struct fields, nullability, leaf types exactly, including
    integer widths and timestamp unit and zone) must be equal. Hudi's own base files store Spark
    byte/short columns as int32, so no integer widening is allowed either."""
    d_type, s_type = declared.type, stored.type
    problems = []
    if declared.nullable != stored.nullable:
        problems.append(f"{where}: nullable {declared.nullable} in Avro, {stored.nullable} in parquet")
    if pa.types.is_struct(d_type) and pa.types.is_struct(s_type):
        d_names = [d_type.field(i).name for i in range(d_type.num_fields)]
        s_names = [s_type.field(i).name for i in range(s_type.num_fields)]
        if d_names != s_names:
            return problems + [f"{where}: struct fields {d_names} in Avro, {s_names} in parquet"]
        for i, name in enumerate(d_names):
            problems += _differences(d_type.field(i), s_type.field(i), f"{where}.{name}")
        return problems
    if pa.types.is_list(d_type) and pa.types.is_list(s_type):
        d_item, s_item = d_type.value_field, s_type.value_field
        legacy_two_level = s_item.name == "array" and d_item.nullable and not s_item.nullable
        if legacy_two_level:
            s_item = s_item.with_nullable(True)
        return problems + _differences(d_item, s_item, f"{where}.element")
    if pa.types.is_map(d_type) and pa.types.is_map(s_type):
        problems += _differences(d_type.key_field, s_type.key_field, f"{where}.key")
        return problems + _differences(d_type.item_field, s_type.item_field, f"{where}.value")
    if d_type != s_type:
        problems.append(f"{where}: {d_type} in Avro, {s_type} in parquet")
    return problems


def _schema_differences(declared: pa.Schema, stored: pa.Schema) -> list[str]:
    if declared.names != stored.names:
        return [f"columns {declared.names} in Avro, {stored.names} in parquet"]
    problems = []
    for d_field, s_field in zip(declared, stored):
        problems += _differences(d_field, s_field, d_field.name)
    return problems


def test_comparison_allows_only_the_legacy_list_difference():
    avro_side = pa.schema([pa.field("a", pa.list_(pa.field("element", pa.int32(), True)))])
    legacy = pa.schema([pa.field("a", pa.list_(pa.field("array", pa.int32(), False)))])
    modern_not_null = pa.schema([pa.field("a", pa.list_(pa.field("element", pa.int32(), False)))])
    assert _schema_differences(avro_side, legacy) == []
    assert _schema_differences(avro_side, modern_not_null) == ["a.element: nullable True in Avro, False in parquet"]
    assert _schema_differences(pa.schema([("b", pa.int32())]), pa.schema([("b", pa.int16())])) == [
        "b: int32 in Avro, int16 in parquet"]
    assert _schema_differences(pa.schema([("t", pa.timestamp("us", "UTC"))]), pa.schema([("t", pa.timestamp("us"))]))


# --------------------------------------------------------------------------------------------------
# real tables

@pytest.mark.parametrize("zip_rel", _tables())
def test_commit_schema_matches_the_base_files_it_wrote(unzipped, zip_rel):
    """avro_to_arrow_schema(extraMetadata.schema) is the schema of the parquet base files the same
    commit names, meta columns dropped (v6 JSON and v8/v9 Avro commit files alike)."""
    base = unzipped(zip_rel)
    compared = 0
    for instant, metadata in _completed_writes(base):
        text = _schema_text(metadata)
        if text is None:
            continue
        declared = avro_to_arrow_schema(text)
        for parquet in _base_files(base, metadata):
            stored = pq.read_schema(parquet)
            data = pa.schema([f for f in stored if f.name not in META_COLUMNS])
            assert _schema_differences(declared, data) == [], f"{instant}: {parquet.name}"
            compared += 1
    if compared == 0:
        pytest.skip(f"{zip_rel}: no commit names an existing parquet base file (empty table or Lance base files)")


@pytest.mark.parametrize("zip_rel", _tables())
def test_commit_schema_round_trips_to_the_same_bytes(unzipped, zip_rel):
    """arrow_to_avro_schema(avro_to_arrow_schema(s)) == s for every distinct commit schema: equal as
    dicts and, serialised with to_avro_json, equal as the exact string Hudi stored."""
    base = unzipped(zip_rel)
    texts = {text for _, metadata in _completed_writes(base) if (text := _schema_text(metadata))}
    if not texts:
        pytest.skip(f"{zip_rel}: no completed commit carries extraMetadata.schema")
    table_name = _table_properties(base)["hoodie.table.name"]
    record_name, namespace = avro_record_name_and_namespace(table_name)
    for text in sorted(texts):
        written = json.loads(text)
        assert (written["name"], written["namespace"]) == (record_name, namespace)
        ours = arrow_to_avro_schema(avro_to_arrow_schema(written), record_name, namespace)
        assert ours == written
        assert to_avro_json(ours) == text


@pytest.mark.parametrize("zip_rel", _tables())
def test_create_schema_reads_like_the_first_commit_schema(unzipped, zip_rel):
    """hoodie.table.create.schema (``["int","null"]`` unions, no defaults, in v6/v8) reads to the
    same Arrow schema as the first commit's schema, and writes back as that commit schema."""
    base = unzipped(zip_rel)
    properties = _table_properties(base)
    create = properties.get("hoodie.table.create.schema")
    if create is None:
        pytest.skip(f"{zip_rel}: hoodie.properties has no hoodie.table.create.schema")
    arrow = avro_to_arrow_schema(create)
    assert len(arrow) > 0 and all(f.nullable for f in arrow)
    first = next((text for _, metadata in _completed_writes(base) if (text := _schema_text(metadata))), None)
    if first is None:
        return  # an empty table: the create schema is all there is, and it parsed
    assert arrow == avro_to_arrow_schema(first)
    record_name, namespace = avro_record_name_and_namespace(properties["hoodie.table.name"])
    assert arrow_to_avro_schema(arrow, record_name, namespace) == json.loads(first)


def _log_files() -> list:
    if not SHARED_TABLES.is_dir():
        return [f"zip:{MISSING_SHARED}"]  # the test fails (CI) or skips, through unzip_table
    fixtures = sorted(str(p.relative_to(SHARED_TABLES)) for p in (SHARED_TABLES / "core_fixtures").rglob(".*.log.*"))
    return fixtures + [f"zip:{z}" for z in ZIPS if "/mor/" in z]


@pytest.mark.parametrize("source", _log_files())
def test_log_block_schema_headers_are_data_schema_with_meta_fields(unzipped, source):
    """Every SCHEMA header Hudi wrote into a log block is with_meta_fields(data schema), and the data
    schema round-trips through Arrow to the same bytes."""
    if source.startswith("zip:"):
        base = unzipped(source[4:])
        logs = [p for p in base.rglob(".*.log.*") if ".hoodie" not in p.relative_to(base).parts]
    else:
        logs = [SHARED_TABLES / source]
    headers = [h for log in logs for h in _log_schema_headers(log)]
    if not headers:
        pytest.skip(f"{source}: no log files, or only command (rollback) blocks, which carry no SCHEMA header")
    for text in headers:
        header = json.loads(text)
        assert header["fields"][:5] == meta_field_avro_fields()
        data = {**header, "fields": header["fields"][5:]}
        assert with_meta_fields(data) == header
        assert to_avro_json(with_meta_fields(data)) == text
        assert arrow_to_avro_schema(avro_to_arrow_schema(data), data["name"], data["namespace"]) == data


# --------------------------------------------------------------------------------------------------
# hand-made schemas: Arrow -> Avro

def _nullable(avro):
    return ["null", avro]


# (Arrow type, its bare Avro type, the Arrow type that Avro reads back as)
SCALARS = [
    (pa.bool_(), "boolean", pa.bool_()),
    (pa.int8(), "int", pa.int32()),
    (pa.int16(), "int", pa.int32()),
    (pa.int32(), "int", pa.int32()),
    (pa.uint8(), "int", pa.int32()),
    (pa.uint16(), "int", pa.int32()),
    (pa.uint32(), "long", pa.int64()),
    (pa.int64(), "long", pa.int64()),
    (pa.float32(), "float", pa.float32()),
    (pa.float64(), "double", pa.float64()),
    (pa.string(), "string", pa.string()),
    (pa.large_string(), "string", pa.string()),
    (pa.dictionary(pa.int32(), pa.string()), "string", pa.string()),
    (pa.binary(), "bytes", pa.binary()),
    (pa.large_binary(), "bytes", pa.binary()),
    (pa.binary(16), "bytes", pa.binary()),
    (pa.date32(), {"type": "int", "logicalType": "date"}, pa.date32()),
    (pa.date64(), {"type": "int", "logicalType": "date"}, pa.date32()),
    (pa.time32("s"), {"type": "int", "logicalType": "time-millis"}, pa.time32("ms")),
    (pa.time32("ms"), {"type": "int", "logicalType": "time-millis"}, pa.time32("ms")),
    (pa.time64("us"), {"type": "long", "logicalType": "time-micros"}, pa.time64("us")),
    (pa.timestamp("us", "UTC"), {"type": "long", "logicalType": "timestamp-micros"}, pa.timestamp("us", "UTC")),
    (pa.timestamp("us", "Europe/Paris"), {"type": "long", "logicalType": "timestamp-micros"},
     pa.timestamp("us", "UTC")),
    (pa.timestamp("ms", "UTC"), {"type": "long", "logicalType": "timestamp-millis"}, pa.timestamp("ms", "UTC")),
    (pa.timestamp("s", "UTC"), {"type": "long", "logicalType": "timestamp-millis"}, pa.timestamp("ms", "UTC")),
    (pa.timestamp("ns", "UTC"), {"type": "long", "logicalType": "timestamp-nanos"}, pa.timestamp("ns", "UTC")),
    (pa.timestamp("us"), {"type": "long", "logicalType": "local-timestamp-micros"}, pa.timestamp("us")),
    (pa.timestamp("ms"), {"type": "long", "logicalType": "local-timestamp-millis"}, pa.timestamp("ms")),
    (pa.timestamp("ns"), {"type": "long", "logicalType": "local-timestamp-nanos"}, pa.timestamp("ns")),
]
for _view in ("string_view", "binary_view"):  # pyarrow >= 16
    if hasattr(pa, _view):
        SCALARS.append((getattr(pa, _view)(), "string" if _view.startswith("string") else "bytes",
                        pa.string() if _view.startswith("string") else pa.binary()))


@pytest.mark.parametrize("arrow_type, avro_type, read_back", SCALARS, ids=[str(s[0]) for s in SCALARS])
def test_scalar_types(arrow_type, avro_type, read_back):
    schema = pa.schema([pa.field("c", arrow_type, nullable=True), pa.field("r", arrow_type, nullable=False)])
    avro = arrow_to_avro_schema(schema, "t_record", "hoodie.t")
    # nullable -> ["null", T] with a null default; required -> bare T, no default
    assert avro["fields"] == [{"name": "c", "type": _nullable(avro_type), "default": None},
                              {"name": "r", "type": avro_type}]
    back = avro_to_arrow_schema(avro)
    assert back.field("c").type == read_back and back.field("c").nullable
    assert back.field("r").type == read_back and not back.field("r").nullable


def test_null_type_is_never_wrapped_in_a_union():
    # Spark's NullType is the bare "null" (nothing to union with), with no default
    avro = arrow_to_avro_schema(pa.schema([("nothing", pa.null())]), "t_record", "hoodie.t")
    assert avro["fields"] == [{"name": "nothing", "type": "null"}]
    assert avro_to_arrow_schema(avro) == pa.schema([pa.field("nothing", pa.null(), nullable=True)])


@pytest.mark.parametrize("precision, size", [(1, 1), (2, 1), (3, 2), (9, 4), (10, 5), (15, 7), (18, 8), (19, 9),
                                             (38, 16), (39, 17), (76, 32)])
def test_decimals_are_fixed_sized_for_their_precision(precision, size):
    scale = min(2, precision)
    arrow_type = pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
    avro = arrow_to_avro_schema(pa.schema([("amount", arrow_type)]), "t_record", "hoodie.t")
    assert avro["fields"][0]["type"] == _nullable({
        "type": "fixed", "name": "fixed", "namespace": "hoodie.t.t_record.amount", "size": size,
        "logicalType": "decimal", "precision": precision, "scale": scale})
    assert avro_to_arrow_schema(avro).field("amount").type == arrow_type
    # the size is the smallest two's complement width holding 10**precision - 1
    assert 2 ** (8 * size - 1) > 10 ** precision - 1 >= 2 ** (8 * (size - 1) - 1)


def test_nested_types_are_named_as_spark_names_them():
    element = pa.struct([("f1", pa.string()), ("f2", pa.decimal128(5, 1))])
    schema = pa.schema([
        ("arr", pa.list_(element)),
        ("m", pa.map_(pa.string(), pa.struct([("x", pa.float64())]))),
        ("s", pa.struct([("a", pa.int32()), ("child", pa.struct([("d", pa.decimal128(10, 5))])),
                         ("nums", pa.list_(pa.decimal128(4, 0)))])),
        ("grid", pa.list_(pa.list_(pa.int64()))),
    ])
    avro = arrow_to_avro_schema(schema, "t_record", "hoodie.t")
    assert avro == {"type": "record", "name": "t_record", "namespace": "hoodie.t", "fields": [
        {"name": "arr", "type": _nullable({"type": "array", "items": _nullable({
            "type": "record", "name": "arr", "namespace": "hoodie.t.t_record", "fields": [
                {"name": "f1", "type": _nullable("string"), "default": None},
                {"name": "f2", "type": _nullable({
                    "type": "fixed", "name": "fixed", "namespace": "hoodie.t.t_record.arr.f2", "size": 3,
                    "logicalType": "decimal", "precision": 5, "scale": 1}), "default": None}]})}), "default": None},
        {"name": "m", "type": _nullable({"type": "map", "values": _nullable({
            "type": "record", "name": "m", "namespace": "hoodie.t.t_record", "fields": [
                {"name": "x", "type": _nullable("double"), "default": None}]})}), "default": None},
        {"name": "s", "type": _nullable({"type": "record", "name": "s", "namespace": "hoodie.t.t_record", "fields": [
            {"name": "a", "type": _nullable("int"), "default": None},
            {"name": "child", "type": _nullable({
                "type": "record", "name": "child", "namespace": "hoodie.t.t_record.s", "fields": [
                    {"name": "d", "type": _nullable({
                        "type": "fixed", "name": "fixed", "namespace": "hoodie.t.t_record.s.child.d", "size": 5,
                        "logicalType": "decimal", "precision": 10, "scale": 5}), "default": None}]}),
             "default": None},
            {"name": "nums", "type": _nullable({"type": "array", "items": _nullable({
                "type": "fixed", "name": "fixed", "namespace": "hoodie.t.t_record.s.nums", "size": 2,
                "logicalType": "decimal", "precision": 4, "scale": 0})}), "default": None}]}), "default": None},
        {"name": "grid", "type": _nullable({"type": "array", "items": _nullable({
            "type": "array", "items": _nullable("long")})}), "default": None},
    ]}
    # every named type has a distinct full name: Avro's own parser accepts the schema
    fastavro.parse_schema(avro, named_schemas={})
    back = avro_to_arrow_schema(to_avro_json(avro))
    assert back == schema
    assert arrow_to_avro_schema(back, "t_record", "hoodie.t") == avro


def test_required_items_values_and_struct_fields_are_bare_types():
    schema = pa.schema([
        pa.field("ids", pa.list_(pa.field("item", pa.int64(), nullable=False)), nullable=False),
        pa.field("attrs", pa.map_(pa.string(), pa.field("value", pa.string(), nullable=False))),
        pa.field("pt", pa.struct([pa.field("x", pa.float64(), nullable=False)]), nullable=False),
    ])
    avro = arrow_to_avro_schema(schema, "t_record", "hoodie.t")
    assert avro["fields"] == [
        {"name": "ids", "type": {"type": "array", "items": "long"}},
        {"name": "attrs", "type": _nullable({"type": "map", "values": "string"}), "default": None},
        {"name": "pt", "type": {"type": "record", "name": "pt", "namespace": "hoodie.t.t_record",
                                "fields": [{"name": "x", "type": "double"}]}},
    ]
    back = avro_to_arrow_schema(avro)
    assert back == schema  # list/map child names differ (item vs element), which Arrow equality ignores
    assert back.field("ids").type.value_field.name == "element"


def test_other_list_layouts_and_dictionaries_map_to_their_plain_forms():
    schema = pa.schema([("a", pa.large_list(pa.int32())), ("b", pa.list_(pa.string(), 3)),
                        ("c", pa.list_(pa.dictionary(pa.int8(), pa.string()))),
                        ("d", pa.map_(pa.large_string(), pa.int32()))])
    avro = arrow_to_avro_schema(schema, "t_record", "hoodie.t")
    items = [f["type"][1] for f in avro["fields"]]
    assert items == [{"type": "array", "items": _nullable("int")}, {"type": "array", "items": _nullable("string")},
                     {"type": "array", "items": _nullable("string")}, {"type": "map", "values": _nullable("int")}]
    assert avro_to_arrow_schema(avro) == pa.schema([("a", pa.list_(pa.int32())), ("b", pa.list_(pa.string())),
                                                    ("c", pa.list_(pa.string())), ("d", pa.map_(pa.string(), pa.int32()))])


def test_empty_namespace_and_column_comments():
    schema = pa.schema([pa.field("id", pa.int64(), metadata={b"comment": "the key – unique"}),
                        pa.field("s", pa.struct([("d", pa.decimal128(3, 1))]))])
    avro = arrow_to_avro_schema(schema, "r", "")
    assert "namespace" not in avro
    assert avro["fields"][0] == {"name": "id", "type": _nullable("long"), "doc": "the key – unique", "default": None}
    assert avro["fields"][1]["type"][1]["namespace"] == "r"
    assert avro["fields"][1]["type"][1]["fields"][0]["type"][1]["namespace"] == "r.s.d"
    back = avro_to_arrow_schema(to_avro_json(avro))
    assert back.field("id").metadata == {b"comment": "the key – unique".encode()}
    assert arrow_to_avro_schema(back, "r", "") == avro


def test_record_name_and_namespace_follow_hudi_sanitising():
    assert avro_record_name_and_namespace("trips") == ("trips_record", "hoodie.trips")
    assert avro_record_name_and_namespace("my-table.v2") == ("my__table__v2_record", "hoodie.my__table__v2")
    assert avro_record_name_and_namespace("1st") == ("__st_record", "hoodie.__st")
    with pytest.raises(HoodieConfigError, match="table name is empty"):
        avro_record_name_and_namespace("")


# --------------------------------------------------------------------------------------------------
# hand-made schemas: Avro -> Arrow tolerance

def _record(*fields):
    return {"type": "record", "name": "t_record", "namespace": "hoodie.t", "fields": list(fields)}


def test_union_order_and_null_forms_are_tolerated():
    avro = _record({"name": "a", "type": ["int", "null"]}, {"name": "b", "type": ["null", "int"], "default": None},
                   {"name": "c", "type": "int"}, {"name": "d", "type": [{"type": "null"}, "string"]},
                   {"name": "e", "type": ["null"]}, {"name": "f", "type": {"type": "string"}},
                   {"name": "g", "type": {"type": ["null", "long"]}})
    assert avro_to_arrow_schema(avro) == pa.schema([
        pa.field("a", pa.int32()), pa.field("b", pa.int32()), pa.field("c", pa.int32(), nullable=False),
        pa.field("d", pa.string()), pa.field("e", pa.null()), pa.field("f", pa.string(), nullable=False),
        pa.field("g", pa.int64())])


def test_logical_types_and_named_types_are_tolerated():
    avro = _record(
        {"name": "ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "ntz", "type": ["null", {"type": "long", "logicalType": "local-timestamp-micros"}]},
        {"name": "dec_bytes", "type": {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 3}},
        {"name": "dec_no_scale", "type": {"type": "bytes", "logicalType": "decimal", "precision": 7}},
        {"name": "wide", "type": {"type": "fixed", "name": "w", "size": 20, "logicalType": "decimal", "precision": 45,
                                  "scale": 10}},
        {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}},
        {"name": "color2", "type": ["null", "Color"]},
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "md5", "type": {"type": "fixed", "name": "MD5", "namespace": "other", "size": 16}},
        {"name": "md5_again", "type": "other.MD5"},
        {"name": "inner", "type": {"type": "record", "name": "Inner", "fields": [{"name": "v", "type": "int"}]}},
        {"name": "inner_again", "type": ["null", "hoodie.t.Inner"]},
        {"name": "span", "type": {"type": "fixed", "name": "span", "size": 12, "logicalType": "duration"}},
        {"name": "time_ms", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "err", "type": {"type": "error", "name": "E", "fields": [{"name": "msg", "type": "string"}]}},
    )
    got = avro_to_arrow_schema(avro)
    assert [(f.name, f.type, f.nullable) for f in got] == [
        ("ms", pa.timestamp("ms", "UTC"), False), ("ntz", pa.timestamp("us"), True),
        ("dec_bytes", pa.decimal128(20, 3), False), ("dec_no_scale", pa.decimal128(7, 0), False),
        ("wide", pa.decimal256(45, 10), False), ("color", pa.string(), False), ("color2", pa.string(), True),
        ("id", pa.string(), False), ("md5", pa.binary(16), False), ("md5_again", pa.binary(16), False),
        ("inner", pa.struct([pa.field("v", pa.int32(), False)]), False),
        ("inner_again", pa.struct([pa.field("v", pa.int32(), False)]), True),
        ("span", pa.binary(12), False), ("time_ms", pa.time32("ms"), False),
        ("err", pa.struct([pa.field("msg", pa.string(), False)]), False),
    ]


def test_logical_types_avro_ignores_fall_back_to_the_underlying_type(caplog):
    avro = _record(
        {"name": "unknown", "type": {"type": "long", "logicalType": "clock-ticks"}},
        {"name": "wrong_base", "type": {"type": "int", "logicalType": "timestamp-micros"}},
        {"name": "too_precise", "type": {"type": "fixed", "name": "f", "size": 2, "logicalType": "decimal",
                                         "precision": 9, "scale": 0}},
        {"name": "scale_over", "type": {"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 3}},
    )
    with caplog.at_level(logging.WARNING, logger="hoodie_datasource.schema.avro_schema"):
        got = avro_to_arrow_schema(avro)
    assert got.types == [pa.int64(), pa.int32(), pa.binary(2), pa.binary()]
    assert sum("invalid decimal" in r.getMessage() for r in caplog.records) == 2


def test_avro_json_text_is_compact_and_keeps_unicode():
    avro = arrow_to_avro_schema(pa.schema([pa.field("prix_é", pa.int32())]), "t_record", "hoodie.t")
    text = to_avro_json(avro)
    assert text == ('{"type":"record","name":"t_record","namespace":"hoodie.t","fields":'
                    '[{"name":"prix_é","type":["null","int"],"default":null}]}')
    assert avro_to_arrow_schema(text) == avro_to_arrow_schema(text.encode("utf-8")) == pa.schema([("prix_é", pa.int32())])


# --------------------------------------------------------------------------------------------------
# meta fields

def test_meta_fields_as_hudi_writes_them():
    assert meta_field_avro_fields() == [
        {"name": name, "type": ["null", "string"], "doc": "", "default": None}
        for name in ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
                     "_hoodie_file_name")]
    assert [f["name"] for f in meta_field_avro_fields(with_operation=True)][-1] == "_hoodie_operation"
    meta_field_avro_fields()[0]["name"] = "changed"  # fresh dicts each call
    assert meta_field_avro_fields()[0]["name"] == "_hoodie_commit_time"


def test_with_meta_fields_prepends_without_touching_the_input():
    data = arrow_to_avro_schema(pa.schema([("id", pa.int64())]), "t_record", "hoodie.t")
    before = json.dumps(data)
    full = with_meta_fields(data)
    assert json.dumps(data) == before
    assert list(full) == ["type", "name", "namespace", "fields"]
    assert full["fields"] == meta_field_avro_fields() + data["fields"]
    # meta fields already present are moved to the front, never duplicated (Hudi's addMetadataFields)
    assert with_meta_fields(full) == full
    shuffled = {**data, "fields": data["fields"] + meta_field_avro_fields()[::-1]}
    assert with_meta_fields(shuffled) == full
    assert avro_to_arrow_schema(full).names == list(META_FIELDS) + ["id"]


# --------------------------------------------------------------------------------------------------
# errors

UNSUPPORTED_ARROW = [
    (pa.float16(), "float32"),
    (pa.uint64(), "int64"),
    (pa.duration("s"), "int64"),
    (pa.month_day_nano_interval(), "int64"),
    (pa.time64("ns"), "time64('us')"),
    (pa.map_(pa.int32(), pa.string()), "string"),
    (pa.decimal128(5, -2), "scale"),
    (pa.decimal128(2, 3), "scale"),
    (pa.dense_union([pa.field("i", pa.int32()), pa.field("s", pa.string())]), "supported"),
]


@pytest.mark.parametrize("arrow_type, hint", UNSUPPORTED_ARROW, ids=[str(u[0]) for u in UNSUPPORTED_ARROW])
def test_arrow_types_without_avro_form_name_the_column_and_type(arrow_type, hint):
    with pytest.raises(UnsupportedTableError) as error:
        arrow_to_avro_schema(pa.schema([("col", arrow_type)]), "t_record", "hoodie.t")
    message = str(error.value)
    assert "'col'" in message and str(arrow_type) in message and hint in message


def test_nested_unsupported_type_names_the_path():
    schema = pa.schema([("s", pa.struct([("xs", pa.list_(pa.float16()))]))])
    with pytest.raises(UnsupportedTableError, match=r"'s\.xs\.element' has Arrow type halffloat"):
        arrow_to_avro_schema(schema, "t_record", "hoodie.t")


@pytest.mark.parametrize("name", ["my col", "1st", "a-b", "", "é!"])
def test_column_names_avro_cannot_hold_are_refused(name):
    with pytest.raises(SchemaMismatchError, match="rename the column"):
        arrow_to_avro_schema(pa.schema([(name, pa.int32())]), "t_record", "hoodie.t")


def test_unicode_letters_are_valid_avro_names():
    avro = arrow_to_avro_schema(pa.schema([("größe", pa.int32()), ("_x1", pa.int32())]), "t_record", "hoodie.t")
    assert [f["name"] for f in avro["fields"]] == ["größe", "_x1"]


def test_duplicate_columns_and_bad_record_names_are_refused():
    with pytest.raises(SchemaMismatchError, match="'s.a' appears twice"):
        arrow_to_avro_schema(pa.schema([("s", pa.struct([("a", pa.int32()), ("a", pa.int64())]))]), "r", "n")
    with pytest.raises(SchemaMismatchError, match="avro_record_name_and_namespace"):
        arrow_to_avro_schema(pa.schema([("a", pa.int32())]), "my-table_record", "hoodie.t")
    with pytest.raises(SchemaMismatchError, match="namespace"):
        arrow_to_avro_schema(pa.schema([("a", pa.int32())]), "t_record", "hoodie.my-table")


UNSUPPORTED_AVRO = [
    (["int", "string"], UnsupportedTableError, "'u': Avro union"),
    (["null", "int", "long"], UnsupportedTableError, "2 non-null branches"),
    ("com.example.Missing", UnsupportedTableError, "unknown Avro type 'com.example.Missing'"),
    ({"type": "fixed", "name": "f", "size": 40, "logicalType": "decimal", "precision": 90, "scale": 0},
     UnsupportedTableError, "decimal\\(90, 0\\)"),
    ({"type": "array"}, CorruptFileError, "no 'items'"),
    ({"type": "map"}, CorruptFileError, "no 'values'"),
    ({"type": "fixed", "name": "f"}, CorruptFileError, "no valid 'size'"),
    ({"type": "record", "name": "r"}, CorruptFileError, "no 'fields'"),
    ({"type": "record", "fields": []}, CorruptFileError, "no name"),
    (42, CorruptFileError, "not an Avro type"),
]


@pytest.mark.parametrize("avro_type, error, message", UNSUPPORTED_AVRO, ids=[json.dumps(u[0]) for u in UNSUPPORTED_AVRO])
def test_avro_types_without_arrow_form_name_the_field_and_type(avro_type, error, message):
    with pytest.raises(error, match=message) as raised:
        avro_to_arrow_schema(_record({"name": "u", "type": avro_type}))
    assert "'u'" in str(raised.value)


def test_recursive_records_are_refused():
    node = {"type": "record", "name": "Node", "fields": [{"name": "next", "type": ["null", "Node"]}]}
    with pytest.raises(UnsupportedTableError, match="'tree.next'.*contains itself"):
        avro_to_arrow_schema(_record({"name": "tree", "type": node}))


def test_schemas_that_are_not_records_or_not_json_are_refused():
    with pytest.raises(UnsupportedTableError, match="must be an Avro record"):
        avro_to_arrow_schema('"string"')
    with pytest.raises(UnsupportedTableError, match="must be an Avro record"):
        avro_to_arrow_schema({"type": "array", "items": "int"})
    with pytest.raises(CorruptFileError, match="not valid JSON"):
        avro_to_arrow_schema('{"type":"record",')
