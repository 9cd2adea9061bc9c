"""CDC queries (``hoodie.datasource.query.incremental.format=cdc``): every insert, update and delete
committed in (begin, end], as Hudi's Spark CDC relation returns them (``HoodieCDCRDD`` /
``CDCFileGroupIterator``): ``op`` (``i``/``u``/``d``), ``ts_ms`` (the commit's instant time), and
``before`` / ``after``, the record before and after the change as a JSON object of its data
columns (null for an insert's before and a delete's after).

Each file group's changes are read commit by commit (``read.cdc_splits``): from the CDC log files a
table with ``hoodie.table.cdc.enabled`` writes beside rewritten base files (``AS_IS``; in the modes
that log no after image, or no images at all, the missing images are looked up in the file group as
of that commit, and before it), and otherwise derived from the file group's records just before
and just after the commit: a new base file is all inserts, a merge-on-read log file's records are
matched against the slice it was written on. So a table written without CDC logs answers too, but
slower: each commit that touched a file group reads the group's whole slice, where a CDC log holds
only the changed records.

Images: the JSON of the row without the ``_hoodie_*`` meta columns, keys in the table's column order,
as Avro's ``GenericData.toString`` writes the images of Hudi's CDC logs (``{"id": 1, "v": "a"}``);
timestamps are microseconds and dates days since the epoch (their Avro encodings), decimals strings.
Hudi's own inferred images (new base files, log files) also carry the meta columns; these never do,
so a table answers the same with and without CDC logs. A merge-on-read update whose record did not
change is left out (as Hudi does for log files); a copy-on-write rewrite reports every record it
wrote anew as an update.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.errors import UnsupportedTableError
from hoodie_datasource.file_group.merged_reader import MergeRule, read_merged_slice
from hoodie_datasource.log.cdc_block import (
    AFTER,
    BEFORE,
    DATA_BEFORE,
    DATA_BEFORE_AFTER,
    DELETE,
    INSERT,
    OP,
    RECORD_KEY,
    UPDATE,
    decode_cdc_block,
)
from hoodie_datasource.log.log_format import BlockType, read_log_blocks
from hoodie_datasource.read.cdc_splits import (
    AS_IS,
    BASE_FILE_DELETE,
    BASE_FILE_INSERT,
    LOG_FILE,
    REPLACE,
    CDCSplit,
    FileGroupKey,
    extract_cdc_splits,
)
from hoodie_datasource.read.hollow_commits import readable_end
from hoodie_datasource.read.read_window import check_cdc_range
from hoodie_datasource.storage.parquet import read_parquet
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.meta_columns import COMMIT_TIME_COLUMN, META_COLUMNS, RECORD_KEY_COLUMN, conform
from hoodie_datasource.table.table import Table

CDC_SCHEMA = pa.schema([pa.field(OP, pa.string()), pa.field("ts_ms", pa.string()),
                        pa.field(BEFORE, pa.string()), pa.field(AFTER, pa.string())])
"""Hudi's Spark CDC schema (``HoodieCDCFileIndex.FULL_CDC_SPARK_SCHEMA``)."""

Change = tuple[str, str | None, str | None]  # op, before JSON, after JSON


def _json_value(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        epoch = dt.datetime(1970, 1, 1, tzinfo=value.tzinfo)
        return (value - epoch) // dt.timedelta(microseconds=1)
    if isinstance(value, dt.date):
        return (value - dt.date(1970, 1, 1)).days
    if isinstance(value, dt.time):
        return (value.hour * 3600 + value.minute * 60 + value.second) * 1_000_000 + value.microsecond
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"{type(value).__name__} has no JSON form")


_ENCODER = json.JSONEncoder(default=_json_value, ensure_ascii=False)  # one encoder: json.dumps makes one per call


def image_json(row: dict[str, Any] | None) -> str | None:
    """A CDC image: a row's data columns as a JSON object."""
    return None if row is None else _ENCODER.encode(row)


