"""The metadata table's partitions, and its records (``HoodieMetadataRecord``) as Arrow tables.

Every partition of the metadata table holds records of one Avro schema, ``HoodieMetadataRecord`` (Hudi 0.15's
``HoodieMetadata.avsc``): a ``key``, a ``type`` and one filled field per type (``HoodieMetadataPayload``):

====  ============================  ==================  ==============================================
type  what                          partition           field
====  ============================  ==================  ==============================================
1     the list of data partitions   ``files``           ``filesystemMetadata``: partition -> (0, deleted)
2     one data partition's files    ``files``           ``filesystemMetadata``: name -> (size, deleted)
3     one column of one file        ``column_stats``    ``ColumnStatsMetadata``
4     one base file's bloom filter  ``bloom_filters``   ``BloomFilterMetadata``
5     one record key's location     ``record_index``    ``recordIndexMetadata``
====  ============================  ==================  ==============================================

In an HFile (base file or log block) each record is the value of a cell whose key is the record's key, and the
record's own ``key`` field is left empty to not store it twice (HUDI-2763, ``HoodieAvroHFileWriter.writeAvro``,
``HFileUtils.serializeRecordsToLogBlock``); a reader puts it back from the cell (``HoodieAvroHFileReaderImplBase
.deserialize``). A column's minimum and maximum are wrapped in one-field records (``BooleanWrapper``, ...), a
union Arrow holds as a dense union with a child per wrapper (``wrap_values``, ``unwrap_values``).

The codec is ``log.avro_codec``'s columnar one: a batch of records decodes and encodes a field at a time with
numpy; only the ``filesystemMetadata`` maps go through fastavro a record at a time (one record per data
partition). Records are read with the schema their file carries, which may be a later Hudi's with more fields;
the views below take the fields they need by name.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from enum import Enum, IntEnum
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.errors import CorruptFileError, HoodieConfigError, InvalidRecordError
from hoodie_datasource.log.avro_codec import decode_avro_datums, encode_avro_datums
from hoodie_datasource.log.delete_block import VALUE_WRAPPERS, wrapper_for
from hoodie_datasource.metadata.keys import (
    ALL_PARTITIONS_KEY,
    bloom_filter_keys,
    column_stats_keys,
    partition_identifier,
)
from hoodie_datasource.schema.avro_schema import avro_to_arrow_schema, to_avro_json

KEY_FIELD = "key"  # HoodieAvroHFileReader.KEY_FIELD_NAME
UUID_FILE_ID = 0  # HoodieMetadataPayload.RECORD_INDEX_FIELD_FILEID_ENCODING_UUID
RAW_FILE_ID = 1  # RECORD_INDEX_FIELD_FILEID_ENCODING_RAW_STRING
MISSING_FILE_INDEX = -1  # RECORD_INDEX_MISSING_FILEINDEX_FALLBACK: a file id of a bare UUID
DECIMAL_SCALE = 15  # DecimalWrapper: decimal(30, 15)
DECIMAL_PRECISION = 30


class RecordType(IntEnum):
    """``HoodieMetadataPayload.METADATA_TYPE_*``."""

    PARTITION_LIST = 1
    FILE_LIST = 2
    COLUMN_STATS = 3
    BLOOM_FILTER = 4
    RECORD_INDEX = 5


class MetadataPartition(Enum):
    """The metadata table's partitions in table version 6 (``MetadataPartitionType``): the folder and the prefix
    of its file groups' ids."""

    FILES = ("files", "files-")
    COLUMN_STATS = ("column_stats", "col-stats-")
    BLOOM_FILTERS = ("bloom_filters", "bloom-filters-")
    RECORD_INDEX = ("record_index", "record-index-")

    def __init__(self, path: str, file_id_prefix: str) -> None:
        self.path = path
        self.file_id_prefix = file_id_prefix

    def file_group_id(self, index: int) -> str:
        """The id of the partition's ``index``-th file group (``getFileIDForFileGroup``): ``files-0000-0``."""
        return f"{self.file_id_prefix}{index:04d}-0"

    @classmethod
    def of(cls, path: str) -> MetadataPartition:
        for partition in cls:
            if partition.path == path:
                return partition
        raise HoodieConfigError(f"{path!r} is not a metadata-table partition this library knows; the partitions "
                                f"are {', '.join(p.path for p in cls)}")


# ------------------------------------------------------------------------------------------------------------
# the schema

