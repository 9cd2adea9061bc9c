"""A merge-on-read slice's log decision (``merged_reader.LogDecision``), made once per query and kept on
local disk for the query's other read of the same slice.

The jvm-shim reads a slice with log changes in two Python scans (``spark.reader``): ``replaced`` (the base
rows that lose, which the shim filters out of Spark's scan of the base file) and ``rows`` (the log records
that win). Both need the same decision, and making it is most of their cost: the log blocks decoded, then the
base file's key and ordering columns decoded and matched against the log keys. The shim runs the ``replaced``
scan first, while it plans the query (``HoodieReads.lessReplaced``), so that scan makes the decision and
stores it here; the ``rows`` scan loads it and only decodes its log blocks
for the columns it asks (the decision names the winners by position among them). A miss (a task on another
host, an evicted or unreadable entry) makes the decision again: never a wrong row, only the old cost.

Why this design: one Python scan yielding both kinds would need Spark to run it once for two consumers, but
Spark reuses an exchange only for another identical exchange (``ReuseExchangeAndSubquery``), and the ``rows``
side is no exchange but a branch of the union; caching that scan (``InMemoryRelation``) would keep every log
row of the query in the JVM's memory. The decision, unlike the log rows, does not depend on the columns the
query asks (which Spark prunes after the shim planned both scans), and is small (8 bytes per replaced base
row and per winning log record), so one entry serves any ``rows`` scan of the slice. Measured on the 1M-row
seed table of ``benchmarks/mor_snapshot.py`` (27 slices with logs), in one process: the two scans of a
query took 0.23 CPU s before (the decision made twice), 0.14 after; what remains is the ``replaced`` scan's
decision, two thirds of it decoding the base files' key and ordering columns.

An entry is keyed by everything the decision depends on: the slice's base file (URI and size), its log
files (names and sizes, in order: a later commit appending a block makes a longer file, a new key), the
visible instants (a digest: a later commit or a rollback makes another key) and the ordering field. Entries
live in the host's scratch (``storage.host_scratch``: private, written whole or not at all, least recently used ones
evicted beyond ``BUDGET``), and record their key, checked on load. An entry is written once: a later query
of the same slice state finds it whole and leaves it (its ``replaced`` scan still decides, and the two
decisions are the same).
"""

from __future__ import annotations

import hashlib
import json
import logging
import struct
from collections.abc import Collection

import numpy as np

from hoodie_datasource.file_group.merged_reader import LogDecision, MergeRule
from hoodie_datasource.storage import host_scratch
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.file_group import FileSlice

logger = logging.getLogger(__name__)

BUDGET = 256 << 20  # the decisions of about 16 million replaced rows and winning log records
EVICT_ONE_IN = 32  # entries are small (a slice's decision) and many: the directory is listed after 1 write in 32
_NAME = "hoodie-log-changes-cache"
_MAGIC = b"HOODIELC"
_VERSION = 1
_HEADER = struct.Struct("<8sIIqq")  # magic, format version, key length, replaced count, winners count
_POSITION = np.dtype("<i8")


def instants_digest(visible_instants: Collection[str]) -> str:
    """A digest of a read's visible instants (computed once per read, not per slice)."""
    return hashlib.sha256("\n".join(sorted(visible_instants)).encode()).hexdigest()


def slice_key(storage: Storage, file_slice: FileSlice, instants: str, rule: MergeRule) -> str:
    """Everything a slice's decision depends on; ``instants`` is ``instants_digest`` of the read's instants."""
    base = file_slice.base_file
    return json.dumps({
        "group": storage.uri_of(file_slice.relative_path(file_slice.file_id)),
        "base": None if base is None else [base.name, base.size],
        "logs": [[log.name, log.size] for log in file_slice.log_files],
        "instants": instants,
        "ordering": rule.ordering_field,
        "stored_may_win": rule.stored_may_win,
    }, separators=(",", ":"))


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:40]


def load(key: str) -> LogDecision | None:
    """The decision stored under ``key``, None when there is none (or it is unreadable)."""
    path = host_scratch.entry_path(_NAME, _digest(key))
    if path is None:
        return None
    try:
        data = host_scratch.read(path)
        magic, version, length, replaced, winners = _HEADER.unpack_from(data)
        if magic != _MAGIC or version != _VERSION:
            raise ValueError("not an entry of this format")
        start = _HEADER.size + length
        if len(data) != start + (replaced + winners) * _POSITION.itemsize:
            raise ValueError("truncated entry")
        if data[_HEADER.size:start].decode() != key:
            return None  # a hash collision: not this slice's entry
        positions = np.frombuffer(data, _POSITION, replaced + winners, start).astype(np.int64)
        host_scratch.touch(path)
        return LogDecision(positions[:replaced], positions[replaced:])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, UnicodeDecodeError, struct.error) as exc:
        logger.warning("Ignoring unreadable log changes cache entry %s: %s", path, exc)
        return None


def store(key: str, decision: LogDecision) -> None:
    """Keep ``decision`` under ``key`` (best effort: a failure only logs). An entry already there and whole is
    the same decision (its key names everything the decision depends on) and is kept as it is: replacing an
    existing file by rename makes ext4 flush the new one (measured: 0.3 ms a slice idle, 2 ms under load, of wall time)."""
    if load(key) is not None:
        return
    encoded = key.encode()
    header = _HEADER.pack(_MAGIC, _VERSION, len(encoded), len(decision.replaced), len(decision.winners))
    chunks = [header, encoded, decision.replaced.astype(_POSITION).tobytes(), decision.winners.astype(_POSITION).tobytes()]
    host_scratch.write(_NAME, _digest(key), chunks, BUDGET, EVICT_ONE_IN)
