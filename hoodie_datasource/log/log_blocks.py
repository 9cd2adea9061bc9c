"""Log block contents: data blocks (Avro or Parquet records), delete blocks and rollback commands.

* AVRO_DATA: int32 version 3, int32 count, then count x (int32 length + Avro binary datum), the
  writer schema being the block's SCHEMA header (data fields plus the ``_hoodie_*`` meta fields).
* PARQUET_DATA: the content is a whole parquet file with the records (the fast path we write).
* DELETE: int32 version 3, int32 length, Avro ``HoodieDeleteRecordList`` of (record key,
  partition path, ordering value wrapped in a union of typed wrapper records).
* COMMAND: no content; COMMAND_BLOCK_TYPE "0" = roll back the block(s) of TARGET_INSTANT_TIME.
"""

from __future__ import annotations

import io
import json
import struct
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

from hoodie_datasource.errors import CorruptFileError, UnsupportedTableError
from hoodie_datasource.log.log_format import BlockType, HeaderKey, LogBlock, encode_block
from hoodie_datasource.schema.avro_schema import avro_to_arrow_schema, to_avro_json

CONTENT_VERSION = 3
ROLLBACK_PREVIOUS_BLOCK = "0"


def _wrapper(name: str, value_type: Any) -> dict[str, Any]:
    return {"type": "record", "name": name, "namespace": "org.apache.hudi.avro.model",
            "fields": [{"name": "value", "type": value_type}]}


ORDERING_WRAPPERS = [
    _wrapper("BooleanWrapper", "boolean"),
    _wrapper("IntWrapper", "int"),
    _wrapper("LongWrapper", "long"),
    _wrapper("FloatWrapper", "float"),
    _wrapper("DoubleWrapper", "double"),
    _wrapper("BytesWrapper", "bytes"),
    _wrapper("StringWrapper", "string"),
    _wrapper("DateWrapper", {"type": "int", "logicalType": "date"}),
    _wrapper("DecimalWrapper", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15}),
    _wrapper("TimeMicrosWrapper", {"type": "long", "logicalType": "time-micros"}),
    _wrapper("TimestampMicrosWrapper", {"type": "long", "logicalType": "timestamp-micros"}),
]
DELETE_RECORD_LIST = fastavro.parse_schema({
    "type": "record", "name": "HoodieDeleteRecordList", "namespace": "org.apache.hudi.avro.model",
    "fields": [{"name": "deleteRecordList", "type": {"type": "array", "items": {
        "type": "record", "name": "HoodieDeleteRecord", "fields": [
            {"name": "recordKey", "type": ["null", "string"], "default": None},
            {"name": "partitionPath", "type": ["null", "string"], "default": None},
            {"name": "orderingVal", "type": ["null", *ORDERING_WRAPPERS], "default": None},
        ]}}}],
})


def _schema_of(block: LogBlock) -> dict[str, Any]:
    raw = block.header.get(HeaderKey.SCHEMA)
    if not raw:
        raise CorruptFileError(f"Data block at offset {block.offset} has no SCHEMA header")
    return json.loads(raw)


def decode_data_block(block: LogBlock) -> pa.Table:
    if block.block_type == BlockType.PARQUET_DATA:
        return pq.read_table(io.BytesIO(block.content))
    if block.block_type != BlockType.AVRO_DATA:
        raise UnsupportedTableError(f"{block.block_type.name} blocks are not data blocks this reader supports")
    writer_schema = _schema_of(block)
    parsed = fastavro.parse_schema(writer_schema)
    content = block.content
    version, count = struct.unpack_from(">ii", content, 0)
    if version not in (2, CONTENT_VERSION):
        raise UnsupportedTableError(f"Avro data block content version {version} is not supported")
    pos = 8
    records = []
    stream = io.BytesIO(content)
    for _ in range(count):
        (length,) = struct.unpack_from(">i", content, pos)
        stream.seek(pos + 4)
        records.append(fastavro.schemaless_reader(stream, parsed, None))
        pos += 4 + length
    schema = avro_to_arrow_schema(writer_schema)
    return pa.Table.from_pylist(records, schema=schema)