def _string() -> dict[str, Any]:
    return {"type": "string", "avro.java.string": "String"}


def _optional(avro: Any) -> dict[str, Any]:
    return {"type": ["null", avro], "default": None}


_WRAPPED_TYPES: dict[str, Any] = {
    "BooleanWrapper": "boolean", "IntWrapper": "int", "LongWrapper": "long", "FloatWrapper": "float",
    "DoubleWrapper": "double", "BytesWrapper": "bytes", "StringWrapper": _string(), "DateWrapper": "int",
    "DecimalWrapper": {"type": "bytes", "logicalType": "decimal", "precision": DECIMAL_PRECISION,
                       "scale": DECIMAL_SCALE},
    "TimeMicrosWrapper": {"type": "long", "logicalType": "time-micros"}, "TimestampMicrosWrapper": "long",
}


def _metadata_record_schema() -> dict[str, Any]:
    """Hudi 0.15's ``HoodieMetadataRecord`` (``HoodieMetadata.avsc``), its docs left out."""
    wrappers = [{"type": "record", "name": name, "fields": [{"name": "value", "type": _WRAPPED_TYPES[name]}]}
                for name in VALUE_WRAPPERS]
    file_info = {"type": "record", "name": "HoodieMetadataFileInfo",
                 "fields": [{"name": "size", "type": "long"}, {"name": "isDeleted", "type": "boolean"}]}
    bloom = {"type": "record", "name": "HoodieMetadataBloomFilter", "fields": [
        {"name": "type", "type": _string()}, {"name": "timestamp", "type": _string()},
        {"name": "bloomFilter", "type": "bytes"}, {"name": "isDeleted", "type": "boolean"}]}
    stats = {"type": "record", "name": "HoodieMetadataColumnStats", "fields": [
        {"name": "fileName", **_optional(_string())}, {"name": "columnName", **_optional(_string())},
        {"name": "minValue", "type": ["null", *wrappers], "default": None},
        {"name": "maxValue", "type": ["null", *VALUE_WRAPPERS], "default": None},
        *({"name": name, **_optional("long")} for name in ("valueCount", "nullCount", "totalSize",
                                                           "totalUncompressedSize")),
        {"name": "isDeleted", "type": "boolean"}]}
    index = {"type": "record", "name": "HoodieRecordIndexInfo", "fields": [
        {"name": "partitionName", **_optional(_string())}, {"name": "fileIdHighBits", **_optional("long")},
        {"name": "fileIdLowBits", **_optional("long")}, {"name": "fileIndex", **_optional("int")},
        {"name": "fileId", **_optional(_string())}, {"name": "instantTime", **_optional("long")},
        {"name": "fileIdEncoding", "type": "int", "default": 0}]}
    return {"type": "record", "name": "HoodieMetadataRecord", "namespace": "org.apache.hudi.avro.model", "fields": [
        {"name": KEY_FIELD, "type": _string()},
        {"name": "type", "type": "int"},
        {"name": "filesystemMetadata",
         "type": ["null", {"type": "map", "values": file_info, "avro.java.string": "String"}]},
        {"name": "BloomFilterMetadata", **_optional(bloom)},
        {"name": "ColumnStatsMetadata", **_optional(stats)},
        {"name": "recordIndexMetadata", **_optional(index)},
    ]}


METADATA_RECORD_SCHEMA = _metadata_record_schema()
METADATA_RECORD_SCHEMA_JSON = to_avro_json(METADATA_RECORD_SCHEMA)
RECORDS_SCHEMA = avro_to_arrow_schema(METADATA_RECORD_SCHEMA, unions=True)
_FILES_MAP = RECORDS_SCHEMA.field("filesystemMetadata").type
_STATS = RECORDS_SCHEMA.field("ColumnStatsMetadata").type
WRAPPED_VALUE = _STATS.field("minValue").type  # the dense union of the wrappers, "null" first
_WRAPPER_NAMES = [f.name for f in WRAPPED_VALUE]
_BLOOM = RECORDS_SCHEMA.field("BloomFilterMetadata").type
_INDEX = RECORDS_SCHEMA.field("recordIndexMetadata").type


# ------------------------------------------------------------------------------------------------------------
# records <-> cells

