"""A whole table checked against its timeline: what ``hoodie validate`` reports.

Five kinds of problem, each a ``TableProblem``:

- ``missing_file``: a file a completed write of the active timeline names in its write stats is not in storage,
  and no completed clean deleted it (``HoodieCleanMetadata.deletePathPatterns``).
- ``orphan_file``: a data file in storage that no completed write, rollback or restore names and
  that no pending instant may be writing: a base file of an instant not on the timeline, or of a completed one
  whose write stats do not list it (a stray task attempt's); the log files a delta commit's rollback kept are
  named by the rollback. While a write is pending, a log file no commit names
  may be its own (a version-6 log file carries its slice's base instant, not its writer's): not reported. A file
  older than the timeline whose archive is not read here cannot be judged: not reported either.
- ``leftover_markers``: a marker folder (``.hoodie/.temp/<instant>``) of an instant that is not pending: Hudi
  deletes an instant's markers once it completes (``WriteMarkers.quietDeleteMarkerDir``) or is rolled back.
- ``unreadable_base_file`` and ``corrupt_log_block``: a base file whose parquet footer does not read; a log
  file with a damaged region between blocks, or a block whose content does not decode as its type says.
- ``metadata_mismatch``: the metadata table (when it has a ready ``files`` partition) lists a file storage does
  not hold, or not with its size, or misses one storage holds (``validate_metadata_table_files``' comparison),
  the files of pending work aside.

Storage is listed once; every data file is read once (a base file's footer only), eight at a time; ``progress`` is
told of each.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import Enum

import pyarrow as pa

from hoodie_datasource.config.table_config import METAFOLDER
from hoodie_datasource.errors import HoodieError
from hoodie_datasource.log.cdc_block import decode_cdc_block
from hoodie_datasource.log.command_block import decode_command_block
from hoodie_datasource.log.data_block import decode_data_block
from hoodie_datasource.log.delete_block import decode_delete_block
from hoodie_datasource.log.log_format import BlockType, LogBlock, read_log_file
from hoodie_datasource.metadata.file_changes import of_clean, of_commit
from hoodie_datasource.metadata.reader import MetadataTableReader
from hoodie_datasource.metadata.validation import compare_file_listings, storage_listing
from hoodie_datasource.storage.parquet import read_parquet_metadata
from hoodie_datasource.storage.storage import join
from hoodie_datasource.table.file_names import BaseFileName, LogFileName, data_file_instant
from hoodie_datasource.table.markers import marker_dir
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.instant import CLEAN, RESTORE, ROLLBACK
from hoodie_datasource.timeline.timeline import Timeline

logger = logging.getLogger(__name__)



class ProblemKind(Enum):
    """The kinds of problem, in the order ``validate_table`` reports them; the value is the kind's name in
    ``hoodie validate``'s output."""

    MISSING_FILE = "missing_file"
    ORPHAN_FILE = "orphan_file"
    LEFTOVER_MARKERS = "leftover_markers"
    UNREADABLE_BASE_FILE = "unreadable_base_file"
    CORRUPT_LOG_BLOCK = "corrupt_log_block"
    METADATA_MISMATCH = "metadata_mismatch"


Progress = Callable[[int, int], None]
"""Told ``(files checked, files to check)`` as the data files are read."""

_DECODERS: dict[BlockType, Callable[[LogBlock], object]] = {
    BlockType.AVRO_DATA: decode_data_block, BlockType.PARQUET_DATA: decode_data_block,
    BlockType.DELETE: decode_delete_block, BlockType.COMMAND: decode_command_block, BlockType.CDC_DATA: decode_cdc_block,
}
_READERS = 8  # files read at once: on an object store each read is a round trip or two
_DAMAGE = (HoodieError, ValueError, KeyError, EOFError, OSError, pa.ArrowException)


@dataclass(frozen=True)
class TableProblem:
    """One problem: its kind, the path it is about (relative to the table) and what is wrong."""

    kind: ProblemKind
    path: str
    detail: str


