"""The Avro binary encoding of the records in AVRO_DATA (and CDC_DATA) log blocks.

Why a module of its own: this is a codec for Avro *records* against an Avro schema (schema -> a
decode/encode plan, then columnar decoding and encoding), independent of how a log file frames
blocks (:mod:`~hoodie_datasource.log.log_format`) and of which block header carries the schema
(:mod:`~hoodie_datasource.log.data_block`). It is the counterpart of hudi-rs'
``file_group/log_file/avro.rs`` (``AvroBlockDecoder``).

AVRO_DATA content is ``int32 3`` (content version), ``int32 count``, then count x (``int32 length``
+ one Avro binary datum) written with the block's SCHEMA header, which holds the data fields and,
unless the table turned them off, the ``_hoodie_*`` meta fields first (J: ``HoodieAvroDataBlock``).

Avro records are decoded and encoded a column at a time with numpy rather than one record at a
time: the length prefix in front of each datum tells where every record starts, so field ``k`` of
all records can be read together (``pos`` is an array of per-record cursors). Arrays and maps,
whose length is only known while reading them, are handed to fastavro one value at a time; every
other Avro type (primitives, records, nullable unions, enums, fixed, and the decimal, date, time
and timestamp logical types) is vectorised. Each record must end exactly where its length prefix
says, so damage inside a block is detected rather than decoded into wrong values.
"""

from __future__ import annotations

import functools
import io
import json
import struct
import sys
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa

from hoodie_datasource.errors import CorruptFileError, SchemaMismatchError, UnsupportedTableError
from hoodie_datasource.schema.avro_schema import avro_to_arrow_schema, to_avro_json

AVRO_CONTENT_VERSION = 3  # HoodieAvroDataBlock: version, record count, length-prefixed records

_LITTLE = sys.byteorder == "little"
_TEN = np.arange(10, dtype=np.int64)
_SEVENS = np.arange(10, dtype=np.uint64) * np.uint64(7)
_CHUNK_BYTES = 1 << 23  # bound on the index arrays built by the gather/scatter helpers
# from this many bytes a value on average, the gather/scatter helpers copy value by value (a slice each) rather
# than index every byte: the metadata table's bloom filters are hundreds of KB each
_VALUE_COPY_BYTES = 4096


# ==================================================================================================
# Avro schema -> plan


class _Node:
    """One Avro type together with the Arrow type it decodes to (from ``avro_to_arrow_schema``)."""

    __slots__ = ("kind", "logical", "arrow", "avro", "size", "scale", "symbols", "fields", "value",
                 "value_branch", "null_branch", "_fastavro")

    def __init__(self, kind: str, arrow: pa.DataType, avro: Any):
        self.kind = kind
        self.arrow = arrow
        self.avro = avro
        self.logical: str | None = None
        self.size = 0
        self.scale = 0
        self.symbols: list[str] = []
        self.fields: list[tuple[str, _Node]] = []
        self.value: _Node | None = None
        self.value_branch = 0
        self.null_branch = 0
        self._fastavro: Any = None

    def fastavro_schema(self) -> Any:
        """This (array or map) type as fastavro wants it: logical types other than decimal are
        dropped so values stay plain ints, which Arrow converts to dates/timestamps itself."""
        if self._fastavro is None:
            self._fastavro = fastavro.parse_schema(_strip_logical(self.avro), named_schemas={})
        return self._fastavro


_PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")


def _strip_logical(avro: Any) -> Any:
    if isinstance(avro, list):
        return [_strip_logical(b) for b in avro]
    if not isinstance(avro, dict):
        return avro
    out = {k: v for k, v in avro.items() if k != "logicalType" or v == "decimal"}
    kind = out.get("type")
    if isinstance(kind, (dict, list)):
        out["type"] = _strip_logical(kind)
    if kind == "record":
        out["fields"] = [{**f, "type": _strip_logical(f["type"])} for f in out["fields"]]
    elif kind == "array":
        out["items"] = _strip_logical(out["items"])
    elif kind == "map":
        out["values"] = _strip_logical(out["values"])
    if set(out) == {"type"} and isinstance(out["type"], str):
        return out["type"]
    return out


class _Names:
    """The named types (records, enums, fixeds) a schema defined so far, by full name: a later branch or field
    may name one instead of repeating it (``"maxValue": ["null", "BooleanWrapper", ...]``)."""

    def __init__(self) -> None:
        self.defined: dict[str, Any] = {}

    def define(self, avro: dict[str, Any], namespace: str | None) -> str | None:
        """Remember ``avro`` and return the namespace its own fields resolve names in."""
        full = self._full_name(avro, namespace)
        self.defined[full] = avro
        return full.rsplit(".", 1)[0] if "." in full else None

    def inline(self, avro: Any, namespace: str | None, seen: set[str]) -> Any:
        """``avro`` with each named type it refers to written out where it is first used (by full name after)."""
        if isinstance(avro, list):
            return [self.inline(branch, namespace, seen) for branch in avro]
        if isinstance(avro, str):
            if avro in _PRIMITIVES:
                return avro
            full, definition = self.resolve(avro, namespace, avro)
            if full in seen:
                return full
            return self.inline({**definition, "name": full}, None, seen)
        if not isinstance(avro, dict):
            return avro
        out = dict(avro)
        kind = avro.get("type")
        if kind in ("record", "error", "enum", "fixed"):
            full = self._full_name(avro, namespace)
            seen.add(full)
            out.pop("namespace", None)
            out["name"] = full
            namespace = full.rsplit(".", 1)[0] if "." in full else None
        if isinstance(kind, (dict, list)) or (isinstance(kind, str) and kind not in _PRIMITIVES
                                              and kind not in ("record", "error", "enum", "fixed", "array", "map")):
            out["type"] = self.inline(kind, namespace, seen)
        if kind in ("record", "error"):
            out["fields"] = [{**f, "type": self.inline(f["type"], namespace, seen)} for f in avro["fields"]]
        elif kind == "array":
            out["items"] = self.inline(avro["items"], namespace, seen)
        elif kind == "map":
            out["values"] = self.inline(avro["values"], namespace, seen)
        return out

    @staticmethod
    def _full_name(avro: dict[str, Any], namespace: str | None) -> str:
        name = str(avro.get("name", ""))
        own = avro.get("namespace", namespace)
        return name if "." in name or not own else f"{own}.{name}"

    def resolve(self, name: str, namespace: str | None, where: str) -> tuple[str, Any]:
        """The full name and the definition of the named type ``name`` refers to."""
        for candidate in ([name] if "." in name else [f"{namespace}.{name}" if namespace else name, name]):
            if candidate in self.defined:
                return candidate, self.defined[candidate]
        raise UnsupportedTableError(f"Field {where!r}: unknown Avro type {name!r}")


