"""The key generator a write uses, from its options and the table's ``hoodie.properties``.

Hudi's class names pick it (``hoodie.datasource.write.keygenerator.class``, the ``...Avro...`` variants alike),
else its type (``...keygenerator.type``, as ``HoodieSparkKeyGeneratorFactory`` reads it), else the table's,
else the record key and partition fields (simple, complex or non-partitioned). A ``CustomKeyGenerator`` reads
its partition fields typed (``region:SIMPLE,ts:TIMESTAMP``, ``CustomAvroKeyGenerator.getPartitionFieldAndKeyType``);
Hudi 0.15 records them untyped in ``hoodie.table.partition.fields``, so every write names the types again.

A timestamp-based table records its formats and zones in ``hoodie.properties`` (those given, as Hudi 0.15's
``HoodieTableConfig.PERSISTED_CONFIG_LIST`` says; not the timestamp type, which every write gives, unless the
table is Hudi 1.x's, which records it too). A later
write takes what it leaves out from there, and one that gives another value is refused: Hudi would file its
records under other partition paths, the same key in two partitions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from hoodie_datasource.config import keys as k
from hoodie_datasource.config.table_config import KEYGEN_TYPES, TableConfig
from hoodie_datasource.errors import KeyGeneratorConfigError
from hoodie_datasource.table import timestamp_keygen as tk
from hoodie_datasource.table.keygen import KeyGenerator

PARTITION_KEY_TYPES = ("SIMPLE", "TIMESTAMP")  # CustomAvroKeyGenerator.PartitionKeyType
TYPED = ("TIMESTAMP", "CUSTOM")
# each KeyGeneratorType's classes (the Spark one and its Avro variant)
_TYPE_OF_CLASS = {
    "SimpleKeyGenerator": "SIMPLE", "SimpleAvroKeyGenerator": "SIMPLE",
    "ComplexKeyGenerator": "COMPLEX", "ComplexAvroKeyGenerator": "COMPLEX",
    "NonpartitionedKeyGenerator": "NON_PARTITION", "NonpartitionedAvroKeyGenerator": "NON_PARTITION",
    "TimestampBasedKeyGenerator": "TIMESTAMP", "TimestampBasedAvroKeyGenerator": "TIMESTAMP",
    "CustomKeyGenerator": "CUSTOM", "CustomAvroKeyGenerator": "CUSTOM",
}


def keygen_type(class_name: str) -> str | None:
    """The ``KeyGeneratorType`` of one of Hudi's key generator classes, None for another class."""
    return _TYPE_OF_CLASS.get(class_name.strip().rsplit(".", 1)[-1])


def partition_specs(specs: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str | None, ...]]:
    """(names, types) of ``hoodie.datasource.write.partitionpath.field`` entries, a type None when not given."""
    split = [spec.split(":", 1) for spec in specs]
    return tuple(s[0].strip() for s in split), tuple(s[1].strip().upper() if len(s) == 2 else None for s in split)


def resolve_key_generator(get: Callable[[k.ConfigProperty], Any], options: Mapping[str, str],
                          existing: TableConfig | None, record_keys: tuple[str, ...],
                          partitions: tuple[str, ...], types: tuple[str | None, ...], hive_style: bool,
                          url_encode: bool) -> tuple[KeyGenerator, tuple[tuple[str, str], ...]]:
    """The write's key generator and the key generator options a new table records. An existing table's
    timestamp-based or custom generator that the options leave incomplete (its timestamp type, its fields'
    types) is returned ``incomplete``: it makes record keys (a lookup by key needs no more) and refuses writes."""
    kind = _kind(get, existing)
    keygen = KeyGenerator(record_keys, partitions, hive_style, url_encode)
    try:
        return _resolve(get, options, existing, kind, keygen, types)
    except KeyGeneratorConfigError as error:
        if existing is None or not _leaves_out_the_typing(get, kind):
            raise
        stamped = keygen.partition_fields if kind == "TIMESTAMP" else ()
        return replace(keygen, timestamp_fields=stamped, custom=kind == "CUSTOM", incomplete=str(error)), ()


def _leaves_out_the_typing(get: Callable[[k.ConfigProperty], Any], kind: str | None) -> bool:
    """The options name neither the timestamp type nor typed partition fields of a ``kind`` key generator."""
    return kind in TYPED and get(k.TIMESTAMP_TYPE) is None and (kind != "CUSTOM" or not get(k.PARTITION_PATH))


