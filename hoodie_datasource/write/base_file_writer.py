"""Writing a parquet base file with Hudi's footer: bloom filter and min/max record key.

The file is encoded in memory and stored whole through the table's ``Storage`` (one PUT on an object
store), so no reader ever sees a partial base file.
"""

from __future__ import annotations

import base64
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hoodie_datasource.config.write_config import IndexConfig
from hoodie_datasource.index.bloom_filter import (
    FOOTER_BLOOM_KEY,
    FOOTER_MAX_KEY,
    FOOTER_MIN_KEY,
    FOOTER_TYPE_KEY,
    BloomFilter,
    new_bloom_filter,
)
from hoodie_datasource.storage.parquet import arrow_codec, statistics_columns
from hoodie_datasource.storage.storage import Storage


def empty_filter_for(index: IndexConfig) -> BloomFilter | None:
    """The empty bloom filter a new base file of ``index`` starts with; None when files carry none."""
    if not index.writes_bloom_filter:
        return None
    return new_bloom_filter(index.bloom_filter_type, index.bloom_num_entries, index.bloom_fpp, index.bloom_max_entries)


def new_filter_for(index: IndexConfig, keys: pa.Array | pa.ChunkedArray) -> BloomFilter | None:
    """The bloom filter of a new base file holding ``keys``; None when files carry none."""
    bloom = empty_filter_for(index)
    if bloom is not None:
        bloom.add_keys(keys)
    return bloom


def footer_metadata(keys: pa.Array | pa.ChunkedArray, bloom: BloomFilter | None) -> dict[str, str]:
    """Footer entries for a file holding ``keys``, whose filter ``bloom`` (if any) contains (at least) them."""
    bounds = pc.min_max(keys) if len(keys) else None
    return footer_entries(bloom, bounds["min"].as_py() if bounds else None, bounds["max"].as_py() if bounds else None)


def footer_entries(bloom: BloomFilter | None, min_key: str | None, max_key: str | None) -> dict[str, str]:
    """Hudi's footer entries: the serialized bloom filter and its type code (unless the file carries
    none), the min and max record key."""
    meta = {}
    if bloom is not None:
        meta[FOOTER_BLOOM_KEY] = bloom.serialize()
        if bloom.type_code != "SIMPLE":
            meta[FOOTER_TYPE_KEY] = bloom.type_code
    if min_key is not None:
        meta[FOOTER_MIN_KEY] = min_key
        meta[FOOTER_MAX_KEY] = max_key
    return meta


ROW_GROUP_ROWS = 1 << 20
UNIQUE_META_COLUMNS = ("_hoodie_commit_seqno", "_hoodie_record_key")
# one value per file (partition path, file name) or per commit: always dictionary encoded, never sampled
REPEATING_META_COLUMNS = ("_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_file_name")
UNIQUE_SAMPLE = 2048
ARROW_SCHEMA_KEY = "ARROW:schema"


def with_dictionaries(schema: pa.Schema, names: set[str]) -> pa.Schema:
    """``schema`` with its string columns ``names`` as dictionary arrays: the encoder writes those as they
    are, where a string column's values are all hashed into its dictionary (1-3 ms per column of an
    83k-row file). The file is the same but for the data pages' bytes, when the encoder is told the
    table's schema (``stored_schema``)."""
    return pa.schema([f.with_type(pa.dictionary(pa.int32(), f.type)) if f.name in names and f.type == pa.string()
                      else f for f in schema])


def _looks_unique(column: pa.ChunkedArray) -> bool:
    """Are the sampled rows of ``column`` (``_sampled``) all distinct? Then a dictionary cannot pay
    (measurements, coordinates, ids): building one only costs time (2 ms of a 25 ms write per
    random-valued column at 33k rows) and bytes. Repeating values keep dictionary encoding."""
    if len(column) < 2 or pa.types.is_boolean(column.type) or pa.types.is_nested(column.type) \
            or pa.types.is_dictionary(column.type):  # a dictionary the data came in
        return False
    return pc.count_distinct(column, mode="all").as_py() >= len(column)


def _sampled(table: pa.Table) -> pa.Table:
    """``UNIQUE_SAMPLE`` rows spread evenly over ``table`` (all of them when it has fewer), taken once for
    every column."""
    n = table.num_rows
    return table if n <= UNIQUE_SAMPLE else table.take(pa.array(np.linspace(0, n - 1, UNIQUE_SAMPLE).astype(np.int64)))


# per process: the dictionary encoded columns of files of a schema, as a full sample of the first such file
# decided them (sampling costs ~2.5 ms of a 70 ms merge of an 83k-row file; a write task merges many)
_DICTIONARY_COLUMNS: dict[tuple[pa.Schema, tuple[str, ...]], tuple[str, ...]] = {}
MAX_REMEMBERED_SCHEMAS = 64


