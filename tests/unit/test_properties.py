"""hoodie.properties in java.util.Properties syntax: parsing real files, writing, round trips."""

from __future__ import annotations

from hoodie_datasource.config.properties_file import format_properties, parse_properties
from hoodie_datasource.config.table_config import load_table_config
from hoodie_datasource.storage.registry import open_storage
from tests.conftest import unzip_table


def test_round_trip_with_escapes():
    props = {"a.b": "x=y:z", "schema": '{"type":"record"}', "spaces": " lead", "uni": "é€", "back": "a\\b"}
    text = format_properties(props)
    assert text.splitlines()[0].startswith("#Properties saved on")
    assert "schema={\"type\"\\:\"record\"}" in text
    assert parse_properties(text) == props


def test_continuation_lines_and_comments():
    text = "# comment\n! also\nkey = value \\\n    continued\nother:1\n"
    assert parse_properties(text) == {"key": "value continued", "other": "1"}


def test_real_table_properties(tmp_path):
    base = unzip_table("sample_table/cow/v6_complexkeygen_hivestyle.zip", tmp_path)
    config = load_table_config(open_storage(str(base)))
    assert config.record_key_fields == ("id", "name")
    assert config.partition_fields == ("byteField", "shortField")
    assert config.hive_style_partitioning and config.version == 6 and not config.is_mor
    assert config.create_schema.startswith('{"type":"record"')
