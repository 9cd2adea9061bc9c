"""HFILE_DATA log blocks (block type 4): the metadata table's log records, a whole HFile in each block.

Why a module of its own: an HFILE_DATA block is framed like any block, header INSTANT_TIME and SCHEMA (the
records' Avro schema), but its content is an HFile (J: ``HoodieHFileDataBlock``, whose records Hudi 0.15 writes with
``HFileUtils.serializeRecordsToLogBlock``): cells of key -> one Avro datum, keys ascending, 1 MB blocks compressed
with ``hoodie.hfile.compression.algorithm`` (GZ), the schema again as the file info entry ``schema``. A reader
opens the content as an HFile held in memory, so a lookup of a few keys decompresses only the blocks that may
hold them (``HoodieHFileDataBlock.lookupRecords``).

Hudi 0.15 files a key's records in a map of lists, so one block may hold a key more than once, the later cell
written later; the HFile reader returns them in that order. Blocks written here hold each key once: a writer
merges a key's records first.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.errors import CorruptFileError, UnsupportedTableError
from hoodie_datasource.hfile.reader import HFileReader
from hoodie_datasource.hfile.writer import HFileWriterConfig, write_hfile
from hoodie_datasource.log.log_format import BlockType, HeaderKey, LogBlock, encode_block


def encode_hfile_data_block(keys: pa.Array, values: pa.Array, instant_time: str, schema: str,
                            config: HFileWriterConfig | None = None) -> bytes:
    """A complete HFILE_DATA block of the cells ``keys[i] -> values[i]`` (each key once, in any order; the
    values Avro datums of ``schema``, the JSON text that goes into the header and the HFile's file info), cut and
    compressed as ``config`` says (Hudi's defaults: 1 MB blocks, GZ)."""
    order = pc.sort_indices(keys)
    content = write_hfile(keys.take(order), values.take(order), config or HFileWriterConfig(), avro_schema=schema)
    header = {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.SCHEMA: schema}
    return encode_block(BlockType.HFILE_DATA, header, content)


def open_hfile_data_block(block: LogBlock) -> HFileReader:
    """The HFile an HFILE_DATA block holds, opened in memory: ``scan()``, ``lookup(keys)``, ``scan_prefixes``."""
    if block.block_type != BlockType.HFILE_DATA:
        raise UnsupportedTableError(f"{block.block_type.name} block in {block.where} is not an HFILE_DATA block")
    if not block.schema:
        raise CorruptFileError(f"HFILE_DATA block in {block.where} has no SCHEMA header")
    return HFileReader.of_bytes(block.content, f"HFILE_DATA block in {block.where}")
