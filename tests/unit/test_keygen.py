"""Record keys and partition paths as Hudi's key generators format them."""

from __future__ import annotations

import datetime

import pyarrow as pa
import pytest

from hoodie_datasource.errors import InvalidRecordError, SchemaMismatchError
from hoodie_datasource.table.keygen import KeyGenerator

TABLE = pa.table({
    "id": pa.array([1, 2, 3], pa.int32()),
    "name": ["Alice", None, ""],
    "city": ["sf", None, "new york"],
    "day": pa.array([datetime.date(2024, 1, 15)] * 3),
    "flag": [True, False, True],
})


def test_simple_key_and_plain_partition():
    gen = KeyGenerator(("id",), ("city",))
    assert gen.record_keys(TABLE).to_pylist() == ["1", "2", "3"]
    assert gen.partition_paths(TABLE).to_pylist() == ["sf", "__HIVE_DEFAULT_PARTITION__", "new york"]
    assert gen.class_name.endswith("SimpleKeyGenerator")


def test_complex_key_hive_style_and_url_encoding():
    gen = KeyGenerator(("id", "name"), ("city", "day"), hive_style=True, url_encode=True)
    assert gen.record_keys(TABLE).to_pylist() == ["id:1,name:Alice", "id:2,name:__null__", "id:3,name:__empty__"]
    assert gen.partition_paths(TABLE).to_pylist() == [
        "city=sf/day=2024-01-15", "city=__HIVE_DEFAULT_PARTITION__/day=2024-01-15", "city=new%20york/day=2024-01-15"]
    assert gen.class_name.endswith("ComplexKeyGenerator")


def test_nonpartitioned_and_boolean_keys():
    gen = KeyGenerator(("flag",), ())
    assert gen.record_keys(TABLE).to_pylist() == ["true", "false", "true"]
    assert gen.partition_paths(TABLE).to_pylist() == ["", "", ""]
    assert gen.class_name.endswith("NonpartitionedKeyGenerator")


def test_null_or_empty_keys_are_rejected():
    with pytest.raises(InvalidRecordError, match="'name' is null or empty in 2 record"):
        KeyGenerator(("name",), ()).record_keys(TABLE)
    with pytest.raises(SchemaMismatchError, match="record key field\\(s\\) nope not found"):
        KeyGenerator(("nope",), ()).validate_schema(TABLE.column_names)
