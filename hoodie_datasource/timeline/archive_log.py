"""The archived timeline of timeline layout 1, in Apache Hudi's own format: log files in the archive folder
(``hoodie.archivelog.folder``, ``archived`` by default) named ``.commits_.archive.<version>_1-0-1``, each
holding AVRO_DATA blocks of ``HoodieArchivedMetaEntry`` records, one record per instant file that left the
active timeline (requested, inflight and completed alike).

Why Hudi's format: Java Hudi's archived timeline (``HoodieArchivedTimeline`` in 0.15, ``ArchivedTimelineV1``
in 1.x) reads only these files, so instants archived any other way do not exist for it (``CALL
show_archived_commits`` lists nothing). Each
archival writes a new version whole, as Hudi's log writer does where the storage cannot append (its
``TimelineArchiverV1`` opens ``.commits`` with extension ``.archive``, the empty base instant and the
default write token).

A record (J: ``MetadataConversionUtils.createMetaWrapper``) carries ``commitTime``, ``actionType`` (the
action in the file's name: a compaction's completed file is a ``commit``), ``actionState``,
``stateTransitionTime`` (the file's modification time, as Hudi 0.15 gives it) and the file's content in
the field of its kind: the Avro form of commit metadata for commits and delta commits (any state), a
replacecommit's completed and inflight metadata and a clustering's plan (requested), a compaction's plan
(requested), a clean's plan (requested, inflight) and metadata (completed), a rollback's metadata (completed).
An empty file has no content. Only these actions are archived (Hudi's converter refuses the others).

Archive files never change once written, so what a file decodes to is kept per process, by its URI and size.
"""

from __future__ import annotations

import json
import logging
import re
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from hoodie_datasource.errors import CorruptFileError, UnsupportedTableError
from hoodie_datasource.log.avro_codec import decode_avro_values, encode_avro_values
from hoodie_datasource.log.log_format import BlockType, HeaderKey, encode_block, read_log_file, write_log_file
from hoodie_datasource.storage.storage import Storage, join
from hoodie_datasource.timeline.avro_metadata import (
    CLEAN_METADATA,
    CLEANER_PLAN,
    COMMIT_METADATA,
    COMPACTION_PLAN,
    NAMESPACE,
    REPLACE_COMMIT_METADATA,
    REQUESTED_REPLACE_METADATA,
    ROLLBACK_METADATA,
)
from hoodie_datasource.timeline.instant import (
    CLEAN,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    ROLLBACK,
    Instant,
    State,
)
from hoodie_datasource.timeline.instant_time import format_instant

logger = logging.getLogger(__name__)

ARCHIVE_PREFIX = ".commits_.archive."
ARCHIVE_FILE = re.compile(r"^\.commits_\.archive\.(\d+)_[0-9-]+$")
WRITE_TOKEN = "1-0-1"  # HoodieLogFormat.DEFAULT_WRITE_TOKEN
ARCHIVED_ACTIONS = frozenset({COMMIT, DELTA_COMMIT, REPLACE_COMMIT, COMPACTION, LOG_COMPACTION, CLEAN, ROLLBACK})
_CACHE_FILES = 1024


def _opt(avro_type: Any) -> list[Any]:
    return ["null", avro_type]


def _java_strings(avro: Any) -> Any:
    """``avro`` with every string (and map key) marked ``"avro.java.string": "String"``, as in Hudi's generated
    schemas: Hudi 1.x reads archived records with the block's own schema and casts their strings to
    ``java.lang.String`` (``ArchivedTimelineV1``), which an unmarked string is not (an Avro ``Utf8``)."""
    if avro == "string":
        return {"type": "string", "avro.java.string": "String"}
    if isinstance(avro, list):
        return [_java_strings(branch) for branch in avro]
    if not isinstance(avro, dict):
        return avro
    out = dict(avro)
    if avro.get("type") == "record":
        out["fields"] = [{**f, "type": _java_strings(f["type"])} for f in avro["fields"]]
    elif avro.get("type") == "array":
        out["items"] = _java_strings(avro["items"])
    elif avro.get("type") == "map":
        out["values"] = _java_strings(avro["values"])
        out["avro.java.string"] = "String"
    return out


