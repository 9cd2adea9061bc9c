"""Record keys and partition paths as Hudi's key generators format them."""

from __future__ import annotations

import datetime
import re

import pyarrow as pa
import pytest

from hoodie_datasource.errors import InvalidRecordError, SchemaMismatchError
from hoodie_datasource.table.keygen import KeyGenerator, unescape_path_name

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
        "city=sf/day=2024-01-15", "city=__HIVE_DEFAULT_PARTITION__/day=2024-01-15", "city=new york/day=2024-01-15"]
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
        KeyGenerator(("nope",), ()).validate_schema(TABLE.schema)


def paths(values, **options):
    return KeyGenerator(("id",), ("p",), **options).partition_paths(
        pa.table({"id": list(range(len(values))), "p": values})).to_pylist()


def test_url_encoding_escapes_as_hudis_escape_path_name():
    # PartitionPathEncodeUtils.escapePathName: ASCII specials and control characters only, as %XX
    assert paths(["a/b", "50%", "x=1:2", "tab\there", "new york", "café", "q?#*'\"[]^{\\"], url_encode=True) == [
        "a%2Fb", "50%25", "x%3D1%3A2", "tab%09here", "new york", "café", "q%3F%23%2A%27%22%5B%5D%5E%7B%5C"]
    assert unescape_path_name("q%3F%23%2A%27%22%5B%5D%5E%7B%5C/50%25/%zz/%2") == "q?#*'\"[]^{\\/50%/%zz/%2"


def test_values_that_are_not_plain_relative_paths_are_escaped():
    unsafe = ["a//b", "a/", "/tmp/somewhere", "../escape", "a/./b", "x\ny"]
    assert paths(unsafe) == ["a%2F%2Fb", "a%2F", "%2Ftmp%2Fsomewhere", "..%2Fescape", "a%2F.%2Fb", "x%0Ay"]
    assert paths(["p/1/"], hive_style=True) == ["p=p%2F1%2F"]
    # plain relative paths, dots inside a segment and percent signs are kept as they are
    assert paths(["a/b", "2024.01.01", "...", "50%", "a=b"]) == ["a/b", "2024.01.01", "...", "50%", "a=b"]
    # hive style makes '..' a name of its own (p=..), not a step up
    assert paths([".."], hive_style=True) == ["p=.."]


@pytest.mark.parametrize("value", [".", ".."])
@pytest.mark.parametrize("url_encode", [False, True])
def test_dot_segments_are_refused_naming_the_value(value, url_encode):
    with pytest.raises(InvalidRecordError, match=f"'p' has the value '{re.escape(value)}' in 1 record"):
        paths(["ok", value], url_encode=url_encode)


def test_the_meta_folder_is_never_a_partition():
    assert paths([".hoodie/x", ".hoodie_x", ".net"]) == [".hoodie%2Fx", ".hoodie_x", ".net"]
    assert paths([".hoodie"], hive_style=True) == ["p=.hoodie"]
    with pytest.raises(InvalidRecordError, match="nor start with '.hoodie'"):
        paths([".hoodie"])