def _compile(avro: Any, arrow: pa.DataType, where: str, names: _Names, namespace: str | None = None) -> _Node:
    if isinstance(avro, list):
        branches = list(avro)
        values = [i for i, b in enumerate(branches) if b != "null"]
        nulls = [i for i, b in enumerate(branches) if b == "null"]
        if len(values) == 0:
            return _Node("null", arrow, avro)
        if len(values) > 1 and pa.types.is_union(arrow):  # planned with unions (avro_to_arrow_schema)
            node = _Node("dense_union", arrow, avro)
            node.fields = [(arrow.field(i).name, _compile(b, arrow.field(i).type, where, names, namespace))
                           for i, b in enumerate(branches)]
            return node
        if len(values) != 1 or len(nulls) > 1:
            raise UnsupportedTableError(f"Field {where!r}: Avro union {avro} is not supported (only [null, T])")
        node = _Node("union", arrow, avro)
        node.value = _compile(branches[values[0]], arrow, where, names, namespace)
        node.value_branch = values[0]
        node.null_branch = nulls[0] if nulls else -1
        return node
    if isinstance(avro, str):
        if avro not in _PRIMITIVES:
            full, definition = names.resolve(avro, namespace, where)
            return _compile({**definition, "name": full}, arrow, where, names, None)
        return _Node(avro, arrow, avro)
    kind = avro.get("type")
    if isinstance(kind, (dict, list)):
        return _compile(kind, arrow, where, names, namespace)
    logical = avro.get("logicalType")
    if kind in _PRIMITIVES:
        node = _Node(kind, arrow, avro)
    elif kind == "fixed":
        names.define(avro, namespace)
        node = _Node("fixed", arrow, avro)
        node.size = int(avro["size"])
    elif kind == "enum":
        names.define(avro, namespace)
        node = _Node("enum", arrow, avro)
        node.symbols = list(avro["symbols"])
    elif kind == "record":
        own = names.define(avro, namespace)
        node = _Node("record", arrow, avro)
        node.fields = [(f["name"], _compile(f["type"], arrow.field(i).type, f"{where}.{f['name']}", names, own))
                       for i, f in enumerate(avro["fields"])]
    elif kind in ("array", "map"):
        # fastavro reads these a value at a time and knows no type the rest of the schema named
        node = _Node(kind, arrow, names.inline(avro, namespace, set()))
    else:
        raise UnsupportedTableError(f"Field {where!r}: Avro type {avro!r} is not supported")
    if logical == "decimal" and kind in ("fixed", "bytes"):
        node.logical = "decimal"
        node.scale = int(avro.get("scale", 0))
    return node


def _plan(avro_schema: dict[str, Any], unions: bool = False) -> tuple[_Node, pa.Schema]:
    if avro_schema.get("type") != "record":
        raise UnsupportedTableError(f"Data block schema must be an Avro record, not {avro_schema.get('type')!r}")
    try:
        arrow = avro_to_arrow_schema(avro_schema, unions=unions)
    except (ValueError, KeyError, TypeError) as exc:  # e.g. a decimal wider than 38 digits
        raise UnsupportedTableError(f"Avro schema {avro_schema.get('name')!r} has no Arrow form: {exc}") from None
    return _compile(avro_schema, pa.struct(list(arrow)), "", _Names()), arrow


def schema_json(avro_schema: dict[str, Any] | str) -> tuple[dict[str, Any], str]:
    """(parsed schema, header text): a schema given as text goes into the header verbatim."""
    if isinstance(avro_schema, str):
        return json.loads(avro_schema), avro_schema
    return avro_schema, to_avro_json(avro_schema)


# ==================================================================================================
# byte-range helpers


