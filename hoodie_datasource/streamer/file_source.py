"""A directory of JSON, CSV, Parquet or Avro files that keeps receiving new ones, as a source of records
(Hudi's ``JsonDFSSource`` / ``CsvDFSSource`` / ``ParquetDFSSource`` / ``AvroDFSSource`` with the
``DFSPathSelector``), on local disk or any store the library supports (files are read through the
storage layer, not Spark's Hadoop file systems).

Selection: files whose modification time is after the checkpoint (epoch milliseconds of the newest file
read so far), oldest first, up to a byte budget (at least one file); names starting with ``.`` or ``_``
are skipped (temporary and marker files). The new checkpoint is the newest modification time read. As
with Hudi's selector, a file must appear whole (written elsewhere, then renamed or uploaded at once):
one still being written when a round lists it is read as it is then.

Parsing is columnar (pyarrow); a file that does not parse as a whole is read again line by line (JSON)
or row by row (CSV) to tell its bad records from its good ones. Records that cannot be parsed, and
records whose key fields are null, are returned apart as bad records, with the file, the raw text and
the reason.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass

import fastavro
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from hoodie_datasource.errors import CorruptFileError, HoodieConfigError
from hoodie_datasource.schema.avro_schema import avro_to_arrow_schema
from hoodie_datasource.storage.storage import FileInfo, Storage

FORMATS = ("json", "csv", "parquet", "avro")
BAD_RECORD_SCHEMA = pa.schema([("source", pa.string()), ("record", pa.string()), ("reason", pa.string())])


@dataclass(frozen=True)
class Selection:
    files: tuple[FileInfo, ...]
    checkpoint: str | None  # the newest modification time read (ms), None when nothing was selected


def select_new_files(storage: Storage, checkpoint: str | None, max_bytes: int) -> Selection:
    """The files modified after ``checkpoint``, oldest first, within ``max_bytes`` (at least one)."""
    after = int(checkpoint) if checkpoint else -1
    candidates = sorted((f for f in storage.list_tree("") if _visible(f.path) and f.modified_ns // 1_000_000 > after),
                        key=lambda f: (f.modified_ns, f.path))
    chosen: list[FileInfo] = []
    total = 0
    for f in candidates:
        if chosen and total + f.size > max_bytes:
            break
        chosen.append(f)
        total += f.size
    if not chosen:
        return Selection((), None)
    # files sharing the last chosen millisecond go together: the checkpoint cannot tell them apart
    last_ms = chosen[-1].modified_ns // 1_000_000
    chosen += [f for f in candidates[len(chosen):] if f.modified_ns // 1_000_000 == last_ms]
    return Selection(tuple(chosen), str(last_ms))


def _visible(path: str) -> bool:
    return not any(part.startswith((".", "_")) for part in path.split("/"))


@dataclass(frozen=True)
class Parsed:
    good: pa.Table
    bad: pa.Table  # BAD_RECORD_SCHEMA


def parse_file(storage: Storage, path: str, fmt: str, schema: pa.Schema | None, key_fields: Sequence[str],
               csv_header: bool = True) -> Parsed:
    """The records of one file, conformed to ``schema`` when given, good apart from bad."""
    if fmt not in FORMATS:
        raise HoodieConfigError(f"Unknown source format {fmt!r}; valid values: {', '.join(FORMATS)}")
    data = storage.read(path)
    bad: list[tuple[str, str]] = []
    if fmt == "json":
        table = parse_json_lines(data, schema, bad)
    elif fmt == "csv":
        table = _csv(data, schema, bad, csv_header)
    elif fmt == "parquet":
        table = _parquet(data, path)
    else:
        table = _avro(data, path)
    table, rejected = keyed_records(table, schema, key_fields, storage.uri_of(path))
    bad += rejected
    source = storage.uri_of(path)
    bad_table = pa.table({"source": [source] * len(bad), "record": [r for r, _ in bad], "reason": [m for _, m in bad]},
                         schema=BAD_RECORD_SCHEMA)
    return Parsed(table, bad_table)


def keyed_records(table: pa.Table, schema: pa.Schema | None, key_fields: Sequence[str],
                  where: str) -> tuple[pa.Table, list[tuple[str, str]]]:
    """``table`` conformed to ``schema`` (when given) without its records whose key fields are null, and those
    records as (JSON text, reason); key fields the records lack fail, naming ``where`` they came from."""
    if schema is not None:
        table = _conform(table, schema)
    missing = [f for f in key_fields if f not in table.column_names]
    if missing:
        raise HoodieConfigError(f"The record key field(s) {', '.join(missing)} are not in {where} "
                                f"(its columns: {', '.join(table.column_names)})")
    null_key = None
    for name in key_fields:
        is_null = pc.is_null(table.column(name))
        null_key = is_null if null_key is None else pc.or_(null_key, is_null)
    if null_key is None or not pc.any(null_key).as_py():
        return table, []
    reason = f"null record key ({', '.join(key_fields)})"
    rejected = [(json.dumps(r, default=str), reason) for r in table.filter(null_key).to_pylist()]
    return table.filter(pc.invert(null_key)), rejected


def parse_json_lines(data: bytes, schema: pa.Schema | None, bad: list[tuple[str, str]]) -> pa.Table:
    """Newline-delimited JSON records, columnar; when that fails, line by line, unparseable lines going to
    ``bad`` as (line, reason)."""
    options = pa_json.ParseOptions(explicit_schema=schema) if schema is not None else None
    try:
        return pa_json.read_json(io.BytesIO(data), parse_options=options)
    except pa.ArrowInvalid:
        pass
    # the slow path, for a file holding bad records only: each line on its own
    good = []
    for line in data.decode("utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            good.append(pa_json.read_json(io.BytesIO(line.encode()), parse_options=options))
        except pa.ArrowInvalid as exc:
            bad.append((line, f"unparseable JSON: {exc}"))
    if not good:
        return schema.empty_table() if schema is not None else pa.table({})
    return pa.concat_tables(good, promote_options="permissive")


def _csv(data: bytes, schema: pa.Schema | None, bad: list[tuple[str, str]], header: bool) -> pa.Table:
    def reject(row: pa_csv.InvalidRow) -> str:
        bad.append((row.text or "", f"unparseable CSV row {row.number}: expected {row.expected_columns} columns, "
                                    f"got {row.actual_columns}"))
        return "skip"

    read = pa_csv.ReadOptions(autogenerate_column_names=not header)
    convert = pa_csv.ConvertOptions(column_types=schema) if schema is not None else None
    parse = pa_csv.ParseOptions(invalid_row_handler=reject)
    return pa_csv.read_csv(io.BytesIO(data), read_options=read, parse_options=parse, convert_options=convert)


def _parquet(data: bytes, path: str) -> pa.Table:
    try:
        return pq.read_table(pa.BufferReader(data))
    except pa.ArrowInvalid as exc:
        raise CorruptFileError(f"Source file {path} is not a parquet file: {exc}") from exc


def _avro(data: bytes, path: str) -> pa.Table:
    try:
        reader = fastavro.reader(io.BytesIO(data))
        records = list(reader)  # fastavro's compiled decoder
    except Exception as exc:  # fastavro raises several unrelated types on bad input
        raise CorruptFileError(f"Source file {path} is not an Avro object container file: {exc}") from exc
    return pa.Table.from_pylist(records, schema=avro_to_arrow_schema(reader.writer_schema))


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with ``schema``'s columns, in its order and types; missing columns are null."""
    columns = []
    for field in schema:
        if field.name in table.column_names:
            columns.append(table.column(field.name).cast(field.type))
        else:
            columns.append(pa.nulls(table.num_rows, field.type))
    return pa.Table.from_arrays(columns, schema=schema)