def decode_records(cell_keys: pa.Array, values: pa.Array, writer_schema: str | dict[str, Any],
                   where: str = "<memory>") -> pa.Table:
    """The records of HFile cells (``cell_keys``, ``values``) written with ``writer_schema`` (the file's
    ``schema`` entry, or the log block's SCHEMA header), each with its ``key`` put back from its cell."""
    records = decode_avro_datums(values, writer_schema, where)
    if KEY_FIELD not in records.column_names:
        raise CorruptFileError(f"{where}: its records have no {KEY_FIELD!r} field; not the metadata table's schema")
    try:
        restored = pc.cast(cell_keys, pa.string())
    except pa.ArrowInvalid:
        raise CorruptFileError(f"{where}: a cell key is not UTF-8") from None
    keys = records.column(KEY_FIELD)
    keys = pc.if_else(pc.equal(keys, ""), restored, keys)
    return records.set_column(records.column_names.index(KEY_FIELD), KEY_FIELD, keys)


def encode_records(records: pa.Table) -> tuple[pa.Array, pa.Array]:
    """The HFile cells of ``records`` (in ``RECORDS_SCHEMA``): each record's key, and the record encoded with
    ``METADATA_RECORD_SCHEMA`` with its ``key`` field emptied."""
    keys = records.column(KEY_FIELD).combine_chunks()
    if keys.null_count or not pc.all(pc.greater(pc.utf8_length(keys), 0)).as_py():
        raise InvalidRecordError("A metadata-table record needs a non-empty key")
    emptied = records.set_column(records.column_names.index(KEY_FIELD), KEY_FIELD,
                                 pa.array(np.full(records.num_rows, ""), pa.string()))
    return keys, encode_avro_datums(emptied, METADATA_RECORD_SCHEMA)


def _records(keys: pa.Array, record_type: int, **fields: pa.Array) -> pa.Table:
    n = len(keys)
    columns = {KEY_FIELD: keys, "type": pa.array(np.full(n, int(record_type), np.int32))}
    for field in RECORDS_SCHEMA:
        if field.name not in columns:
            columns[field.name] = fields.get(field.name, pa.nulls(n, field.type))
    return pa.Table.from_arrays([columns[f.name] for f in RECORDS_SCHEMA], schema=RECORDS_SCHEMA)


# ------------------------------------------------------------------------------------------------------------
# files

def _files_map(owners: np.ndarray, names: pa.Array, sizes: pa.Array, deleted: pa.Array, count: int) -> pa.Array:
    """One map per owner (``owners`` ascending: the record each entry belongs to)."""
    offsets = np.zeros(count + 1, np.int32)
    np.cumsum(np.bincount(owners, minlength=count), out=offsets[1:])
    items = pa.StructArray.from_arrays([sizes.cast(pa.int64()), deleted.cast(pa.bool_())],
                                       fields=list(_FILES_MAP.item_type))
    return pa.MapArray.from_arrays(pa.array(offsets), names.cast(pa.string()), items, type=_FILES_MAP)


def partition_list_record(partitions: Sequence[str], deleted: bool = False) -> pa.Table:
    """The ``__all_partitions__`` record listing ``partitions`` as added, or as deleted
    (``createPartitionListRecord``)."""
    names = pa.array([partition_identifier(p) for p in partitions], pa.string())
    n = len(names)
    entries = _files_map(np.zeros(n, np.int64), names, pa.array(np.zeros(n, np.int64)),
                         pa.array(np.full(n, deleted)), 1)
    return _records(pa.array([ALL_PARTITIONS_KEY]), RecordType.PARTITION_LIST, filesystemMetadata=entries)


def files_records(files: pa.Table) -> pa.Table:
    """One record per data partition of ``files`` (columns ``partition``, ``file_name``, ``size``,
    ``is_deleted``; a deleted file's size is 0), listing its files added and deleted (``createPartitionFilesRecord``).
    A file named twice in a partition is refused, as a Java map keeps one entry per name."""
    files = files.sort_by([("partition", "ascending"), ("file_name", "ascending")])
    partition, names = files.column("partition").combine_chunks(), files.column("file_name").combine_chunks()
    distinct = pc.unique(partition)
    owners = pc.index_in(partition, distinct).to_numpy(zero_copy_only=False).astype(np.int64)
    if len(names) > 1:
        same = pc.and_(pc.equal(partition.slice(1), partition.slice(0, len(partition) - 1)),
                       pc.equal(names.slice(1), names.slice(0, len(names) - 1)))
        if pc.any(same).as_py():
            raise InvalidRecordError("A file is named twice in one partition's files record")
    entries = _files_map(owners, names, files.column("size").combine_chunks(),
                         files.column("is_deleted").combine_chunks(), len(distinct))
    keys = pa.array([partition_identifier(p) for p in distinct.to_pylist()], pa.string())
    return _records(keys, RecordType.FILE_LIST, filesystemMetadata=entries)