@dataclass(frozen=True)
class _Referenced:
    """What the timeline says about the data files: those the completed writes name (per partition), whether
    each write is on the active timeline, the files completed cleans deleted, and the instants whose write stats
    could not be read."""

    written: frozenset[tuple[str, str]]  # (partition, name)
    active: dict[tuple[str, str], str]  # of writes on the active timeline: (partition, name) -> the write
    cleaned: frozenset[tuple[str, str]]
    unread: frozenset[str]


def _referenced(timeline: Timeline) -> _Referenced:
    written: set[tuple[str, str]] = set()
    active: dict[tuple[str, str], str] = {}
    unread = set()
    for instant in timeline.completed():
        try:
            metadata = timeline.read_metadata(instant)
        except HoodieError as exc:
            logger.warning("Write stats of %s cannot be read (%s): its files are not judged", instant.timestamp, exc)
            unread.add(instant.timestamp)
            continue
        for partition, files in of_commit(metadata.get("partitionToWriteStats") or {}).added_files.items():
            for name in files:
                written.add((partition, name))
                if instant.timestamp not in timeline.archived:
                    active[(partition, name)] = instant.timestamp
    # a delta commit's rollback keeps the log files it wrote and appends a command block (Hudi's
    # HoodieRollbackPartitionMetadata: rollbackLogFiles, logFilesFromFailedCommit); a restore holds the rollback
    # metadata of each instant it undid (HoodieRestoreMetadata.hoodieRestoreMetadata)
    rollbacks = [timeline.read_metadata(r) for r in timeline.completed((ROLLBACK,))]
    rollbacks += [m for r in timeline.completed((RESTORE,))
                  for ms in (timeline.read_metadata(r).get("hoodieRestoreMetadata") or {}).values() for m in ms or ()]
    for rollback in rollbacks:
        for partition, meta in (rollback.get("partitionMetadata") or {}).items():
            for path in (*(meta.get("rollbackLogFiles") or {}), *(meta.get("logFilesFromFailedCommit") or {})):
                written.add((partition, path.rsplit("/", 1)[-1]))
    cleaned = {(partition, name) for clean in timeline.completed((CLEAN,))
               for partition, names in of_clean(timeline.read_metadata(clean)).deleted_files.items() for name in names}
    return _Referenced(frozenset(written), active, frozenset(cleaned), frozenset(unread))


def _in_flight(pending: frozenset[str], name: str) -> bool:
    """Whether ``name`` may be a file of pending work (``pending``: the pending instants' times): a base file of a
    pending instant, or any log file while some instant is pending."""
    if not pending:
        return False
    return LogFileName.parse(name) is not None or LogFileName.parse_cdc(name) is not None or \
        data_file_instant(name) in pending


def _unjudged(timeline: Timeline, refs: _Referenced, name: str) -> bool:
    """Whether the timeline cannot tell about ``name``: its instant's write stats did not read, or it predates a
    timeline whose archive is not read here."""
    instant = data_file_instant(name) or ""
    return instant in refs.unread or (timeline.unread_archive and instant < (timeline.start or ""))


def _orphan_detail(timeline: Timeline, name: str) -> str:
    instant = data_file_instant(name)
    if instant is None:
        return "not a Hudi data file name: no commit writes it"
    found = timeline.find(instant)
    if found is None:
        return f"of instant {instant}, which is not on the timeline"
    return f"of instant {instant} ({found.action}), whose write stats do not list it"