def _images(table: pa.Table) -> list[str | None]:
    """The CDC image of every row of ``table`` (its meta columns left out)."""
    data = table.select([name for name in table.column_names if name not in META_COLUMNS])
    return [image_json(row) for row in data.to_pylist()]


class _FileGroupStates:
    """The records of a file group as of an instant (its merged slice), kept for the next split."""

    def __init__(self, table: Table, partitions: list[str]):
        self.table = table
        self.schema = table.schema
        self.view = table.file_system_view(partitions)
        self.writes = [i.timestamp for i in table.timeline.completed()]
        self._key: FileGroupKey | None = None
        self._cached: dict[str, pa.Table] = {}  # the current file group's states, by instant

    def before(self, key: FileGroupKey, instant: str) -> pa.Table:
        """The file group as the last write before ``instant`` left it."""
        earlier = [t for t in self.writes if t < instant]
        return self.as_of(key, earlier[-1]) if earlier else self.schema.empty_table()

    def as_of(self, key: FileGroupKey, instant: str) -> pa.Table:
        if key != self._key:
            self._key, self._cached = key, {}
        if instant in self._cached:
            return self._cached[instant]
        slices = self.view.latest_file_slices(as_of=instant, partitions=[key[0]], file_ids={key})
        visible = frozenset(t for t in self.writes if t <= instant)
        table = (read_merged_slice(self.table.storage, slices[0], self.schema, visible, MergeRule.of(self.table.config))
                 if slices else self.schema.empty_table())
        self._cached[instant] = table
        return table


def _images_by_key(table: pa.Table, keys: pa.Array | pa.ChunkedArray) -> dict[str, str | None]:
    """The images of ``table``'s rows with these record keys, by key."""
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    rows = table.filter(pc.is_in(table.column(RECORD_KEY_COLUMN), value_set=keys))
    return dict(zip(rows.column(RECORD_KEY_COLUMN).to_pylist(), _images(rows)))


def _derived(before: pa.Table, after: pa.Table, instant: str, skip_unchanged: bool) -> Iterator[Change]:
    """The changes between a file group's records before and after ``instant``: records ``instant``
    wrote are inserts or updates, records gone are deletes."""
    after_keys = after.column(RECORD_KEY_COLUMN).combine_chunks()
    gone = before.filter(pc.invert(pc.is_in(before.column(RECORD_KEY_COLUMN), value_set=after_keys)))
    for image in _images(gone):
        yield DELETE, image, None
    written = after.filter(pc.equal(after.column(COMMIT_TIME_COLUMN), instant))
    if not written.num_rows:
        return
    previous = _images_by_key(before, written.column(RECORD_KEY_COLUMN))
    for record_key, image in zip(written.column(RECORD_KEY_COLUMN).to_pylist(), _images(written)):
        old = previous.get(record_key)
        if old is None:
            yield INSERT, None, image
        elif not (skip_unchanged and old == image):
            yield UPDATE, old, image


def _logged(storage: Storage, split: CDCSplit, mode: str, states: _FileGroupStates,
            key: FileGroupKey) -> Iterator[Change]:
    """AS_IS: the changes in the split's CDC log files, completed from the file group where the mode
    logs no images (``OP_KEY_ONLY``) or no after image (``DATA_BEFORE``)."""
    records = [decode_cdc_block(block) for rel in split.cdc_files for block in read_log_blocks(storage, rel)
               if block.block_type == BlockType.CDC_DATA]
    if not records:
        return
    logged = pa.concat_tables(records, promote_options="permissive")
    ops = logged.column(OP).to_pylist()
    if mode == DATA_BEFORE_AFTER:
        befores = [image_json(row) for row in logged.column(BEFORE).to_pylist()]
        afters = [image_json(row) for row in logged.column(AFTER).to_pylist()]
        yield from zip(ops, befores, afters)
        return
    keys = logged.column(RECORD_KEY)
    after = _images_by_key(states.as_of(key, split.instant), keys)
    if mode == DATA_BEFORE:
        befores = [image_json(row) for row in logged.column(BEFORE).to_pylist()]
    else:
        before = _images_by_key(states.before(key, split.instant), keys)
        befores = [before.get(k) for k in keys.to_pylist()]
    for op, record_key, old in zip(ops, keys.to_pylist(), befores):
        yield op, old if op != INSERT else None, after.get(record_key) if op != DELETE else None


