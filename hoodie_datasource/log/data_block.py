"""Data log blocks: AVRO_DATA (and CDC_DATA) and PARQUET_DATA, as Arrow tables.

Why a module of its own: a data block is a header (INSTANT_TIME + the writer's SCHEMA) around
records; this module turns blocks into tables and tables into complete blocks, choosing the codec
by block type. The Avro record codec is :mod:`~hoodie_datasource.log.avro_codec`; a PARQUET_DATA
block's content is a complete parquet file (J: ``HoodieParquetDataBlock``). hudi-rs decodes every
block type in one ``file_group/log_file/content.rs``; here each block kind has its own module
(:mod:`~hoodie_datasource.log.delete_block`, :mod:`~hoodie_datasource.log.command_block`).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie_datasource.errors import CorruptFileError, UnsupportedTableError
from hoodie_datasource.log.avro_codec import conform_to_avro, decode_avro_records, encode_avro_records, schema_json
from hoodie_datasource.log.log_format import BlockType, HeaderKey, LogBlock, encode_block
from hoodie_datasource.storage.parquet import arrow_codec, statistics_columns


def _header(instant_time: str, schema_text: str) -> dict[HeaderKey, str]:
    return {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.SCHEMA: schema_text}


def decode_data_block(block: LogBlock, columns: Collection[str] | None = None) -> pa.Table:
    """The records of an AVRO_DATA (or CDC_DATA) or PARQUET_DATA block as an Arrow table. Avro
    blocks give the schema ``avro_to_arrow_schema(SCHEMA header)``; parquet blocks the file's own, only
    the ``columns`` it has when they are given (Avro records decode whole)."""
    if block.block_type == BlockType.PARQUET_DATA:
        try:
            parquet = pq.ParquetFile(pa.BufferReader(block.content))
            names = None if columns is None else [n for n in parquet.schema_arrow.names if n in columns]
            return parquet.read(columns=names, use_threads=False)
        except (pa.ArrowInvalid, OSError) as exc:
            raise CorruptFileError(f"PARQUET_DATA block in {block.where}: not a readable parquet file: {exc}") from None
    if block.block_type in (BlockType.AVRO_DATA, BlockType.CDC_DATA):
        schema = block.schema
        if not schema:
            raise CorruptFileError(f"{block.block_type.name} block in {block.where} has no SCHEMA header")
        try:
            parsed = json.loads(schema)
        except json.JSONDecodeError as exc:
            raise CorruptFileError(f"{block.block_type.name} block in {block.where}: SCHEMA header is not JSON: "
                                   f"{exc}") from None
        return decode_avro_records(block.content, parsed, block.where)
    if block.block_type == BlockType.HFILE_DATA:
        raise UnsupportedTableError(f"HFILE_DATA block in {block.where}: HFile blocks (metadata table) are not "
                                    f"supported")
    raise UnsupportedTableError(f"{block.block_type.name} block in {block.where} is not a data block")


def encode_avro_data_block(table: pa.Table, instant_time: str, avro_schema: dict[str, Any] | str) -> bytes:
    """A complete AVRO_DATA block (header INSTANT_TIME + SCHEMA). A schema given as JSON text is put
    in the header verbatim; a dict is serialised compactly."""
    _, text = schema_json(avro_schema)
    return encode_block(BlockType.AVRO_DATA, _header(instant_time, text), encode_avro_records(table, avro_schema))


def encode_parquet_data_block(table: pa.Table, instant_time: str, avro_schema: dict[str, Any] | str,
                              compression: str = "snappy") -> bytes:
    """A complete PARQUET_DATA block: the content is a parquet file of ``table`` conformed to the
    Arrow form of ``avro_schema`` (the schema Hudi readers reconcile against)."""
    _, text = schema_json(avro_schema)
    table = conform_to_avro(table, avro_schema)
    sink = pa.BufferOutputStream()
    unique = {"_hoodie_commit_seqno", "_hoodie_record_key"}
    pq.write_table(table, sink, compression=arrow_codec(compression),
                   use_dictionary=[n for n in table.column_names if n not in unique],
                   write_statistics=statistics_columns(table.schema, table))
    return encode_block(BlockType.PARQUET_DATA, _header(instant_time, text), sink.getvalue().to_pybytes())