# Hudi's HoodieArchivedMetaEntry with the fields this library fills, in Hudi's order; Hudi's reader resolves
# the others to their null defaults
ARCHIVED_META_ENTRY = _java_strings({
    "type": "record", "name": "HoodieArchivedMetaEntry", "namespace": NAMESPACE,
    "fields": [
        {"name": "hoodieCommitMetadata", "type": _opt(COMMIT_METADATA), "default": None},
        {"name": "hoodieCleanMetadata", "type": _opt(CLEAN_METADATA), "default": None},
        {"name": "hoodieRollbackMetadata", "type": _opt(ROLLBACK_METADATA), "default": None},
        {"name": "commitTime", "type": _opt("string"), "default": None},
        {"name": "actionType", "type": _opt("string"), "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "hoodieCompactionPlan", "type": _opt(COMPACTION_PLAN), "default": None},
        {"name": "hoodieCleanerPlan", "type": _opt(CLEANER_PLAN), "default": None},
        {"name": "actionState", "type": _opt("string"), "default": None},
        {"name": "hoodieReplaceCommitMetadata", "type": _opt(REPLACE_COMMIT_METADATA), "default": None},
        {"name": "HoodieInflightReplaceMetadata", "type": _opt(f"{NAMESPACE}.HoodieCommitMetadata"),
         "default": None},
        {"name": "stateTransitionTime", "type": _opt("string"), "default": None},
        {"name": "hoodieRequestedReplaceMetadata", "type": _opt(REQUESTED_REPLACE_METADATA), "default": None},
    ],
})
_SCHEMA_TEXT = json.dumps(ARCHIVED_META_ENTRY, separators=(",", ":"))


@dataclass(frozen=True)
class ArchivedFile:
    """One instant file as the archive holds it: the instant in that file's state, and its decoded content
    (None for an empty file)."""

    instant: Instant
    content: dict[str, Any] | None


def is_archive_file(name: str) -> bool:
    return ARCHIVE_FILE.match(name) is not None


def _content_field(instant: Instant) -> str | None:
    """The entry field that holds an instant file's content (``createMetaWrapper``'s switch)."""
    action, state = instant.action, instant.state
    if action in (COMMIT, DELTA_COMMIT):
        return "hoodieCommitMetadata"
    if action == REPLACE_COMMIT:
        return {State.COMPLETED: "hoodieReplaceCommitMetadata", State.INFLIGHT: "HoodieInflightReplaceMetadata",
                State.REQUESTED: "hoodieRequestedReplaceMetadata"}[state]  # requested: a clustering's plan
    if action in (COMPACTION, LOG_COMPACTION):
        return "hoodieCompactionPlan" if state is State.REQUESTED else None
    if action == CLEAN:
        return "hoodieCleanMetadata" if state is State.COMPLETED else "hoodieCleanerPlan"
    if action == ROLLBACK:
        return "hoodieRollbackMetadata" if state is State.COMPLETED else None
    return None


def archive_entry(instant: Instant, content: dict[str, Any] | None, modified_ns: int) -> dict[str, Any]:
    """The HoodieArchivedMetaEntry of one instant file: ``instant`` in that file's state, its decoded
    ``content`` (JSON commit metadata or an Avro plan/metadata record; None when empty), its modification time."""
    if instant.action not in ARCHIVED_ACTIONS:
        raise ValueError(f"{instant.action} instants are not archived")
    entry: dict[str, Any] = {
        "commitTime": instant.timestamp, "actionType": instant.action, "actionState": instant.state.name,
        "stateTransitionTime": format_instant_ns(modified_ns) if modified_ns else None, "version": 1,
    }
    where = _content_field(instant)
    if where is not None and content:
        entry[where] = content
    return entry


def format_instant_ns(modified_ns: int) -> str:
    return format_instant(datetime.fromtimestamp(modified_ns / 1e9, timezone.utc))


def _version(name: str) -> int:
    match = ARCHIVE_FILE.match(name)
    return int(match.group(1)) if match else 0


def write_archive_file(storage: Storage, folder: str, names: list[str], entries: list[dict[str, Any]]) -> str:
    """Write ``entries`` as the next version of the archive log in ``folder`` (which holds ``names``); its
    path. One AVRO_DATA block whose header has the schema only, as Hudi's archiver writes it."""
    version = max((_version(n) for n in names), default=0) + 1
    path = join(folder, f"{ARCHIVE_PREFIX}{version}_{WRITE_TOKEN}")
    block = encode_block(BlockType.AVRO_DATA, {HeaderKey.SCHEMA: _SCHEMA_TEXT},
                         encode_avro_values(entries, ARCHIVED_META_ENTRY))
    write_log_file(storage, path, [block])
    return path


_decoded: OrderedDict[tuple[str, int], tuple[tuple[ArchivedFile, ...], bool]] = OrderedDict()


def read_archive_file(storage: Storage, path: str, size: int) -> tuple[tuple[ArchivedFile, ...], bool]:
    """The instant files an archive log holds, and whether it was read whole (False when a block was damaged
    or not of the archive's kind: then instants may be missing)."""
    key = (storage.uri_of(path), size)
    if key in _decoded:
        _decoded.move_to_end(key)
        return _decoded[key]
    where = storage.uri_of(path)
    try:
        contents = read_log_file(storage, path)
    except (CorruptFileError, UnsupportedTableError) as exc:  # gone since the listing (Hudi merges archive files)
        logger.warning("Archive log %s cannot be read (%s): the instants it holds are not known", where, exc)
        return (), False
    whole = contents.corrupt_blocks == 0
    files = []
    for block in contents.blocks:
        if block.block_type != BlockType.AVRO_DATA or not block.schema:
            logger.warning("Archive log %s holds a %s block, not archived instants: skipped", where, block.block_type.name)
            whole = False
            continue
        try:
            entries = decode_avro_values(block.content, block.schema, block.where)
        except (CorruptFileError, UnsupportedTableError, ValueError) as exc:
            logger.warning("Archive log %s: a block does not decode (%s): skipped", where, exc)
            whole = False
            continue
        files.extend(filter(None, map(_archived_file, entries)))
    _decoded[key] = (tuple(files), whole)
    if len(_decoded) > _CACHE_FILES:
        _decoded.popitem(last=False)
    return _decoded[key]


def _archived_file(entry: dict[str, Any]) -> ArchivedFile | None:
    try:
        instant = Instant(entry["commitTime"], entry["actionType"], State[entry.get("actionState") or "COMPLETED"])
    except (KeyError, TypeError):
        return None
    where = _content_field(instant)
    return ArchivedFile(instant, entry.get(where) if where else None)