def _resolve(get: Callable[[k.ConfigProperty], Any], options: Mapping[str, str], existing: TableConfig | None,
             kind: str | None, keygen: KeyGenerator,
             types: tuple[str | None, ...]) -> tuple[KeyGenerator, tuple[tuple[str, str], ...]]:
    record_keys, partitions = keygen.record_key_fields, keygen.partition_fields
    if kind not in TYPED:
        if any(t is not None for t in types):
            raise KeyGeneratorConfigError(
                f"Option {k.PARTITION_PATH.key} gives partition field types ({', '.join(get(k.PARTITION_PATH))}), "
                f"which only CustomKeyGenerator reads; set {k.KEYGEN_CLASS.key}=org.apache.hudi.keygen."
                f"CustomKeyGenerator or drop the ':<type>'")
        return keygen, ()
    if kind == "CUSTOM":
        if partitions and (not get(k.PARTITION_PATH) or any(t not in PARTITION_KEY_TYPES for t in types)):
            raise KeyGeneratorConfigError(
                f"CustomKeyGenerator needs every field of {k.PARTITION_PATH.key} with its type, on every write "
                f"(Hudi 0.15 records the names alone), as field:type with type one of "
                f"{', '.join(PARTITION_KEY_TYPES)}, such as region:SIMPLE,ts:TIMESTAMP; given: "
                f"{','.join(get(k.PARTITION_PATH)) or 'nothing'}")
        stamped = tuple(name for name, t in zip(partitions, types) if t == "TIMESTAMP")
        settings, persisted = _timestamp_options(get, options, None)[0], ()
    else:
        if len(record_keys) != 1 or len(partitions) != 1:
            raise KeyGeneratorConfigError(
                f"TimestampBasedKeyGenerator takes one record key field and one partition field (given: "
                f"{k.RECORD_KEY.key}={','.join(record_keys)}, {k.PARTITION_PATH.key}={','.join(partitions)}); "
                f"use CustomKeyGenerator (field:TIMESTAMP) for more")
        stamped = partitions
        stored = existing if existing is not None and keygen_type(existing.keygen_class) == "TIMESTAMP" else None
        settings, persisted = _timestamp_options(get, options, stored)
    timestamp_format = tk.TimestampPartitionFormat.create(
        settings[tk.TIMESTAMP_TYPE], settings[tk.OUTPUT_DATE_FORMAT], settings[tk.INPUT_DATE_FORMAT],
        settings[tk.INPUT_DATE_FORMAT_DELIMITER], settings[tk.INPUT_TIMEZONE], settings[tk.OUTPUT_TIMEZONE],
        settings[tk.TIMEZONE], settings[tk.SCALAR_TIME_UNIT], settings[tk.DATE_TIME_PARSER],
    ) if stamped else None
    return replace(keygen, timestamp_fields=stamped, timestamp_format=timestamp_format, custom=kind == "CUSTOM"), \
        persisted


def _kind(get: Callable[[k.ConfigProperty], Any], existing: TableConfig | None) -> str | None:
    """The ``KeyGeneratorType`` the options or the table name; None: inferred from the fields."""
    given_class = get(k.KEYGEN_CLASS)
    kind = get(k.KEYGEN_TYPE)
    if given_class:
        kind = keygen_type(given_class)
        if kind is None:
            raise KeyGeneratorConfigError(
                f"Unsupported key generator {given_class!r} for option {k.KEYGEN_CLASS.key}; valid values: "
                + ", ".join(f"org.apache.hudi.keygen.{name}" for name in _TYPE_OF_CLASS))
    stored = keygen_type(existing.keygen_class) if existing is not None and existing.keygen_class else None
    if stored not in TYPED and kind not in TYPED:
        return kind
    if kind is None:
        return stored
    if existing is not None and kind != stored:
        raise KeyGeneratorConfigError(
            f"The table was created with the key generator {existing.keygen_class or 'inferred from its fields'}; "
            f"a write cannot change it to {KEYGEN_TYPES[kind]}")
    return kind


def _timestamp_options(get: Callable[[k.ConfigProperty], Any], options: Mapping[str, str],
                       stored: TableConfig | None) -> tuple[dict[str, Any], tuple[tuple[str, str], ...]]:
    """(the timestamp-based options of the write, those of them the table records, as given). The ones the
    write leaves out are taken from the table's ``stored`` config; a value other than the table's is refused."""
    recorded = dict(stored.keygen_options) if stored is not None else {}
    raw = {name.lower(): value for name, value in options.items()}
    settings, persisted = {}, []
    for prop in k.TIMESTAMP_KEYGEN_PROPERTIES:
        value = get(prop)
        given = next((raw[n.lower()] for n in prop.names if n.lower() in raw), None)
        if stored is not None and (prop.key in tk.PERSISTED_KEYS or prop.key in recorded):  # 1.x records the type
            table_value = recorded.get(prop.key)
            table_setting = prop.default if table_value is None else prop.parse(prop.key, table_value)
            if given is not None and value != table_setting:
                raise KeyGeneratorConfigError(
                    f"Option {prop.key}={given!r}, but the table was created with "
                    f"{'no value' if table_value is None else repr(table_value)}: its partition paths cannot change")
            value, given = table_setting, table_value
        if prop.key in tk.PERSISTED_KEYS and given is not None:
            persisted.append((prop.key, given))
        settings[prop.key] = value
    return settings, tuple(persisted)
