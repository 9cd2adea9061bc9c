"""Parquet files through a table's ``Storage``: the one place base files meet pyarrow.parquet.

Whole-file reads fetch the object once (one GET on an object store; a memory map locally) and parse
it from memory; footer reads (bloom filters, key ranges, schemas) open a random-access input, which
costs one GET of the file's tail on an object store (``size``, from a listing, saves Azure a HEAD).
(Writers encode a file into memory and store it whole with ``Storage.write``, so a reader never sees a
partial base file: ``write.base_file_writer``.)
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from hoodie_datasource.errors import CorruptFileError
from hoodie_datasource.storage.storage import Storage


@contextmanager
def parquet_errors(storage: Storage, rel: str) -> Iterator[None]:
    """pyarrow's errors about a damaged file (no magic bytes, a truncated footer or page) as a
    ``CorruptFileError`` naming it."""
    try:
        yield
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise CorruptFileError(f"Cannot read {storage.uri_of(rel)} as parquet: {str(exc).splitlines()[0]}") from None


def arrow_codec(codec: str) -> str:
    """pyarrow's name for a parquet codec named as Hudi names it (``hoodie.parquet.compression.codec``:
    parquet-mr's ``CompressionCodecName``, whose ``uncompressed`` pyarrow calls ``none``)."""
    return "none" if codec.lower() == "uncompressed" else codec


def statistics_columns(schema: pa.Schema, rows: pa.Table | None, skip: Collection[str] = ()) -> list[str]:
    """The leaf column paths (``d``, ``s.x``, ``l.list.element``: what ``pq.ParquetWriter``'s
    ``write_statistics`` takes) of a file of ``schema`` whose chunks get statistics: all but those under the
    top-level columns ``skip``, and but the floating-point ones holding a NaN in ``rows`` (every row the file
    will hold; None when they are not known yet: then no floating-point column gets statistics).

    pyarrow's writer leaves NaN out of a chunk's min/max, and readers trust them: Spark's row-group filter
    (parquet-mr's ``StatisticsFilter``) and pyarrow's scanner skip the chunk for ``d = NaN`` or ``d > max``,
    though NaN is in it (and Spark orders NaN above every double). parquet-mr, which Spark and Apache Hudi
    write with (``HoodieBaseParquetWriter``), counts NaN in (``DoubleStatistics``, ``Double.compare``: it
    becomes the max), and its readers drop min/max that are NaN (``Statistics.DoubleBuilder``): either way no
    reader has bounds for such a chunk. One NaN test per floating-point leaf of ``rows``, none per row."""
    paths: list[str] = []
    for field in schema:
        if field.name not in skip:
            column = rows.column(field.name) if rows is not None else None
            paths.extend(_statistics_leaves(field.name, field.type, column))
    return paths


def _statistics_leaves(path: str, typ: pa.DataType, values: pa.ChunkedArray | pa.Array | None) -> list[str]:
    if pa.types.is_floating(typ):
        nan = values is None or pc.any(pc.is_nan(values)).as_py()
        return [] if nan else [path]
    if pa.types.is_struct(typ):
        return [leaf for i, child in enumerate(typ) for leaf in _statistics_leaves(
            f"{path}.{child.name}", child.type, None if values is None else pc.struct_field(values, [i]))]
    if pa.types.is_map(typ):  # stored as a list of key_value entries
        entries = pa.struct([typ.key_field, typ.item_field])
        return _statistics_leaves(f"{path}.key_value", entries,
                                  None if values is None else pc.list_flatten(values.cast(pa.list_(entries))))
    if pa.types.is_list(typ) or pa.types.is_large_list(typ) or pa.types.is_fixed_size_list(typ):
        return _statistics_leaves(f"{path}.list.element", typ.value_type,
                                  None if values is None else pc.list_flatten(values))
    return [path]


def read_parquet(storage: Storage, rel: str, columns: Sequence[str] | None = None, filters=None,
                 use_threads: bool = True, content: pa.Buffer | None = None,
                 skip: Sequence[str] = (), dictionary: Sequence[str] = ()) -> pa.Table:
    """``rel`` as a table; ``content``: its bytes, when the caller already has them; the columns ``skip``
    names are not decoded, those ``dictionary`` names that every row group stores dictionary encoded are
    read as dictionary arrays (a read without ``filters``).

    Without ``filters`` the file is decoded by ``ParquetFile`` directly: ``read_table`` would go through
    the dataset machinery (a discovery, a scanner, batches concatenated again): 32 ms instead of 20 for a
    whole 7 MB base file."""
    source = content if content is not None else storage.read_buffer(rel)
    with parquet_errors(storage, rel):
        if filters is not None:
            return pq.read_table(pa.BufferReader(source), columns=columns, filters=filters, use_threads=use_threads)
        file = pq.ParquetFile(pa.BufferReader(source))
        dictionary = _dictionary_encoded(file.metadata, dictionary)
        if dictionary:  # the footer is parsed once
            file = pq.ParquetFile(pa.BufferReader(source), metadata=file.metadata, read_dictionary=dictionary)
        if skip:
            columns = [n for n in (columns or file.schema_arrow.names) if n not in skip]
        return file.read(columns=columns, use_threads=use_threads)


def _dictionary_encoded(metadata: pq.FileMetaData, names: Sequence[str]) -> list[str]:
    """Those of the top-level columns ``names`` that every row group of the file stores with a dictionary page."""
    schema = metadata.schema
    positions = {schema.column(i).path: i for i in range(len(schema))}
    return [n for n in names if n in positions and all(
        metadata.row_group(g).column(positions[n]).has_dictionary_page for g in range(metadata.num_row_groups))]


def parquet_fragment(storage: Storage, rel: str) -> ds.ParquetFileFragment:
    """``rel`` as a dataset fragment, for scans that project and filter (read under ``parquet_errors``)."""
    with parquet_errors(storage, rel):
        fragment = ds.ParquetFileFormat().make_fragment(pa.BufferReader(storage.read_buffer(rel)))
        fragment.physical_schema  # noqa: B018 - parses the footer here, where its errors are mapped
        return fragment


def parquet_file(storage: Storage, rel: str) -> pq.ParquetFile:
    """``rel`` opened from memory, for reads of whole columns (read under ``parquet_errors``)."""
    with parquet_errors(storage, rel):
        return pq.ParquetFile(pa.BufferReader(storage.read_buffer(rel)))


def read_parquet_metadata(storage: Storage, rel: str, size: int | None = None,
                          content: pa.Buffer | None = None) -> pq.FileMetaData:
    with parquet_errors(storage, rel):
        if content is not None:
            return pq.read_metadata(pa.BufferReader(content))
        with storage.open_input(rel, size) as source:
            return pq.read_metadata(source)


def read_parquet_schema(storage: Storage, rel: str, size: int | None = None) -> pa.Schema:
    with parquet_errors(storage, rel), storage.open_input(rel, size) as source:
        return pq.read_schema(source)