def encode_avro_data_block(table: pa.Table, instant_time: str, avro_schema: dict) -> bytes:
    parsed = fastavro.parse_schema(avro_schema)
    parts = [struct.pack(">ii", CONTENT_VERSION, table.num_rows)]
    for record in table.to_pylist():
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, parsed, record)
        datum = buffer.getvalue()
        parts.append(struct.pack(">i", len(datum)))
        parts.append(datum)
    header = {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.SCHEMA: to_avro_json(avro_schema)}
    return encode_block(BlockType.AVRO_DATA, header, b"".join(parts))


def encode_parquet_data_block(table: pa.Table, instant_time: str, avro_schema: dict,
                              compression: str = "snappy") -> bytes:
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression=compression)
    header = {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.SCHEMA: to_avro_json(avro_schema)}
    return encode_block(BlockType.PARQUET_DATA, header, buffer.getvalue())


def decode_delete_block(block: LogBlock) -> pa.Table:
    content = block.content
    version, length = struct.unpack_from(">ii", content, 0)
    if version != CONTENT_VERSION:
        raise UnsupportedTableError(f"Delete block content version {version} (Kryo) is not supported")
    record = fastavro.schemaless_reader(io.BytesIO(content[8:8 + length]), DELETE_RECORD_LIST, None)
    entries = record["deleteRecordList"]
    ordering = [None if e.get("orderingVal") is None else str(e["orderingVal"].get("value")) for e in entries]
    return pa.table({
        "_hoodie_record_key": pa.array([e.get("recordKey") for e in entries], pa.string()),
        "_hoodie_partition_path": pa.array([e.get("partitionPath") for e in entries], pa.string()),
        "ordering_value": pa.array(ordering, pa.string()),
    })


def encode_delete_block(keys: pa.Array, partitions: pa.Array, instant_time: str,
                        ordering_values: pa.Array | None = None, avro_schema: dict | None = None) -> bytes:
    """Deleted keys; without ordering values each gets IntWrapper{0} as Spark SQL DELETE writes.
    Like Hudi, the table schema goes in the header (SCHEMA, then INSTANT_TIME) when given."""
    values = ordering_values.to_pylist() if ordering_values is not None else [None] * len(keys)
    entries = []
    for key, partition, value in zip(keys.to_pylist(), partitions.to_pylist(), values):
        if value is None:
            wrapped = ("org.apache.hudi.avro.model.IntWrapper", {"value": 0})
        elif isinstance(value, bool):
            wrapped = ("org.apache.hudi.avro.model.BooleanWrapper", {"value": value})
        elif isinstance(value, int):
            wrapped = ("org.apache.hudi.avro.model.LongWrapper", {"value": value})
        elif isinstance(value, float):
            wrapped = ("org.apache.hudi.avro.model.DoubleWrapper", {"value": value})
        else:
            wrapped = ("org.apache.hudi.avro.model.StringWrapper", {"value": str(value)})
        entries.append({"recordKey": key, "partitionPath": partition, "orderingVal": wrapped})
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, DELETE_RECORD_LIST, {"deleteRecordList": entries})
    datum = buffer.getvalue()
    content = struct.pack(">ii", CONTENT_VERSION, len(datum)) + datum
    header = {HeaderKey.SCHEMA: to_avro_json(avro_schema)} if avro_schema is not None else {}
    header[HeaderKey.INSTANT_TIME] = instant_time
    return encode_block(BlockType.DELETE, header, content)


def encode_rollback_command_block(instant_time: str, target_instant_time: str) -> bytes:
    header = {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.COMMAND_BLOCK_TYPE: ROLLBACK_PREVIOUS_BLOCK,
              HeaderKey.TARGET_INSTANT_TIME: target_instant_time}
    return encode_block(BlockType.COMMAND, header, b"")
