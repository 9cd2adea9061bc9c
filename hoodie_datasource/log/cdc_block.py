"""CDC_DATA log blocks: the change records Hudi writes beside a rewritten base file when
``hoodie.table.cdc.enabled`` is on.

A CDC log file is an ordinary log file named ``.<fileId>_<instant>.log.<version>_<token>.cdc``
(``HoodieCDCUtils.CDC_LOGFILE_SUFFIX``; ``<instant>`` is the writing commit's, the base instant of the
slice it belongs to) holding CDC_DATA blocks (type 6, ``HoodieCDCDataBlock``: the AVRO_DATA content
encoding, header INSTANT_TIME + SCHEMA). The record schema depends on the supplemental logging mode
(``HoodieCDCUtils.schemaBySupplementalLoggingMode``):

* ``OP_KEY_ONLY``: record ``Record`` {op, record_key}, both ``["string", "null"]``;
* ``DATA_BEFORE``: record ``CDC`` {op, record_key, before};
* ``DATA_BEFORE_AFTER``: record ``CDC`` {op, ts_ms, before, after};

where op, record_key and ts_ms are ``["null", "string"]`` and the images ``["null", <table record>]``,
the table's data schema without meta fields (``HoodieCDCLogger`` projects the rows onto it). The
second image names the record instead of defining it again, as Avro's schema writer does.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pyarrow as pa

from hoodie_datasource.log.avro_codec import decode_avro_records, encode_avro_records
from hoodie_datasource.log.log_format import BlockType, HeaderKey, LogBlock, encode_block
from hoodie_datasource.schema.avro_schema import to_avro_json

OP, TS_MS, BEFORE, AFTER, RECORD_KEY = "op", "ts_ms", "before", "after", "record_key"
INSERT, UPDATE, DELETE = "i", "u", "d"  # HoodieCDCOperation
OP_KEY_ONLY, DATA_BEFORE, DATA_BEFORE_AFTER = "OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER"

# HoodieCDCUtils.CDC_SCHEMA_OP_AND_RECORDKEY_STRING, verbatim
OP_KEY_SCHEMA = ('{"type":"record","name":"Record","fields":[{"name":"op","type":["string","null"]},'
                 '{"name":"record_key","type":["string","null"]}]}')


def cdc_schema(mode: str, data_schema: dict[str, Any]) -> dict[str, Any]:
    """The CDC record schema of ``mode`` for a table whose data (no meta fields) Avro schema is ``data_schema``."""
    if mode == OP_KEY_ONLY:
        return json.loads(OP_KEY_SCHEMA)
    name = data_schema["name"]
    namespace = data_schema.get("namespace")
    full_name = f"{namespace}.{name}" if namespace else name

    def nullable(field: str, typ: Any) -> dict[str, Any]:
        return {"name": field, "type": ["null", typ], "doc": "", "default": None}

    if mode == DATA_BEFORE_AFTER:
        fields = [nullable(OP, "string"), nullable(TS_MS, "string"), nullable(BEFORE, data_schema),
                  nullable(AFTER, full_name)]
    else:
        fields = [nullable(OP, "string"), nullable(RECORD_KEY, "string"), nullable(BEFORE, data_schema)]
    record: dict[str, Any] = {"type": "record", "name": "CDC"}
    if namespace:
        record["namespace"] = namespace
    record["fields"] = fields
    return record


def _inline_references(avro: dict[str, Any]) -> dict[str, Any]:
    """``avro`` with every reference to a named record replaced by its definition (the form the
    record codec reads; never written to a header, where Avro forbids defining a name twice)."""
    defined: dict[str, Any] = {}

    def walk(node: Any, namespace: str | None) -> Any:
        if isinstance(node, list):
            return [walk(n, namespace) for n in node]
        if isinstance(node, str):
            for candidate in (node, f"{namespace}.{node}" if namespace else node):
                if candidate in defined:
                    return copy.deepcopy(defined[candidate])
            return node
        if not isinstance(node, dict):
            return node
        if node.get("type") == "record":
            ns = node.get("namespace", namespace)
            out = dict(node, fields=[dict(f, type=walk(f["type"], ns)) for f in node.get("fields", [])])
            defined[f"{ns}.{node['name']}" if ns else node["name"]] = out
            return out
        if isinstance(node.get("type"), (list, dict)):
            return dict(node, type=walk(node["type"], namespace))
        return node

    return walk(copy.deepcopy(avro), None)


def encode_cdc_block(records: pa.Table, instant_time: str, schema: dict[str, Any]) -> bytes:
    """A complete CDC_DATA block of ``records`` (columns named as the CDC schema's fields; images
    as struct columns of the data columns)."""
    header = {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.SCHEMA: to_avro_json(schema)}
    return encode_block(BlockType.CDC_DATA, header, encode_avro_records(records, _inline_references(schema)))


def decode_cdc_block(block: LogBlock) -> pa.Table:
    """The CDC records of a CDC_DATA block, with its header schema."""
    return decode_avro_records(block.content, _inline_references(json.loads(block.schema)), block.where)