def _read_problem(table: Table, partition: str, name: str, size: int) -> TableProblem | None:
    """The file read as its kind says: a base file's footer, every block of a log file."""
    rel, storage = join(partition, name), table.storage
    if LogFileName.parse(name) or LogFileName.parse_cdc(name):
        try:
            contents = read_log_file(storage, rel)
        except _DAMAGE as exc:
            return TableProblem(ProblemKind.CORRUPT_LOG_BLOCK, rel, f"cannot be read: {exc}")
        if contents.corrupt_blocks:
            ranges = ", ".join(f"bytes {start}-{end}" for start, end in contents.corrupt_ranges)
            return TableProblem(ProblemKind.CORRUPT_LOG_BLOCK, rel, f"{contents.corrupt_blocks} damaged region(s): {ranges}")
        for block in contents.blocks:
            decode = _DECODERS.get(block.block_type)
            try:
                if decode is not None:
                    decode(block)
            except _DAMAGE as exc:
                return TableProblem(ProblemKind.CORRUPT_LOG_BLOCK, rel,
                                    f"{block.block_type.name} block at offset {block.offset} does not decode: {exc}")
        return None
    parsed = BaseFileName.parse(name)
    if parsed is not None and parsed.extension == "parquet":
        try:
            read_parquet_metadata(storage, rel, size)
        except _DAMAGE as exc:
            return TableProblem(ProblemKind.UNREADABLE_BASE_FILE, rel, f"its parquet footer does not read: {exc}")
    return None


def _marker_problems(table: Table) -> list[TableProblem]:
    temp = join(METAFOLDER, ".temp")
    problems = []
    for instant_time in sorted(table.storage.list_dir(temp).dirs):
        instant = table.timeline.find(instant_time)
        if instant is None or instant.is_completed:
            state = "not on the timeline" if instant is None else f"completed ({instant.action})"
            problems.append(TableProblem(ProblemKind.LEFTOVER_MARKERS, marker_dir(instant_time),
                                         f"markers of instant {instant_time}, which is {state}"))
    return problems


def _metadata_problems(table: Table, in_storage: dict[str, dict[str, int]], pending: frozenset[str]
                       ) -> list[TableProblem]:
    reader = MetadataTableReader.listing_of(table)
    if reader is None:
        return []
    problems = []
    for row in compare_file_listings(table, reader, in_storage=in_storage):
        if row.in_storage and not row.in_metadata:
            if _in_flight(pending, row.file_name):
                continue
            detail = "in storage, not listed by the metadata table"
        elif not row.in_storage:
            detail = "listed by the metadata table, not in storage"
        else:
            detail = f"{row.storage_size} bytes in storage, {row.metadata_size} in the metadata table"
        problems.append(TableProblem(ProblemKind.METADATA_MISMATCH, join(row.partition, row.file_name), detail))
    return problems


def validate_table(table: Table, progress: Progress | None = None) -> list[TableProblem]:
    """Every problem of ``table`` (as loaded), in the order of ``ProblemKind``, then by path."""
    timeline = table.timeline
    in_storage = storage_listing(table)
    stored = {(p, name) for p, files in in_storage.items() for name in files}
    refs = _referenced(timeline)
    pending = frozenset(i.timestamp for i in timeline.pending())
    problems = [TableProblem(ProblemKind.MISSING_FILE, join(*key), f"written by completed instant {instant}, not in storage")
                for key, instant in refs.active.items() if key not in stored and key not in refs.cleaned]
    for partition, name in sorted(stored - refs.written):
        if not _in_flight(pending, name) and not _unjudged(timeline, refs, name):
            problems.append(TableProblem(ProblemKind.ORPHAN_FILE, join(partition, name), _orphan_detail(timeline, name)))
    problems += _marker_problems(table)
    files = sorted((p, name, size) for p, listed in in_storage.items() for name, size in listed.items())
    with ThreadPoolExecutor(_READERS, thread_name_prefix="hoodie-validate") as readers:
        for done, problem in enumerate(readers.map(lambda f: _read_problem(table, *f), files), 1):
            if problem is not None:
                problems.append(problem)
            if progress is not None:
                progress(done, len(files))
    problems += _metadata_problems(table, in_storage, pending)
    order = list(ProblemKind)
    return sorted(problems, key=lambda p: (order.index(p.kind), p.path))
