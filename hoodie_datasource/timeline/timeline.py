"""Loading the active timeline and asking it questions.

A ``Timeline`` is an immutable, sorted list of instants, one per instant time, each in its latest
state. A savepoint is the one action Apache Hudi files under the time of another instant (the commit it
keeps, ``<t>.savepoint`` beside ``<t>.commit``): savepoints are kept apart, in ``savepoints``. Queries
return plain lists; nothing here writes (see ``timeline.transitions``). It holds the storage and the table
config only to read its instant files when asked: the table (``table.table.Table``) is what carries them.

On an object store every listing and every instant file read is a request, so a load lists the timeline
folder once (the archive folder only when that listing shows it), and a ``Timeline`` decodes each
instant file at most once (its instants' files never change once written): an operation that loads the
timeline once and passes it down reads each instant file once, however many questions it asks.

In timeline layout 1 the timeline holds the archived instants too: Hudi's archive log
(``timeline.archive_log``, whoever wrote it; each file decoded once per process) and plain instant files
that earlier versions of this library moved to the archive folder. Layout 2's archived timeline (Hudi 1.x's
LSM history) is not read.
"""

from __future__ import annotations

import io
import json
import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import fastavro

from hoodie_datasource.config.table_config import METADATA_FOLDER, METAFOLDER, TableConfig
from hoodie_datasource.errors import CorruptFileError, TimelineError
from hoodie_datasource.storage.storage import Listing, Storage, join
from hoodie_datasource.timeline.archive_log import ArchivedFile, is_archive_file, read_archive_file
from hoodie_datasource.timeline.instant import (
    CLUSTERING,
    COMPACTION,
    REPLACE_COMMIT,
    SAVEPOINT,
    WRITE_ACTIONS,
    Instant,
    State,
)

CLUSTER_OPERATION = "CLUSTER"  # WriteOperationType.CLUSTER, as a clustering's plan and commit name it
_STATE_RANK = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}
AVRO_MAGIC = b"Obj\x01"
HUDI_HISTORY_FOLDER = "history"  # layout 2: Hudi's LSM archived timeline (hoodie.timeline.history.path)
_STARTS_TIMELINE = WRITE_ACTIONS | {COMPACTION, CLUSTERING}


def timeline_dir(config: TableConfig) -> str:
    """The timeline's folder relative to the table: ``.hoodie`` (layout 1) or ``.hoodie/timeline``."""
    return join(METAFOLDER, config.timeline_dir) if config.timeline_dir else METAFOLDER


def instant_path(config: TableConfig, instant: Instant) -> str:
    """The path, relative to the table, of an instant file on the active timeline."""
    return join(timeline_dir(config), instant.file_name(config.timeline_layout_version))


def _holds_anything(listing: Listing) -> bool:
    return bool(listing.files or listing.dirs)


def decode_instant_content(content: bytes, where: str) -> dict[str, Any]:
    """Commit-like metadata: JSON (layout 1) or one Avro record in a container (layout 2)."""
    if not content.strip():
        return {}
    if content.startswith(AVRO_MAGIC):
        try:
            records = list(fastavro.reader(io.BytesIO(content)))
        except Exception as exc:  # fastavro raises several unrelated types on bad input
            raise CorruptFileError(f"Cannot read Avro instant file {where}: {exc}") from exc
        return records[0] if records else {}
    try:
        return json.loads(content)
    except json.JSONDecodeError as exc:
        raise CorruptFileError(f"Cannot parse instant file {where} as JSON: {exc}") from exc