def _dictionary_columns(schema: pa.Schema, sample: pa.Table, unique_columns: tuple[str, ...]) -> tuple[str, ...]:
    """The columns of ``schema`` to dictionary encode: all but the unique ones (``UNIQUE_META_COLUMNS``,
    ``unique_columns``) and those whose sampled values in ``sample`` are all distinct (``_looks_unique``); the
    meta columns holding one value per file or commit always. A decision from a full sample (at least
    ``UNIQUE_SAMPLE`` rows) is remembered for the schema, and later files of it are not sampled."""
    key = (schema, unique_columns)
    remembered = _DICTIONARY_COLUMNS.get(key)
    if remembered is not None:
        return remembered
    unique = set(UNIQUE_META_COLUMNS) | set(unique_columns)
    names = schema.names
    sampled = _sampled(sample.select([n for n in names if n not in unique and n not in REPEATING_META_COLUMNS]))
    chosen = tuple(n for n in names if n not in unique and (
        n in REPEATING_META_COLUMNS or not _looks_unique(sampled.column(n))))
    if sample.num_rows >= UNIQUE_SAMPLE:
        if len(_DICTIONARY_COLUMNS) >= MAX_REMEMBERED_SCHEMAS:
            _DICTIONARY_COLUMNS.clear()
        _DICTIONARY_COLUMNS[key] = chosen
    return chosen


class WrittenBaseFile(NamedTuple):
    size: int
    metadata: pq.FileMetaData | None  # its footer, when asked for


class BaseFileEncoder:
    """A parquet base file encoded in memory, row group by row group, then stored whole through the
    table's ``Storage`` (one PUT on an object store) by ``finish``.

    The footer entries go into the file's key-value metadata only: the Arrow schema pyarrow stores
    beside them (``ARROW:schema``, for exact types on read) is written without metadata, or it would
    carry a second, base64-encoded copy of the bloom filter (a third of a 3 MB file, and parsed
    again by every reader of the footer).

    Columns known to hold unique values (sequence numbers, record keys), and columns whose sampled
    values in ``sample`` (the file's first rows) are all distinct, skip dictionary encoding, which
    cannot pay off for them (writes are faster and files smaller); the sequence number also skips
    column statistics, which no reader uses. The meta columns holding one value per file or commit
    are dictionary encoded without sampling them. A floating-point column gets statistics only when
    ``sample`` is ``complete`` (every row the file will hold) and holds no NaN in it, since readers
    would trust pyarrow's NaN-less min/max (``storage.parquet.statistics_columns``).

    String columns may come as dictionary arrays (``with_dictionaries``), kept dictionary encoded; the
    Arrow schema stored beside the footer is then ``stored_schema``, the table's, which says strings."""

    def __init__(self, schema: pa.Schema, sample: pa.Table, compression: str, unique_columns: tuple[str, ...] = (),
                 stored_schema: pa.Schema | None = None, complete: bool = False):
        options = {
            "use_dictionary": list(_dictionary_columns(schema, sample, tuple(unique_columns))),
            "write_statistics": statistics_columns(schema, sample if complete else None, ("_hoodie_commit_seqno",)),
        }
        self._schema = schema.remove_metadata()
        # what pyarrow would store for the table's schema: its IPC form in Base64
        stored = (stored_schema or schema).remove_metadata()
        self._arrow_schema = base64.b64encode(stored.serialize()).decode("ascii")
        self._sink = pa.BufferOutputStream()
        self._writer = pq.ParquetWriter(self._sink, self._schema, compression=arrow_codec(compression), store_schema=False,
                                        **options)

    def write(self, rows: pa.Table) -> None:
        """Append ``rows`` as row groups of at most ``ROW_GROUP_ROWS`` rows."""
        if rows.num_rows:
            self._writer.write_table(rows.replace_schema_metadata(None), row_group_size=ROW_GROUP_ROWS)

    @property
    def size(self) -> int:
        """Bytes encoded so far (complete row groups)."""
        return self._sink.tell()

    def finish(self, storage: Storage, rel: str, footer: dict[str, str], read_footer: bool = False) -> WrittenBaseFile:
        """Close the file with ``footer`` in its key-value metadata, store it at ``rel`` (which must not
        exist); its size in bytes and (``read_footer``) its footer, parsed from the bytes in memory."""
        self._writer.add_key_value_metadata({ARROW_SCHEMA_KEY: self._arrow_schema, **footer})
        self._writer.close()
        data = self._sink.getvalue()
        storage.write(rel, data)
        return WrittenBaseFile(data.size, pq.read_metadata(pa.BufferReader(data)) if read_footer else None)


def write_base_file(storage: Storage, rel: str, table: pa.Table, footer: dict[str, str], compression: str,
                    unique_columns: tuple[str, ...] = (), first_new_row: int = 0,
                    stored_schema: pa.Schema | None = None) -> int:
    """``write_base_file_with_footer``'s size in bytes."""
    return write_base_file_with_footer(storage, rel, table, footer, compression, unique_columns, first_new_row,
                                       stored_schema).size


def write_base_file_with_footer(storage: Storage, rel: str, table: pa.Table, footer: dict[str, str],
                                compression: str, unique_columns: tuple[str, ...] = (), first_new_row: int = 0,
                                stored_schema: pa.Schema | None = None, read_footer: bool = False
                                ) -> WrittenBaseFile:
    """Write ``table`` to ``rel`` (which must not exist): its size in bytes and (``read_footer``) its footer
    (``BaseFileEncoder``; ``stored_schema``: the table's schema, when ``table`` has dictionary arrays for
    some of its string columns).

    Rows from ``first_new_row`` on (the rows a merge writes in this commit) get row groups of their
    own, apart from the rows carried over, so their ``_hoodie_commit_time`` statistics let an
    incremental query skip the carried-over rows."""
    encoder = BaseFileEncoder(table.schema, table, compression, unique_columns, stored_schema, complete=True)
    encoder.write(table.slice(0, first_new_row))
    encoder.write(table.slice(first_new_row))
    return encoder.finish(storage, rel, footer, read_footer)