def _changes(storage: Storage, split: CDCSplit, mode: str, states: _FileGroupStates,
             key: FileGroupKey) -> Iterator[Change]:
    if split.case == AS_IS:
        yield from _logged(storage, split, mode, states, key)
    elif split.case == BASE_FILE_INSERT:
        for image in _images(conform(read_parquet(storage, split.path or ""), states.schema)):
            yield INSERT, None, image
    elif split.case in (BASE_FILE_DELETE, REPLACE):
        for image in _images(states.before(key, split.instant)):
            yield DELETE, image, None
    else:  # LOG_FILE, BASE_FILE_REWRITE
        yield from _derived(states.before(key, split.instant), states.as_of(key, split.instant), split.instant,
                            skip_unchanged=split.case == LOG_FILE)


@dataclass(frozen=True)
class CDCPlan:
    """The file groups a CDC query reads and their splits (picklable: Spark tasks read groups of it)."""

    table: Table
    end: str  # the range's end (inclusive): the newest write the query shows
    groups: tuple[tuple[FileGroupKey, tuple[CDCSplit, ...]], ...]


def plan_cdc(table: Table, cfg: ReadConfig) -> CDCPlan:
    """The splits of the CDC query ``cfg`` (an incremental read, format ``cdc``) of ``table``."""
    if not table.config.populate_meta_fields:
        raise UnsupportedTableError(
            "CDC queries need the record key and commit time meta columns, which this table does not store "
            "(hoodie.populate.meta.fields=false); use an incremental query with the default format")
    timeline = table.timeline
    latest = timeline.last_completed_write()
    begin = cfg.begin_instant or "0"
    end = readable_end(timeline, cfg.hollow_commits, begin, cfg.end_instant or (latest.timestamp if latest else begin))
    splits = extract_cdc_splits(timeline, begin, end)
    if splits:  # the file versions before each change are read: the cleaner may have removed some
        writes = [i.timestamp for i in timeline.completed()]
        needs = {key: {s.instant for s in found} | set([w for w in writes if w < found[0].instant][-1:])
                 for key, found in splits.items()}
        view = table.file_system_view(sorted({p for p, _ in splits}))
        check_cdc_range(timeline, view, begin, end, needs)
    return CDCPlan(table, end, tuple((key, tuple(found)) for key, found in splits.items()))


def read_cdc_groups(plan: CDCPlan, groups: Sequence[tuple[FileGroupKey, tuple[CDCSplit, ...]]]) -> pa.Table:
    """The changes of ``groups`` (some of ``plan.groups``), file group by file group, commit by commit."""
    states = _FileGroupStates(plan.table, sorted({p for (p, _), _ in groups}))
    mode = plan.table.config.cdc_logging_mode
    columns: list[list[str | None]] = [[], [], [], []]
    for key, group_splits in groups:
        for split in group_splits:
            for op, before, after in _changes(plan.table.storage, split, mode, states, key):
                for column, value in zip(columns, (op, split.instant, before, after)):
                    column.append(value)
    return pa.Table.from_arrays([pa.array(c, pa.string()) for c in columns], schema=CDC_SCHEMA)


def read_cdc(table: Table, cfg: ReadConfig) -> pa.Table:
    """The CDC query ``cfg`` of ``table`` as one table of ``CDC_SCHEMA``."""
    plan = plan_cdc(table, cfg)
    return read_cdc_groups(plan, plan.groups)