def file_entries(records: pa.Table) -> pa.Table:
    """The files of ``files``-partition records, one row per map entry: ``key`` (the record's: a partition
    identifier, or ``__all_partitions__``), ``file_name``, ``size``, ``is_deleted`` and ``record``, the row of
    the record it came from."""
    maps = records.column("filesystemMetadata").combine_chunks()
    offsets = maps.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    first, last = int(offsets[0]), int(offsets[-1])
    record = np.repeat(np.arange(len(maps)), np.diff(offsets))
    names = maps.keys.slice(first, last - first)
    values = maps.items.slice(first, last - first)
    return pa.table({
        "key": records.column(KEY_FIELD).combine_chunks().take(pa.array(record)),
        "file_name": names,
        "size": values.field("size"),
        "is_deleted": values.field("isDeleted"),
        "record": pa.array(record),
    })


# ------------------------------------------------------------------------------------------------------------
# column stats

def wrap_values(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Column values in the wrapper records Hudi keeps a column's minimum and maximum in
    (``HoodieAvroUtils.wrapValueIntoAvro``), as the dense union ``WRAPPED_VALUE``: a null stays null; a date
    is its epoch day, a timestamp its epoch microseconds, a decimal is raised to scale 15."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    typ = values.type
    if pa.types.is_dictionary(typ):
        values, typ = values.cast(typ.value_type), typ.value_type
    n = len(values)
    if pa.types.is_null(typ):
        branch, wrapped = 0, None
    else:
        name = wrapper_for(typ)
        position = _WRAPPER_NAMES.index(name)
        branch = WRAPPED_VALUE.type_codes[position]
        wrapper = WRAPPED_VALUE.field(position).type
        value_type = wrapper.field("value").type
        if name == "DateWrapper":
            values = values.cast(pa.date32()).cast(pa.int32())
        elif name == "TimestampMicrosWrapper":
            values = values.cast(pa.timestamp("us", typ.tz)).cast(pa.int64())
        elif name == "DecimalWrapper":
            values = values.cast(pa.decimal128(DECIMAL_PRECISION, DECIMAL_SCALE))
        wrapped = pa.StructArray.from_arrays([values.cast(value_type)], fields=list(wrapper))
    present = np.zeros(n, bool) if wrapped is None else np.asarray(values.is_valid())
    types = np.where(present, branch, 0).astype(np.int8)
    offsets = np.zeros(n, np.int32)
    offsets[present] = np.arange(int(present.sum()), dtype=np.int32)
    offsets[~present] = np.arange(int((~present).sum()), dtype=np.int32)
    children = []
    for field in WRAPPED_VALUE:
        if field.name == "null":
            children.append(pa.nulls(int((~present).sum()), pa.null()))
        elif wrapped is not None and field.name == name:
            children.append(wrapped.filter(pa.array(present)))
        else:
            children.append(pa.array([], field.type))
    return pa.UnionArray.from_dense(pa.array(types, pa.int8()), pa.array(offsets, pa.int32()), children,
                                    [f.name for f in WRAPPED_VALUE])


def unwrap_values(wrapped: pa.Array | pa.ChunkedArray, typ: pa.DataType | None = None) -> pa.Array:
    """The values in wrapper records (a dense union of wrappers, as ``wrap_values`` makes or a file holds), cast
    to ``typ`` (by default the type of the one wrapper present); a row in the ``null`` branch is null. A date
    comes back from its epoch day, a timestamp (``typ`` a timestamp) from its epoch microseconds."""
    if isinstance(wrapped, pa.ChunkedArray):
        wrapped = wrapped.combine_chunks() if wrapped.num_chunks else pa.array([], WRAPPED_VALUE)
    n = len(wrapped)
    names = [f.name for f in wrapped.type]
    codes = list(wrapped.type.type_codes)
    types = np.frombuffer(wrapped.buffers()[1], np.int8)[wrapped.offset:wrapped.offset + n]
    offsets = np.frombuffer(wrapped.buffers()[2], np.int32)[wrapped.offset:wrapped.offset + n]
    present = [(i, name) for i, name in enumerate(names) if name != "null" and (types == codes[i]).any()]
    if typ is None:
        if len(present) > 1:
            raise InvalidRecordError(f"Column statistics hold values of several types ({[p[1] for p in present]}); "
                                     f"name the type to read them as")
        typ = _unwrapped_type(present[0][1], wrapped.type.field(present[0][0]).type) if present else pa.null()
    parts, rows = [], []
    for i, name in present:
        selected = np.flatnonzero(types == codes[i])
        child = wrapped.field(i).field("value").take(pa.array(offsets[selected]))
        parts.append(_from_wrapper(name, child, typ))
        rows.append(selected)
    if not parts:
        return pa.nulls(n, typ)
    gathered = pa.concat_arrays(parts)
    order = np.full(n, -1, np.int64)
    order[np.concatenate(rows)] = np.arange(len(gathered))
    return gathered.take(pa.array(order, mask=order < 0))


def _unwrapped_type(name: str, wrapper: pa.DataType) -> pa.DataType:
    if name == "DateWrapper":
        return pa.date32()
    if name == "TimestampMicrosWrapper":
        return pa.timestamp("us", "UTC")
    return wrapper.field("value").type


def _from_wrapper(name: str, child: pa.Array, typ: pa.DataType) -> pa.Array:
    if name == "DateWrapper":
        child = child.cast(pa.int32()).cast(pa.date32())
    elif name == "TimestampMicrosWrapper" and pa.types.is_timestamp(typ):
        child = child.cast(pa.timestamp("us", typ.tz)) if typ.tz else child.cast(pa.timestamp("us"))
    return child.cast(typ)


def column_stats_records(stats: pa.Table) -> pa.Table:
    """One ``column_stats`` record per row of ``stats`` (columns ``partition``, ``file_name``, ``column_name``,
    ``min_value`` and ``max_value`` (``WRAPPED_VALUE`` unions: ``wrap_values``), ``value_count``,
    ``null_count``, ``total_size``, ``total_uncompressed_size`` and ``is_deleted``; ``createColumnStatsRecords``)."""
    col = {name: stats.column(name).combine_chunks() for name in stats.column_names}
    keys = column_stats_keys(col["partition"], col["file_name"], col["column_name"])
    arrays = [col["file_name"].cast(pa.string()), col["column_name"].cast(pa.string()), col["min_value"],
              col["max_value"]]
    arrays += [col[name].cast(pa.int64()) for name in ("value_count", "null_count", "total_size",
                                                       "total_uncompressed_size")]
    arrays.append(col["is_deleted"].cast(pa.bool_()))
    return _records(keys, RecordType.COLUMN_STATS,
                    ColumnStatsMetadata=pa.StructArray.from_arrays(arrays, fields=list(_STATS)))


_STATS_COLUMNS = {"fileName": "file_name", "columnName": "column_name", "minValue": "min_value",
                  "maxValue": "max_value", "valueCount": "value_count", "nullCount": "null_count",
                  "totalSize": "total_size", "totalUncompressedSize": "total_uncompressed_size",
                  "isDeleted": "is_deleted"}


def column_stats(records: pa.Table) -> pa.Table:
    """``column_stats`` records as one row each: ``key`` and the fields of ``ColumnStatsMetadata`` under the
    names ``column_stats_records`` takes."""
    stats = records.column("ColumnStatsMetadata").combine_chunks()
    columns = {"key": records.column(KEY_FIELD).combine_chunks()}
    for field, name in _STATS_COLUMNS.items():
        columns[name] = stats.field(field)
    return pa.table(columns)


# ------------------------------------------------------------------------------------------------------------
# bloom filters

def bloom_filter_records(partitions: pa.Array, file_names: pa.Array, instant_time: str, type_code: str,
                         filters: pa.Array, is_deleted: pa.Array) -> pa.Table:
    """One ``bloom_filters`` record per base file (``createBloomFilterMetadataRecord``): its filter serialized as
    the file's footer holds it (``type_code``, e.g. ``DYNAMIC_V0``), written at ``instant_time``."""
    n = len(file_names)
    keys = bloom_filter_keys(partitions, file_names)
    bloom = pa.StructArray.from_arrays(
        [pa.array(np.full(n, type_code), pa.string()), pa.array(np.full(n, instant_time), pa.string()),
         filters.cast(pa.binary()), is_deleted.cast(pa.bool_())], fields=list(_BLOOM))
    return _records(keys, RecordType.BLOOM_FILTER, BloomFilterMetadata=bloom)


def bloom_filters(records: pa.Table) -> pa.Table:
    """``bloom_filters`` records as rows of ``key``, ``type`` (the filter's type code), ``timestamp``,
    ``bloom_filter`` (its serialized bytes) and ``is_deleted``."""
    bloom = records.column("BloomFilterMetadata").combine_chunks()
    return pa.table({"key": records.column(KEY_FIELD).combine_chunks(), "type": bloom.field("type"),
                     "timestamp": bloom.field("timestamp"), "bloom_filter": bloom.field("bloomFilter"),
                     "is_deleted": bloom.field("isDeleted")})


# ------------------------------------------------------------------------------------------------------------
# record index

_HEX = np.frombuffer(b"0123456789abcdef", np.uint8)
_NIBBLE = np.full(256, 255, np.uint8)
_NIBBLE[_HEX] = np.arange(16, dtype=np.uint8)
_NIBBLE[np.frombuffer(b"ABCDEF", np.uint8)] = np.arange(10, 16, dtype=np.uint8)
_UUID_DASHES = (8, 13, 18, 23)
_UUID_HEX = np.array([i for i in range(36) if i not in _UUID_DASHES])


def _instant_millis(instant_times: pa.Array, timezone: str) -> pa.Array:
    """Epoch milliseconds of instant times (``HoodieActiveTimeline.parseDateFromInstantTime``: a time of
    seconds gets ``999`` milliseconds), read in the timeline's zone (``hoodie.table.timeline.timezone``)."""
    encoded = pc.dictionary_encode(instant_times).combine_chunks() \
        if isinstance(instant_times, pa.ChunkedArray) else pc.dictionary_encode(instant_times)
    zone = datetime.timezone.utc if timezone.upper() == "UTC" else None
    millis = []
    for text in encoded.dictionary.to_pylist():
        padded = text + "999" if len(text) == 14 else text
        try:
            moment = datetime.datetime.strptime(padded + "000", "%Y%m%d%H%M%S%f")
        except ValueError:
            raise InvalidRecordError(f"Instant time {text!r} is not yyyyMMddHHmmss[SSS]") from None
        moment = moment.replace(tzinfo=zone) if zone else moment.astimezone()
        millis.append(int(round(moment.timestamp() * 1000)))
    return pa.array(millis, pa.int64()).take(encoded.indices)


def _instant_times(millis: pa.Array, timezone: str) -> pa.Array:
    """Instant times (``yyyyMMddHHmmssSSS``) of epoch milliseconds, in the timeline's zone
    (``HoodieActiveTimeline.formatDate``)."""
    encoded = pc.dictionary_encode(millis)
    zone = datetime.timezone.utc if timezone.upper() == "UTC" else None
    texts = []
    for value in encoded.dictionary.to_pylist():
        moment = datetime.datetime.fromtimestamp(value / 1000, zone)
        texts.append(moment.strftime("%Y%m%d%H%M%S") + f"{value % 1000:03d}")
    return pa.array(texts, pa.string()).take(encoded.indices)


def _uuid_bits(file_ids: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(is a UUID file id, high bits, low bits, file index) of file ids ``<uuid>`` or ``<uuid>-<index>``
    (``createRecordIndexUpdate``); ids of another shape are kept raw (encoding 1)."""
    n = len(file_ids)
    ids = file_ids.cast(pa.large_string())
    offsets = np.frombuffer(ids.buffers()[1], np.int64)[ids.offset:ids.offset + n + 1]
    lengths = np.diff(offsets)  # in bytes: a UUID is ASCII
    data = np.frombuffer(ids.buffers()[2], np.uint8) if ids.buffers()[2] is not None else np.zeros(0, np.uint8)
    long_enough = lengths >= 36
    chars = np.zeros((n, 36), np.uint8)
    rows = np.flatnonzero(long_enough)
    chars[rows] = data[offsets[rows, None] + np.arange(36)]
    nibbles = _NIBBLE[chars[:, _UUID_HEX]]
    dashes = (chars[:, list(_UUID_DASHES)] == ord("-")).all(axis=1)
    suffix = pc.utf8_slice_codeunits(ids, 36)
    index_text = pc.utf8_slice_codeunits(suffix, 1)
    bare = lengths == 36
    numbered = pc.and_(pc.starts_with(suffix, "-"), pc.match_substring_regex(index_text, r"^[0-9]{1,9}$"))
    is_uuid = long_enough & dashes & (nibbles < 16).all(axis=1) & (bare | numbered.to_numpy(zero_copy_only=False))
    packed = (nibbles[:, 0::2].astype(np.uint8) << 4) | nibbles[:, 1::2]
    packed[~is_uuid] = 0
    words = np.ascontiguousarray(packed).view(">u8").reshape(n, 2).astype(np.uint64).view(np.int64)
    index = np.full(n, MISSING_FILE_INDEX, np.int64)
    has_index = is_uuid & ~bare
    if has_index.any():
        index[has_index] = pc.cast(index_text.filter(pa.array(has_index)), pa.int64()).to_numpy()
    return is_uuid, words[:, 0], words[:, 1], index


def record_index_records(record_keys: pa.Array, partitions: pa.Array, file_ids: pa.Array,
                         instant_times: pa.Array, timezone: str = "UTC") -> pa.Table:
    """One ``record_index`` record per record key (``createRecordIndexUpdate``): the partition, the file id (a
    UUID file id as its two halves and its index, another raw) and the instant time as epoch milliseconds in
    the timeline's ``timezone`` (``UTC`` or ``LOCAL``)."""
    is_uuid, high, low, index = _uuid_bits(file_ids)
    index_info = pa.StructArray.from_arrays([
        partitions.cast(pa.string()),
        pa.array(np.where(is_uuid, high, -1)),
        pa.array(np.where(is_uuid, low, -1)),
        pa.array(np.where(is_uuid, index, MISSING_FILE_INDEX).astype(np.int32)),
        pc.if_else(pa.array(is_uuid), "", file_ids.cast(pa.string())),
        _instant_millis(instant_times, timezone),
        pa.array(np.where(is_uuid, UUID_FILE_ID, RAW_FILE_ID).astype(np.int32)),
    ], fields=list(_INDEX))
    return _records(record_keys.cast(pa.string()), RecordType.RECORD_INDEX, recordIndexMetadata=index_info)


def _uuid_text(high: np.ndarray, low: np.ndarray) -> pa.Array:
    n = len(high)
    raw = np.stack([high.astype(np.int64), low.astype(np.int64)], axis=1).astype(">i8").view(np.uint8)
    raw = raw.reshape(n, 16)
    hexes = np.empty((n, 32), np.uint8)
    hexes[:, 0::2] = _HEX[raw >> 4]
    hexes[:, 1::2] = _HEX[raw & 0x0F]
    text = np.full((n, 36), ord("-"), np.uint8)
    text[:, _UUID_HEX] = hexes
    offsets = np.arange(0, 36 * (n + 1), 36, dtype=np.int32)
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(text.tobytes())])