@dataclass(frozen=True)
class Timeline:
    # where its instant files are and how they are laid out, to read them when asked (not what the timeline says)
    _storage: Storage = field(compare=False, repr=False)
    _config: TableConfig = field(compare=False, repr=False)
    instants: tuple[Instant, ...] = ()
    # every timeline file seen per instant time, to tell compaction commits apart
    actions_seen: tuple[tuple[str, frozenset[str]], ...] = ()

    archived: frozenset[str] = frozenset()  # instant times of the archived timeline (not on the active one)
    # instants were archived where this library does not read them (layout 2's history, a damaged archive log)
    unread_archive: bool = False
    metadata_folder: bool = False  # the listing of .hoodie shows Apache Hudi's metadata table folder
    savepoints: tuple[Instant, ...] = ()  # the completed savepoints, oldest first
    # instant file path -> decoded content, filled by reads (not part of the timeline's identity)
    _decoded: dict[str, dict[str, Any]] = field(default_factory=dict, compare=False, repr=False)

    @staticmethod
    def load(storage: Storage, config: TableConfig) -> Timeline:
        """The active timeline plus, in layout 1, the archived one."""
        directory = timeline_dir(config)
        latest: dict[str, Instant] = {}
        seen: dict[str, set[str]] = {}
        listing = storage.list_dir(directory)
        archived_files: list[ArchivedFile] = []
        unread_archive = False
        if config.timeline_layout_version < 2:
            archive = join(METAFOLDER, config.archive_folder)
            # object stores have no empty folders: an archive folder absent from the listing holds nothing
            if posixpath.relpath(archive, directory).split("/", 1)[0] in listing.dirs:
                for info in storage.list_dir(archive).files:
                    if is_archive_file(info.name):
                        files, whole = read_archive_file(storage, join(archive, info.name), info.size)
                        archived_files += files
                        unread_archive |= not whole
                    elif (instant := Instant.parse(info.name)) is not None:
                        archived_files.append(ArchivedFile(instant, None))
        else:
            unread_archive = HUDI_HISTORY_FOLDER in listing.dirs and _holds_anything(
                storage.list_dir(join(directory, HUDI_HISTORY_FOLDER)))
        active = [i for i in map(Instant.parse, (f.name for f in listing.files)) if i is not None]
        savepoints: list[Instant] = []
        for instant in active + [f.instant for f in archived_files]:
            if instant.action == SAVEPOINT:
                # not an instant of its own time: it would hide the commit it savepoints
                if instant.is_completed:
                    savepoints.append(instant)
                continue
            seen.setdefault(instant.timestamp, set()).add(instant.action)
            current = latest.get(instant.timestamp)
            if current is None or _STATE_RANK[instant.state] > _STATE_RANK[current.state]:
                latest[instant.timestamp] = instant
        # an instant on the active timeline too (an archival died before deleting its files) is an active one
        archived = {f.instant.timestamp for f in archived_files} - {i.timestamp for i in active}
        # A pending compaction whose completed file exists is recorded as the completed commit.
        ordered = tuple(sorted(latest.values(), key=lambda i: i.timestamp))
        timeline = Timeline(storage, config, ordered, tuple((t, frozenset(a)) for t, a in seen.items()),
                            frozenset(archived), unread_archive, config.timeline_layout_version < 2
                            and METADATA_FOLDER in listing.dirs, tuple(sorted(savepoints)))
        for file in archived_files:  # a plain instant file (no content here) is read when asked for
            if file.content is not None and file.instant.timestamp in archived:
                timeline._decoded[timeline.path_of(file.instant)] = file.content
        return timeline

    def with_instant(self, instant: Instant) -> Timeline:
        """This timeline with ``instant`` in place of the instant of its time (or added, in time order),
        without listing the timeline again: what a writer's own requested instant, or the instant it just
        completed, changes. A completed compaction stands as the commit it completes as, as loaded."""
        if instant.is_completed:
            instant = Instant(instant.timestamp, instant.completed_action, instant.state, instant.completion)
        others = [i for i in self.instants if i.timestamp != instant.timestamp]
        seen = self._actions_by_time
        actions = seen.get(instant.timestamp, frozenset()) | {instant.action}
        return replace(self, instants=tuple(sorted([*others, instant], key=lambda i: i.timestamp)),
                       actions_seen=tuple({**seen, instant.timestamp: actions}.items()))

    @cached_property
    def _actions_by_time(self) -> dict[str, frozenset[str]]:
        return dict(self.actions_seen)

    @property
    def ranges_by_completion_time(self) -> bool:
        """Incremental reads of this table range by completion time, not instant time: Apache Hudi 1.x's
        ``DefaultSource`` does so on table version 8 and later, whose timeline records completion times
        (``hoodieTableSupportsCompletionTime``; ``read.incremental_range``)."""
        return self._config.version >= 8

    def is_compaction(self, instant: Instant) -> bool:
        return COMPACTION in self._actions_by_time.get(instant.timestamp, frozenset())

    def completed(self, actions: Iterable[str] = WRITE_ACTIONS) -> list[Instant]:
        wanted = set(actions)
        return [i for i in self.instants if i.is_completed and i.action in wanted]

    def completed_writes_upto(self, as_of: str | None) -> list[Instant]:
        return [i for i in self.completed() if as_of is None or i.timestamp <= as_of]

    @cached_property
    def start(self) -> str | None:
        """The first write on the timeline, in any state (Hudi's ``firstNonSavepointCommit`` of the write
        timeline). Files of an earlier instant belong to commits archived where this library does not read them
        (``unread_archive``): they count as committed (``HoodieDefaultTimeline.containsOrBeforeTimelineStarts``)."""
        return next((i.timestamp for i in self.instants if i.action in _STARTS_TIMELINE), None)

    def committed_upto(self, as_of: str | None) -> Callable[[str], bool]:
        """Whether a file of this instant time is committed as of ``as_of``: a completed write, or
        written before the timeline starts."""
        done = {i.timestamp for i in self.completed_writes_upto(as_of)}
        start = self.start or ""
        return lambda t: t in done or (t < start and (as_of is None or t <= as_of))

    def pending(self) -> list[Instant]:
        return [i for i in self.instants if not i.is_completed]

    def last_completed_write(self) -> Instant | None:
        done = self.completed()
        return done[-1] if done else None

    def last_instant_time(self) -> str | None:
        return self.instants[-1].timestamp if self.instants else None

    def find(self, timestamp: str) -> Instant | None:
        for instant in self.instants:
            if instant.timestamp == timestamp:
                return instant
        return None

    def path_of(self, instant: Instant) -> str:
        """The instant file's path relative to the table."""
        if instant.timestamp in self.archived:
            name = instant.file_name(self._config.timeline_layout_version)
            return join(METAFOLDER, self._config.archive_folder, name)
        return instant_path(self._config, instant)

    def uri_of(self, instant: Instant) -> str:
        """The instant file's full URI (for messages)."""
        return self._storage.uri_of(self.path_of(instant))

    def pending_compactions(self) -> dict[tuple[str, str], str]:
        """(partition, fileId) -> instant time of a requested or running compaction of that file group."""
        pending: dict[tuple[str, str], str] = {}
        for instant in self.instants:
            if instant.action != COMPACTION or instant.is_completed:
                continue
            try:
                plan = self.read_plan(instant.with_state(State.REQUESTED))
            except FileNotFoundError:  # withdrawn by its scheduler after this timeline was listed
                continue
            for op in plan.get("operations") or ():
                pending[(op.get("partitionPath") or "", op["fileId"])] = instant.timestamp
        return pending

    def clustering_plan(self, instant: Instant) -> dict[str, Any] | None:
        """The ``HoodieClusteringPlan`` of a pending replacecommit (or 1.x ``clustering``) that clusters, or None:
        an insert_overwrite's requested file holds no plan (Hudi's ``ClusteringUtils.getClusteringPlan``: the
        requested ``HoodieRequestedReplaceMetadata`` with operation type ``CLUSTER``). None too when the plan was
        withdrawn or completed after this timeline was listed."""
        if instant.action not in (REPLACE_COMMIT, CLUSTERING):
            return None
        try:
            requested = self.read_plan(instant.with_state(State.REQUESTED))
        except FileNotFoundError:
            return None
        if str(requested.get("operationType") or "").upper() != CLUSTER_OPERATION:
            return None
        return requested.get("clusteringPlan")

    def pending_clustering(self) -> dict[tuple[str, str], str]:
        """(partition, fileId) -> instant time of a requested or running clustering that rewrites that file
        group (Hudi's ``ClusteringUtils.getAllFileGroupsInPendingClusteringPlans``)."""
        pending: dict[tuple[str, str], str] = {}
        for instant in self.instants:
            if instant.is_completed:
                continue
            plan = self.clustering_plan(instant)
            for group in (plan or {}).get("inputGroups") or ():
                for info in group.get("slices") or ():
                    pending[(info.get("partitionPath") or "", info["fileId"])] = instant.timestamp
        return pending

    def read_plan(self, instant: Instant) -> dict[str, Any]:
        """A requested instant's plan (``FileNotFoundError`` when it is gone). Do not modify the result:
        it is this timeline's copy."""
        return self._decode(self.path_of(instant))

    def read_metadata(self, instant: Instant) -> dict[str, Any]:
        """A completed instant's metadata. Do not modify the result: it is this timeline's copy."""
        try:
            return self._decode(self.path_of(instant))
        except FileNotFoundError:
            raise TimelineError(f"Instant file {self.uri_of(instant)} is missing; was the instant archived or "
                                f"rolled back?") from None

    def _decode(self, path: str) -> dict[str, Any]:
        if path not in self._decoded:
            self._decoded[path] = decode_instant_content(self._storage.read(path), self._storage.uri_of(path))
        return self._decoded[path]

    def replaced_file_ids(self, as_of: str | None = None) -> set[tuple[str, str]]:
        """(partition, fileId) pairs replaced by completed replacecommits up to ``as_of``."""
        replaced: set[tuple[str, str]] = set()
        for instant in self.completed((REPLACE_COMMIT,)):
            if as_of is not None and instant.timestamp > as_of:
                continue
            meta = self.read_metadata(instant)
            for partition, file_ids in (meta.get("partitionToReplaceFileIds") or {}).items():
                replaced.update((partition, fid) for fid in file_ids or ())
        return replaced

    def latest_schema(self) -> str | None:
        """The Avro schema JSON of the latest completed write that recorded one."""
        for instant in reversed(self.completed()):
            schema = (self.read_metadata(instant).get("extraMetadata") or {}).get("schema")
            if schema:
                return schema
        return None