def gather_ranges(src: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``src[starts[i]:starts[i] + lengths[i]]`` over i."""
    total = int(lengths.sum())
    out = np.empty(total, np.uint8)
    if total == 0:
        return out
    ends = np.cumsum(lengths)
    row, rows = 0, len(lengths)
    while row < rows:
        base = int(ends[row - 1]) if row else 0
        stop = max(int(np.searchsorted(ends, base + _CHUNK_BYTES, side="right")), row + 1)
        n = int(ends[stop - 1]) - base
        if stop == row + 1:
            out[base:base + n] = src[int(starts[row]):int(starts[row]) + n]
        elif n >= _VALUE_COPY_BYTES * (stop - row):
            for start, at, length in zip(starts[row:stop].tolist(), (ends[row:stop] - lengths[row:stop]).tolist(),
                                         lengths[row:stop].tolist()):
                out[at:at + length] = src[start:start + length]
        else:
            lens = lengths[row:stop]
            index = np.repeat(starts[row:stop] - (ends[row:stop] - lens - base), lens)
            index += np.arange(n)
            out[base:base + n] = src[index]
        row = stop
    return out


def scatter_ranges(dst: np.ndarray, starts: np.ndarray, data: np.ndarray, lengths: np.ndarray) -> None:
    """Inverse of :func:`gather_ranges`: row i's ``lengths[i]`` bytes of ``data`` go to ``starts[i]``."""
    rows = len(lengths)
    if data.size == 0:
        return
    width = int(lengths[0])
    if width < _VALUE_COPY_BYTES and data.size == rows * width and (lengths == width).all():
        dst[starts[:, None] + np.arange(width)] = data.reshape(rows, width)
        return
    ends = np.cumsum(lengths)
    row = 0
    while row < rows:
        base = int(ends[row - 1]) if row else 0
        stop = max(int(np.searchsorted(ends, base + _CHUNK_BYTES, side="right")), row + 1)
        n = int(ends[stop - 1]) - base
        lens = lengths[row:stop]
        if n >= _VALUE_COPY_BYTES * (stop - row):
            for start, at, length in zip(starts[row:stop].tolist(), (ends[row:stop] - lens).tolist(), lens.tolist()):
                dst[start:start + length] = data[at:at + length]
        else:
            index = np.repeat(starts[row:stop] - (ends[row:stop] - lens - base), lens)
            index += np.arange(n)
            dst[index] = data[base:base + n]
        row = stop


def _varint_bytes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Avro zig-zag varints of int64 ``values``: (byte count per value, concatenated bytes)."""
    u = ((values.astype(np.int64) << 1) ^ (values.astype(np.int64) >> 63)).view(np.uint64)
    if u.size == 0 or int(u.max()) < 0x80:
        return np.ones(len(u), np.int64), u.astype(np.uint8)
    counts = np.ones(len(u), np.int64)
    for k in range(1, 10):
        counts += u >= np.uint64(1 << (7 * k))
    groups = (u[:, None] >> _SEVENS) & np.uint64(0x7F)
    groups |= (_TEN < (counts - 1)[:, None]).astype(np.uint64) << np.uint64(7)
    return counts, groups.astype(np.uint8)[_TEN < counts[:, None]]


def _to_le16(arr: pa.Array) -> np.ndarray:
    """decimal128 values as an (n, 16) little-endian two's complement byte matrix."""
    buffer = arr.buffers()[1]
    raw = np.frombuffer(buffer, np.uint8)[arr.offset * 16:(arr.offset + len(arr)) * 16]
    return raw.reshape(len(arr), 16)


# ==================================================================================================
# Avro columnar decoding


class _Decoder:
    def __init__(self, content: bytes, where: str):
        self.content = content
        self.buf = np.frombuffer(content + bytes(16), np.uint8)  # padding: short gathers never overrun
        self.where = where

    # -- errors
    def _fail(self, rows: np.ndarray, bad: np.ndarray, what: str) -> None:
        first = int(rows[int(np.argmax(bad))])
        raise CorruptFileError(f"{self.where}: record {first}: {what}")

    def _within(self, rows: np.ndarray, pos: np.ndarray, end: np.ndarray, what: str) -> None:
        over = pos > end
        if over.any():
            self._fail(rows, over, f"{what} runs past the end of the record")

    # -- primitives
    def varint(self, rows, pos, end, what):
        if pos.size == 0:
            return np.empty(0, np.int64), pos
        first = self.buf[pos]
        if int(first.max()) < 0x80:
            u = first.astype(np.int64)
            values, new = (u >> 1) ^ -(u & 1), pos + 1
        else:
            window = self.buf[pos[:, None] + _TEN]
            stops = window < 0x80
            missing = ~stops.any(axis=1)
            if missing.any():
                self._fail(rows, missing, f"{what}: varint longer than 10 bytes")
            last = stops.argmax(axis=1)
            groups = (window & 0x7F).astype(np.uint64) << _SEVENS
            groups[_TEN > last[:, None]] = 0
            u = np.bitwise_or.reduce(groups, axis=1)
            values = (u >> np.uint64(1)).view(np.int64) ^ -(u & np.uint64(1)).view(np.int64)
            new = pos + last + 1
        self._within(rows, new, end, what)
        return values, new

    def fixed_bytes(self, rows, pos, end, width, what):
        new = pos + width
        self._within(rows, new, end, what)
        return self.buf[pos[:, None] + np.arange(width)], new

    def length_prefixed(self, rows, pos, end, what):
        lengths, pos = self.varint(rows, pos, end, f"{what} length")
        negative = lengths < 0
        if negative.any():
            self._fail(rows, negative, f"{what} has negative length")
        new = pos + lengths
        self._within(rows, new, end, what)
        return pos, lengths, new

    # -- dispatch
    def read(self, node: _Node, rows, pos, end) -> tuple[pa.Array, np.ndarray]:
        m = len(pos)
        kind = node.kind
        if kind == "union":
            return self._union(node, rows, pos, end)
        if kind == "dense_union":
            return self._dense_union(node, rows, pos, end)
        if kind == "record":
            children, pos = self.read_fields(node, rows, pos, end)
            return pa.StructArray.from_arrays(children, fields=list(node.arrow)), pos
        if kind == "null":
            return pa.nulls(m, node.arrow), pos
        if kind == "boolean":
            raw, pos2 = self.fixed_bytes(rows, pos, end, 1, "boolean")
            raw = raw[:, 0]
            bad = raw > 1
            if bad.any():
                self._fail(rows, bad, f"boolean byte {int(raw[int(np.argmax(bad))])}")
            return pa.array(raw.astype(bool), pa.bool_()), pos2
        if kind in ("int", "long"):
            values, pos = self.varint(rows, pos, end, kind)
            if kind == "int":
                bad = (values < -(1 << 31)) | (values >= (1 << 31))
                if bad.any():
                    self._fail(rows, bad, "int out of 32-bit range")
            return self._numeric(node, values), pos
        if kind in ("float", "double"):
            width = 4 if kind == "float" else 8
            raw, pos = self.fixed_bytes(rows, pos, end, width, kind)
            values = np.ascontiguousarray(raw).view("<f4" if width == 4 else "<f8").reshape(m)
            return self._numeric(node, values), pos
        if kind in ("string", "bytes"):
            if node.logical == "decimal":
                return self._bytes_decimal(node, rows, pos, end)
            starts, lengths, pos = self.length_prefixed(rows, pos, end, kind)
            return self._binary(node, rows, starts, lengths), pos
        if kind == "fixed":
            raw, pos = self.fixed_bytes(rows, pos, end, node.size, "fixed")
            if node.logical == "decimal":
                return self._decimal(node, rows, raw), pos
            return pa.Array.from_buffers(node.arrow, m, [None, pa.py_buffer(np.ascontiguousarray(raw))]), pos
        if kind == "enum":
            index, pos = self.varint(rows, pos, end, "enum")
            bad = (index < 0) | (index >= len(node.symbols))
            if bad.any():
                self._fail(rows, bad, f"enum index outside the {len(node.symbols)} symbols")
            return pa.array(node.symbols, pa.string()).take(pa.array(index)), pos
        if kind in ("array", "map"):
            return self._with_fastavro(node, rows, pos, end)
        raise UnsupportedTableError(f"Avro type {kind!r} is not supported")

    def read_fields(self, node: _Node, rows, pos, end) -> tuple[list[pa.Array], np.ndarray]:
        children = []
        for _, child in node.fields:
            array, pos = self.read(child, rows, pos, end)
            children.append(array)
        return children, pos

    def _union(self, node: _Node, rows, pos, end):
        m = len(pos)
        branch, pos = self.varint(rows, pos, end, "union branch")
        bad = (branch != node.value_branch) & (branch != node.null_branch)
        if bad.any():
            self._fail(rows, bad, f"union branch {int(branch[int(np.argmax(bad))])} out of range")
        present = branch == node.value_branch
        if present.all():
            return self.read(node.value, rows, pos, end)
        selected = np.flatnonzero(present)
        if selected.size == 0:
            return pa.nulls(m, node.arrow), pos
        child, child_pos = self.read(node.value, rows[selected], pos[selected], end[selected])
        pos = pos.copy()
        pos[selected] = child_pos
        index = np.zeros(m, np.int64)
        index[selected] = np.arange(selected.size)
        return child.take(pa.array(index, mask=~present)), pos

    def _dense_union(self, node: _Node, rows, pos, end):
        """A union of several types: each branch's rows decode together, into the child of that branch."""
        branch, pos = self.varint(rows, pos, end, "union branch")
        bad = (branch < 0) | (branch >= len(node.fields))
        if bad.any():
            self._fail(rows, bad, f"union branch {int(branch[int(np.argmax(bad))])} out of range")
        pos = pos.copy()
        offsets = np.zeros(len(pos), np.int32)
        children = []
        for b, (_, child_node) in enumerate(node.fields):
            selected = np.flatnonzero(branch == b)
            offsets[selected] = np.arange(selected.size, dtype=np.int32)
            child, child_pos = self.read(child_node, rows[selected], pos[selected], end[selected])
            pos[selected] = child_pos
            children.append(child)
        types = pa.array(branch.astype(np.int8), pa.int8())
        union = pa.UnionArray.from_dense(types, pa.array(offsets, pa.int32()), children,
                                         [name for name, _ in node.fields])
        return union, pos

    def _numeric(self, node: _Node, values: np.ndarray) -> pa.Array:
        target = node.arrow
        if pa.types.is_floating(target) or pa.types.is_integer(target):
            return pa.array(values.astype(target.to_pandas_dtype(), copy=False), target)
        width = target.bit_width
        raw = values.astype(np.int32 if width == 32 else np.int64, copy=False)
        return pa.Array.from_buffers(target, len(raw), [None, pa.py_buffer(np.ascontiguousarray(raw))])

    def _binary(self, node: _Node, rows, starts, lengths) -> pa.Array:
        m = len(starts)
        data = gather_ranges(self.buf, starts, lengths)
        if data.size >= (1 << 31):
            raise UnsupportedTableError(f"{self.where}: a column holds over 2 GiB")
        offsets = np.zeros(m + 1, np.int32)
        np.cumsum(lengths, out=offsets[1:])
        target = node.arrow
        if not (pa.types.is_string(target) or pa.types.is_binary(target)):
            target = pa.string() if node.kind == "string" else pa.binary()
        array = pa.Array.from_buffers(target, m, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
        if pa.types.is_string(target):
            try:
                array.validate(full=True)
            except pa.ArrowInvalid:
                raise CorruptFileError(f"{self.where}: a string is not valid UTF-8") from None
        return array

    def _decimal(self, node: _Node, rows, raw: np.ndarray) -> pa.Array:
        """Big-endian two's complement (n, size) bytes -> decimal128."""
        m, size = raw.shape
        negative = raw[:, 0] >= 0x80 if size else np.zeros(m, bool)
        fill = np.where(negative, 0xFF, 0).astype(np.uint8)
        if size > 16:
            redundant = (raw[:, :size - 16] == fill[:, None]).all(axis=1)
            redundant &= (raw[:, size - 16] >= 0x80) == negative
            if not redundant.all():
                self._fail(rows, ~redundant, "decimal does not fit 128 bits")
            raw, size = raw[:, size - 16:], 16
        le = np.empty((m, 16), np.uint8)
        le[:] = fill[:, None]
        le[:, :size] = raw[:, ::-1]
        return pa.Array.from_buffers(node.arrow, m, [None, pa.py_buffer(le)])

    def _bytes_decimal(self, node: _Node, rows, pos, end):
        starts, lengths, pos = self.length_prefixed(rows, pos, end, "decimal")
        too_long = lengths > 16
        if too_long.any():
            self._fail(rows, too_long, "bytes decimal longer than 16 bytes")
        m = len(starts)
        negative = (lengths > 0) & (self.buf[starts] >= 0x80)
        fill = np.where(negative, 0xFF, 0).astype(np.uint8)
        le = np.empty((m, 16), np.uint8)
        for k in range(16):
            has = k < lengths
            le[:, k] = np.where(has, self.buf[np.where(has, starts + lengths - 1 - k, 0)], fill)
        return pa.Array.from_buffers(node.arrow, m, [None, pa.py_buffer(le)]), pos

    def _with_fastavro(self, node: _Node, rows, pos, end):
        if len(pos) == 0:  # e.g. an array of unions no record holds: Arrow builds no unions from Python values
            return pa.nulls(0, node.arrow), pos
        schema = node.fastavro_schema()
        stream = io.BytesIO(self.content)
        values, new = [], np.empty(len(pos), np.int64)
        for i, start in enumerate(pos.tolist()):
            stream.seek(start)
            try:
                values.append(fastavro.schemaless_reader(stream, schema, None))
            except Exception as exc:  # fastavro raises EOFError, ValueError, IndexError, ... on bad bytes
                raise CorruptFileError(f"{self.where}: record {int(rows[i])}: "
                                       f"cannot decode {node.kind}: {exc}") from None
            new[i] = stream.tell()
        self._within(rows, new, end, node.kind)
        try:
            return pa.array(values, node.arrow), new
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as exc:
            raise CorruptFileError(f"{self.where}: {node.kind} values do not fit "
                                   f"{node.arrow}: {exc}") from None


def _record_bounds(content: bytes, count: int, where: str) -> tuple[np.ndarray, np.ndarray]:
    """Start and end offsets of each length-prefixed datum after the 8-byte version/count prefix."""
    starts: list[int] = []
    unpack, size, pos = struct.Struct(">i").unpack_from, len(content), 8
    for i in range(count):
        if pos + 4 > size:
            raise CorruptFileError(f"AVRO_DATA block in {where}: record {i} of {count}: length prefix "
                                   f"runs past the content ({size} bytes)")
        (length,) = unpack(content, pos)
        if length < 0 or pos + 4 + length > size:
            raise CorruptFileError(f"AVRO_DATA block in {where}: record {i} of {count}: length {length} "
                                   f"at content offset {pos} runs past the content ({size} bytes)")
        starts.append(pos + 4)
        pos += 4 + length
    if pos != size:
        raise CorruptFileError(f"AVRO_DATA block in {where}: {size - pos} bytes left after {count} records")
    begin = np.array(starts, np.int64)
    end = np.empty(count, np.int64)
    end[:-1] = begin[1:] - 4
    if count:
        end[-1] = size
    return begin, end


def _record_count(content: bytes, where: str) -> int:
    """The record count of AVRO_DATA content, after checking its header."""
    if len(content) < 8:
        raise CorruptFileError(f"AVRO_DATA block in {where}: content of {len(content)} bytes has no header")
    version, count = struct.unpack_from(">ii", content, 0)
    if version != AVRO_CONTENT_VERSION:
        raise UnsupportedTableError(f"AVRO_DATA block in {where}: content version {version} is not supported "
                                    f"(only {AVRO_CONTENT_VERSION})")
    if count < 0:
        raise CorruptFileError(f"AVRO_DATA block in {where}: negative record count {count}")
    return count


def decode_avro_records(content: bytes, avro_schema: dict[str, Any] | str, where: str = "<memory>") -> pa.Table:
    """Decode AVRO_DATA content (version, count, length-prefixed datums) written with ``avro_schema``."""
    schema, _ = schema_json(avro_schema)
    root, arrow = _plan(schema)
    count = _record_count(content, where)
    starts, ends = _record_bounds(content, count, where)
    if count == 0:
        return arrow.empty_table()
    return _decode_bounded(content, root, arrow, starts, ends, f"AVRO_DATA block in {where}")


def _decode_bounded(content: bytes, root: _Node, arrow: pa.Schema, starts: np.ndarray, ends: np.ndarray,
                    where: str) -> pa.Table:
    """The datums at ``content[starts[i]:ends[i]]``, each of which must end exactly at its bound."""
    columns, pos = _Decoder(content, where).read_fields(root, np.arange(len(starts), dtype=np.int64), starts, ends)
    short = pos != ends
    if short.any():
        i = int(np.argmax(short))
        raise CorruptFileError(f"{where}: record {i}: datum is {int(pos[i] - starts[i])} bytes but its length "
                               f"prefix says {int(ends[i] - starts[i])}")
    return pa.Table.from_arrays(columns, schema=arrow)


def empty_table(schema: pa.Schema) -> pa.Table:
    """A table of no rows of ``schema`` (``Schema.empty_table`` builds no dense unions)."""
    return pa.Table.from_arrays([pa.nulls(0, f.type) for f in schema], schema=schema)


def decode_avro_datums(values: pa.Array | pa.ChunkedArray, avro_schema: dict[str, Any] | str,
                       where: str = "<memory>") -> pa.Table:
    """One Avro binary datum per value of the binary array ``values`` (an HFile's cell values: no count, no
    length prefixes), written with ``avro_schema``. A union of several types decodes to an Arrow dense union
    (``avro_to_arrow_schema(unions=True)``): Hudi's metadata records wrap their column statistics in one."""
    schema, _ = schema_json(avro_schema)
    root, arrow = _plan(schema, unions=True)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    values = values.cast(pa.large_binary())
    count = len(values)
    if values.null_count:
        raise CorruptFileError(f"{where}: {values.null_count} of its Avro datums are missing")
    if count == 0:
        return empty_table(arrow)
    _, offset_buffer, data_buffer = values.buffers()
    offsets = np.frombuffer(offset_buffer, np.int64)[values.offset:values.offset + count + 1]
    content = b"" if data_buffer is None else data_buffer.to_pybytes()
    return _decode_bounded(content, root, arrow, offsets[:-1].copy(), offsets[1:].copy(), where)


def decode_avro_values(content: bytes, avro_schema: dict[str, Any] | str, where: str = "<memory>") -> list[Any]:
    """AVRO_DATA content decoded a record at a time into Python values (fastavro): for the few, deeply
    nested records of Hudi's archived timeline, which have no use for the columnar path's Arrow form."""
    schema = fastavro.parse_schema(schema_json(avro_schema)[0])
    starts, ends = _record_bounds(content, _record_count(content, where), where)
    values = []
    for i, (start, end) in enumerate(zip(starts.tolist(), ends.tolist())):
        datum = io.BytesIO(content[start:end])
        try:
            values.append(fastavro.schemaless_reader(datum, schema, None))
        except Exception as exc:  # fastavro raises several unrelated types on bad input
            raise CorruptFileError(f"AVRO_DATA block in {where}: record {i} does not decode: {exc}") from None
        if datum.tell() != end - start:
            raise CorruptFileError(f"AVRO_DATA block in {where}: record {i}: datum is {datum.tell()} bytes but its "
                                   f"length prefix says {end - start}")
    return values


def encode_avro_values(values: list[Any], avro_schema: dict[str, Any] | str) -> bytes:
    """AVRO_DATA content of Python values (the counterpart of ``decode_avro_values``)."""
    schema = fastavro.parse_schema(schema_json(avro_schema)[0])
    parts = [struct.pack(">ii", AVRO_CONTENT_VERSION, len(values))]
    for value in values:
        datum = io.BytesIO()
        fastavro.schemaless_writer(datum, schema, value)
        parts += [struct.pack(">i", datum.tell()), datum.getvalue()]
    return b"".join(parts)


# ==================================================================================================
# Avro columnar encoding

_Segment = tuple[np.ndarray, np.ndarray]  # (bytes per row, concatenated bytes of all rows)


def _conform(table: pa.Table, schema: pa.Schema, avro_schema: dict[str, Any]) -> pa.Table:
    """``table`` with exactly ``schema``'s columns and types (the Arrow form of the Avro schema):
    missing nullable columns are null, others are cast; anything that does not fit is an error."""
    avro_types = {f["name"]: f["type"] for f in avro_schema.get("fields", [])}
    columns = []
    for target in schema:
        if target.name not in table.column_names:
            if not target.nullable:
                raise SchemaMismatchError(f"Column {target.name!r} (Avro {avro_types.get(target.name)}) is not "
                                          f"nullable but the table has no such column")
            columns.append(pa.nulls(table.num_rows, target.type))
            continue
        column = table.column(target.name)
        if column.type != target.type:
            try:
                column = column.cast(target.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
                raise SchemaMismatchError(f"Column {target.name!r} of type {column.type} cannot be written as "
                                          f"Avro {avro_types.get(target.name)} ({target.type}): {exc}") from None
        if not target.nullable and column.null_count:
            raise SchemaMismatchError(f"Column {target.name!r} has {column.null_count} nulls but its Avro type "
                                      f"{avro_types.get(target.name)} is not nullable")
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=schema)


class _Encoder:
    def write(self, node: _Node, array: pa.Array, where: str, out: list[_Segment]) -> None:
        kind, m = node.kind, len(array)
        if kind == "union":
            self._union(node, array, where, out)
            return
        if kind == "dense_union":
            self._dense_union(node, array, where, out)
            return
        if kind == "null":
            out.append((np.zeros(m, np.int64), np.empty(0, np.uint8)))
            return
        if array.null_count:
            raise SchemaMismatchError(f"Column {where!r} has nulls but its Avro type {kind} is not nullable")
        if kind == "record":
            for i, (name, child) in enumerate(node.fields):
                self.write(child, array.field(i), f"{where}.{name}", out)
        elif kind == "boolean":
            out.append((np.ones(m, np.int64), np.asarray(array.to_numpy(zero_copy_only=False), np.uint8)))
        elif kind in ("int", "long"):
            out.append(_varint_bytes(self._integers(array, kind)))
        elif kind in ("float", "double"):
            dtype = np.float32 if kind == "float" else np.float64
            values = np.asarray(array.to_numpy(zero_copy_only=False), dtype)
            if not _LITTLE:
                values = values.byteswap()
            out.append((np.full(m, values.itemsize, np.int64), values.view(np.uint8)))
        elif kind in ("string", "bytes") and node.logical == "decimal":
            out.extend(self._bytes_decimal(array))
        elif kind in ("string", "bytes"):
            binary = array.cast(pa.large_binary())
            _, offset_buffer, data_buffer = binary.buffers()
            offsets = np.frombuffer(offset_buffer, np.int64)[binary.offset:binary.offset + m + 1]
            lengths = np.diff(offsets)
            if data_buffer is None or offsets[-1] == offsets[0]:
                data = np.empty(0, np.uint8)
            else:
                data = np.frombuffer(data_buffer, np.uint8)[offsets[0]:offsets[-1]]
            out.append(_varint_bytes(lengths))
            out.append((lengths, data))
        elif kind == "fixed" and node.logical == "decimal":
            out.append((np.full(m, node.size, np.int64), self._fixed_decimal(node, array, where)))
        elif kind == "fixed":
            width = node.size
            raw = np.frombuffer(array.buffers()[1], np.uint8)[array.offset * width:(array.offset + m) * width]
            out.append((np.full(m, width, np.int64), raw))
        elif kind == "enum":
            lookup = {s: i for i, s in enumerate(node.symbols)}
            try:
                index = np.array([lookup[v] for v in array.to_pylist()], np.int64)
            except KeyError as exc:
                raise SchemaMismatchError(f"Column {where!r}: {exc.args[0]!r} is not a symbol of the Avro enum "
                                          f"{node.symbols}") from None
            out.append(_varint_bytes(index))
        elif kind in ("array", "map"):
            out.append(self._with_fastavro(node, array, where))
        else:
            raise UnsupportedTableError(f"Column {where!r}: Avro type {kind!r} is not supported")

    def _union(self, node: _Node, array: pa.Array, where: str, out: list[_Segment]) -> None:
        m = len(array)
        if pa.types.is_null(array.type):
            present = np.zeros(m, bool)
        else:
            present = np.asarray(array.is_valid().to_numpy(zero_copy_only=False), bool)
        if node.null_branch < 0 and not present.all():
            raise SchemaMismatchError(f"Column {where!r} has nulls but its Avro union has no null branch")
        branch = np.where(present, node.value_branch, max(node.null_branch, 0))
        out.append(_varint_bytes(branch))
        if present.all():
            self.write(node.value, array, where, out)
            return
        selected = np.flatnonzero(present)
        if selected.size == 0:
            return
        inner: list[_Segment] = []
        self.write(node.value, array.take(pa.array(selected)), where, inner)
        for lengths, data in inner:
            full = np.zeros(m, np.int64)
            full[selected] = lengths
            out.append((full, data))

    def _dense_union(self, node: _Node, array: pa.Array, where: str, out: list[_Segment]) -> None:
        """The branch of each row (its type code's position among the union's codes), then each branch's rows
        encoded together and put back in row order."""
        m = len(array)
        codes = list(array.type.type_codes)
        types = np.frombuffer(array.buffers()[1], np.int8)[array.offset:array.offset + m]
        offsets = np.frombuffer(array.buffers()[2], np.int32)[array.offset:array.offset + m]
        branch = np.full(m, -1, np.int64)
        for b, code in enumerate(codes):
            branch[types == code] = b
        if (branch < 0).any() or len(codes) != len(node.fields):
            raise SchemaMismatchError(f"Column {where!r}: union type codes {codes} do not match the Avro union's "
                                      f"{len(node.fields)} branches")
        out.append(_varint_bytes(branch))
        for b, (name, child_node) in enumerate(node.fields):
            selected = np.flatnonzero(branch == b)
            if selected.size == 0:
                continue
            inner: list[_Segment] = []
            self.write(child_node, array.field(b).take(pa.array(offsets[selected])), f"{where}.{name}", inner)
            for lengths, data in inner:
                full = np.zeros(m, np.int64)
                full[selected] = lengths
                out.append((full, data))

    @staticmethod
    def _integers(array: pa.Array, kind: str) -> np.ndarray:
        typ = array.type
        if pa.types.is_timestamp(typ) or pa.types.is_date(typ) or pa.types.is_time(typ):
            array = array.cast(pa.int32() if typ.bit_width == 32 else pa.int64())
        return np.asarray(array.to_numpy(zero_copy_only=False), np.int64)

    @staticmethod
    def _fixed_decimal(node: _Node, array: pa.Array, where: str) -> np.ndarray:
        size = node.size
        le = _to_le16(array)
        negative = le[:, 15] >= 0x80
        fill = np.where(negative, 0xFF, 0).astype(np.uint8)
        if size < 16:
            fits = (le[:, size:] == fill[:, None]).all(axis=1) & ((le[:, size - 1] >= 0x80) == negative)
            if not fits.all():
                raise SchemaMismatchError(f"Column {where!r}: a decimal does not fit Avro fixed({size})")
            be = le[:, size - 1::-1]
        else:
            be = np.concatenate([np.repeat(fill[:, None], size - 16, axis=1), le[:, ::-1]], axis=1)
        return np.ascontiguousarray(be).reshape(-1)

    @staticmethod
    def _bytes_decimal(array: pa.Array) -> list[_Segment]:
        """Minimal big-endian two's complement, as Java's BigInteger.toByteArray()."""
        be = _to_le16(array)[:, ::-1]
        fill = np.where(be[:, 0] >= 0x80, 0xFF, 0).astype(np.uint8)
        redundant = (be[:, :15] == fill[:, None]) & ((be[:, 1:] >= 0x80) == (fill >= 0x80)[:, None])
        skip = np.logical_and.accumulate(redundant, axis=1).sum(axis=1)
        lengths = 16 - skip
        data = np.ascontiguousarray(be)[np.arange(16) >= skip[:, None]]
        return [_varint_bytes(lengths), (lengths.astype(np.int64), data)]

    def _with_fastavro(self, node: _Node, array: pa.Array, where: str) -> _Segment:
        schema = node.fastavro_schema()
        values = _plain_values(array)
        stream = io.BytesIO()
        lengths = np.empty(len(values), np.int64)
        for i, value in enumerate(values):
            start = stream.tell()
            try:
                fastavro.schemaless_writer(stream, schema, _avro_ready(node, value))
            except Exception as exc:  # fastavro's errors are ValueError, TypeError, AttributeError...
                raise SchemaMismatchError(f"Column {where!r}: cannot encode {value!r} as Avro {node.kind}: {exc}") from None
            lengths[i] = stream.tell() - start
        return lengths, np.frombuffer(stream.getvalue(), np.uint8)


def _raw_type(typ: pa.DataType) -> pa.DataType:
    """``typ`` with dates/times/timestamps replaced by their integer storage (what the logical-type
    free fastavro schemas expect)."""
    if pa.types.is_date32(typ) or pa.types.is_time32(typ):
        return pa.int32()
    if pa.types.is_timestamp(typ) or pa.types.is_time64(typ) or pa.types.is_date64(typ):
        return pa.int64()
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        return pa.list_(typ.value_field.with_type(_raw_type(typ.value_type)))
    if pa.types.is_map(typ):
        return pa.map_(typ.key_field.with_type(_raw_type(typ.key_type)),
                       typ.item_field.with_type(_raw_type(typ.item_type)))
    if pa.types.is_struct(typ):
        return pa.struct([f.with_type(_raw_type(f.type)) for f in typ])
    return typ


def _plain_values(array: pa.Array) -> list[Any]:
    raw = _raw_type(array.type)
    return (array.cast(raw) if raw != array.type else array).to_pylist()


def _avro_ready(node: _Node, value: Any) -> Any:
    """Arrow's Python values in fastavro's shapes: maps become dicts (Arrow gives (key, value) pairs)."""
    if value is None:
        return None
    avro = node.avro
    return _shape(avro, value)


def _shape(avro: Any, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(avro, list):
        branch = next(b for b in avro if b != "null")
        return _shape(branch, value)
    if not isinstance(avro, dict):
        return value
    kind = avro.get("type")
    if isinstance(kind, (dict, list)):
        return _shape(kind, value)
    if kind == "map":
        return {k: _shape(avro["values"], v) for k, v in value}
    if kind == "array":
        return [_shape(avro["items"], v) for v in value]
    if kind == "record":
        return {f["name"]: _shape(f["type"], value.get(f["name"])) for f in avro["fields"]}
    return value


def _encode_rows(table: pa.Table, avro_schema: dict[str, Any] | str, unions: bool = False
                 ) -> tuple[np.ndarray, list[_Segment]]:
    """Each row's datum length and the segments (a field's bytes for every row) that make up the datums."""
    schema, _ = schema_json(avro_schema)
    root, arrow = _plan(schema, unions)
    table = _conform(table, arrow, schema)
    segments: list[_Segment] = []
    if table.num_rows == 0:
        return np.zeros(0, np.int64), segments
    encoder = _Encoder()
    for (name, node), column in zip(root.fields, table.columns):
        encoder.write(node, column.combine_chunks(), name, segments)
    record_lengths = np.zeros(table.num_rows, np.int64)
    for lengths, _ in segments:
        record_lengths += lengths
    if int(record_lengths.max()) >= (1 << 31):
        raise SchemaMismatchError("A record is larger than 2 GiB and cannot be written as one Avro datum")
    return record_lengths, segments


def _scatter_segments(out: np.ndarray, starts: np.ndarray, segments: list[_Segment]) -> None:
    cursor = starts.copy()
    for lengths, data in segments:
        scatter_ranges(out, cursor, data, lengths)
        cursor += lengths


def encode_avro_records(table: pa.Table, avro_schema: dict[str, Any] | str) -> bytes:
    """AVRO_DATA content for ``table`` written with ``avro_schema``: version 3, record count, then
    each record as a length-prefixed Avro binary datum."""
    m = table.num_rows
    head = struct.pack(">ii", AVRO_CONTENT_VERSION, m)
    record_lengths, segments = _encode_rows(table, avro_schema)
    if m == 0:
        return head
    starts = np.empty(m, np.int64)
    starts[0] = 8
    np.cumsum(record_lengths[:-1] + 4, out=starts[1:])
    starts[1:] += 8
    out = np.empty(8 + int(record_lengths.sum()) + 4 * m, np.uint8)
    out[:8] = np.frombuffer(head, np.uint8)
    prefixes = record_lengths.astype(">i4").view(np.uint8)
    scatter_ranges(out, starts, prefixes, np.full(m, 4, np.int64))
    _scatter_segments(out, starts + 4, segments)
    return out.tobytes()


def encode_avro_datums(table: pa.Table, avro_schema: dict[str, Any] | str) -> pa.Array:
    """Each row of ``table`` as one Avro binary datum written with ``avro_schema``, as a binary array (the
    values of an HFile's cells); Arrow dense unions encode as unions of several types (``decode_avro_datums``)."""
    record_lengths, segments = _encode_rows(table, avro_schema, unions=True)
    m = table.num_rows
    offsets = np.zeros(m + 1, np.int64)
    np.cumsum(record_lengths, out=offsets[1:])
    out = np.empty(int(offsets[-1]), np.uint8)
    _scatter_segments(out, offsets[:-1], segments)
    return pa.Array.from_buffers(pa.large_binary(), m, [None, pa.py_buffer(offsets), pa.py_buffer(out)])


def conform_to_avro(table: pa.Table, avro_schema: dict[str, Any] | str) -> pa.Table:
    """``table`` with exactly the columns and types of the Arrow form of ``avro_schema`` (missing
    nullable columns are null, others are cast); what a PARQUET_DATA block stores. A schema given as
    JSON text is parsed and planned once per process (a write task's log blocks share one)."""
    if isinstance(avro_schema, str):
        parsed, arrow = _arrow_form(avro_schema)
    else:
        parsed, (_, arrow) = avro_schema, _plan(avro_schema)
    return _conform(table, arrow, parsed)


@functools.lru_cache(maxsize=16)
def _arrow_form(text: str) -> tuple[dict[str, Any], pa.Schema]:
    """The parsed Avro schema of ``text`` and its Arrow form (read only: shared by every caller)."""
    parsed = json.loads(text)
    return parsed, _plan(parsed)[1]