def record_locations(records: pa.Table, timezone: str = "UTC") -> pa.Table:
    """Where each ``record_index`` record puts its key (``getLocationFromRecordIndexInfo``): ``key``,
    ``partition``, ``file_id`` and ``instant_time`` (the epoch milliseconds back to ``yyyyMMddHHmmssSSS`` in the
    timeline's zone)."""
    info = records.column("recordIndexMetadata").combine_chunks()
    if info.null_count:
        raise CorruptFileError(f"{info.null_count} record_index records have no recordIndexMetadata")
    n = len(info)
    encoding = pc.fill_null(info.field("fileIdEncoding"), UUID_FILE_ID).to_numpy(zero_copy_only=False)
    high = pc.fill_null(info.field("fileIdHighBits"), 0).to_numpy(zero_copy_only=False)
    low = pc.fill_null(info.field("fileIdLowBits"), 0).to_numpy(zero_copy_only=False)
    index = pc.fill_null(info.field("fileIndex"), MISSING_FILE_INDEX)
    uuid = _uuid_text(high, low)
    numbered = pc.binary_join_element_wise(uuid, pc.cast(index, pa.string()), "-")
    from_uuid = pc.if_else(pc.equal(index, MISSING_FILE_INDEX), uuid, numbered)
    file_id = pc.if_else(pa.array(encoding == UUID_FILE_ID), from_uuid, info.field("fileId")) if n else uuid
    return pa.table({"key": records.column(KEY_FIELD).combine_chunks(), "partition": info.field("partitionName"),
                     "file_id": file_id, "instant_time": _instant_times(info.field("instantTime"), timezone)})

