"""Avro schemas as Hudi writes them: what we write equals what Hudi wrote for the same columns."""

from __future__ import annotations

import glob
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie_datasource.errors import UnsupportedTableError
from hoodie_datasource.schema.avro_schema import (
    arrow_to_avro_schema,
    avro_to_arrow_schema,
    meta_field_avro_fields,
    to_avro_json,
    with_meta_fields,
)
from tests.conftest import unzip_table

V6_TABLES = ["sample_table/cow/v6_nonpartitioned.zip", "sample_table/cow/v6_complexkeygen_hivestyle.zip",
             "quickstart_trips_table/mor/avro/v6_trips_8i1u.zip"]


@pytest.mark.parametrize("zip_name", V6_TABLES)
def test_commit_schema_round_trips_exactly(tmp_path, zip_name):
    base = unzip_table(zip_name, tmp_path)
    commit = sorted(glob.glob(os.path.join(base, ".hoodie", "*.commit")) +
                    glob.glob(os.path.join(base, ".hoodie", "*.deltacommit")))[-1]
    written = json.loads(json.load(open(commit))["extraMetadata"]["schema"])
    arrow = avro_to_arrow_schema(written)
    assert arrow_to_avro_schema(arrow, written["name"], written["namespace"]) == written
    # and the Arrow schema agrees with the base files (Spark byte/short columns are int in Avro)
    parquet = next(p for p in glob.glob(os.path.join(base, "**", "*.parquet"), recursive=True) if "/.hoodie/" not in p)
    stored = pq.read_schema(parquet)
    for field in arrow:
        found = stored.field(field.name).type
        assert found == field.type or (pa.types.is_integer(found) and pa.types.is_integer(field.type)) or (
            pa.types.is_timestamp(found) and pa.types.is_timestamp(field.type)) or (
            pa.types.is_list(found) or pa.types.is_map(found) or pa.types.is_struct(found)), field.name


def test_arrow_types_and_nullability():
    schema = pa.schema([
        pa.field("id", pa.int64(), nullable=False), ("name", pa.string()), ("price", pa.decimal128(10, 2)),
        ("day", pa.date32()), ("at", pa.timestamp("us", "UTC")), ("local", pa.timestamp("us")),
        ("tags", pa.list_(pa.string())), ("attrs", pa.map_(pa.string(), pa.int32())),
        ("nested", pa.struct([("x", pa.float64())])), ("raw", pa.binary()),
    ])
    avro = arrow_to_avro_schema(schema, "t_record", "hoodie.t")
    fields = {f["name"]: f for f in avro["fields"]}
    assert fields["id"]["type"] == "long" and "default" not in fields["id"]
    assert fields["name"] == {"name": "name", "type": ["null", "string"], "default": None}
    assert fields["price"]["type"][1]["size"] == 5
    assert fields["nested"]["type"][1]["namespace"] == "hoodie.t.t_record"
    back = avro_to_arrow_schema(to_avro_json(avro))
    assert back.field("local").type == pa.timestamp("us") and back.field("at").type == pa.timestamp("us", "UTC")
    assert with_meta_fields(avro)["fields"][:5] == meta_field_avro_fields()


def test_unsupported_types_are_named():
    with pytest.raises(UnsupportedTableError, match="'d'"):
        arrow_to_avro_schema(pa.schema([("d", pa.duration("s"))]), "t", "n")
    with pytest.raises(UnsupportedTableError, match="union"):
        avro_to_arrow_schema({"type": "record", "name": "r", "fields": [{"name": "u", "type": ["int", "string"]}]})
