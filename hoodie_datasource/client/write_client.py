"""One write (one instant) from start to commit, independent of the engine that moves records.

    start_write()  resolve options once, load the table (``Table``: hoodie.properties read once, the
                   timeline listed once) or create it, roll back failed writes (heartbeat expired),
                   start the heartbeat, create ``T.<action>.requested`` (under the table lock with
                   optimistic concurrency control: the timeline is listed again there)
    session.run(engine)                     run an engine; any failure (interrupts too) aborts the instant
    session.record_writer()                 tag, plan inserts and write file groups (``RecordWriter``),
                                            on the driver's process or inside Spark tasks
    session.mark_inflight(profile)          ``T.inflight`` with the workload profile
    session.commit(stats, partitions)       reconcile markers, list the timeline again and check for
                                            conflicts, ``T.commit`` (the one atomic commit point),
                                            reconcile markers again; returns a ``CommitResult`` with the
                                            table the commit left
    session.run_table_services(table)       after the commit point: inline compaction, cleaning, archival
    session.drop_partitions(partitions)     ``delete_partition``: a replacecommit writing no file
    session.abort()                         roll its own instant back (also done by the next writer)
    run_write(...)                          start_write + run, again on a lost conflict when allowed, then
                                            the table services on the table the commit left

Engines only move records: ``local_engine`` (pyarrow, one process), ``spark.write_dag`` (distributed),
``spark.partition_writer`` (Spark's writer API, input clustered by partition).
"""

from __future__ import annotations

import json
import logging
import posixpath
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

import pyarrow as pa

from hoodie_datasource import fault_points
from hoodie_datasource.config import keys as k
from hoodie_datasource.config.concurrency_config import ConcurrencyConfig, resolve_concurrency_config
from hoodie_datasource.config.metadata_config import MetadataConfig, resolve_metadata_config
from hoodie_datasource.config.services_config import ServicesConfig, resolve_services_config
from hoodie_datasource.config.table_config import (
    METAFOLDER,
    TableConfig,
    load_table_config,
    table_exists,
    write_table_config,
)
from hoodie_datasource.config.write_config import WriteConfig, resolve_write_config
from hoodie_datasource.config.write_operation import WriteOperation
from hoodie_datasource.errors import (
    CommitConflictError,
    FileGroupWrittenTwiceError,
    HoodieError,
    HoodieWriteConflictError,
    InvalidTablePathError,
    SchemaMismatchError,
)
from hoodie_datasource.index.index import Index
from hoodie_datasource.index.registry import index_for
from hoodie_datasource.metadata.reader import planning_from_metadata
from hoodie_datasource.metadata.sync import index_tracking, sync_commit
from hoodie_datasource.schema.avro_schema import arrow_to_avro_schema, to_avro_json
from hoodie_datasource.services.clustering import GroupRunner, run_here
from hoodie_datasource.services.metadata_lifecycle import build_metadata_table, prepare_metadata_table
from hoodie_datasource.services.metadata_table_services import run_metadata_table_services
from hoodie_datasource.services.restore import finish_pending_restores
from hoodie_datasource.services.table_services import run_inline_services
from hoodie_datasource.storage.storage import FileInfo, Listing, Storage
from hoodie_datasource.table.file_names import BaseFileName
from hoodie_datasource.table.markers import delete_marker_dir, marked_files
from hoodie_datasource.table.meta_columns import IS_DELETED_COLUMN
from hoodie_datasource.table.partition_metafile import write_partition_metafile
from hoodie_datasource.table.table import Table
from hoodie_datasource.table.table_schema import evolve_schema
from hoodie_datasource.timeline.commit_metadata import CommitMetadata, WriteStat, write_stats_of
from hoodie_datasource.timeline.instant import COMMIT, COMPACTION, DELTA_COMMIT, REPLACE_COMMIT, Instant
from hoodie_datasource.timeline.instant_time import new_instant_time
from hoodie_datasource.timeline.timeline import instant_path, timeline_dir
from hoodie_datasource.timeline.transitions import create_requested, transition_to_completed, transition_to_inflight
from hoodie_datasource.transaction.conflict import FileGroup, check_conflicts
from hoodie_datasource.transaction.transaction_manager import TransactionManager
from hoodie_datasource.write.partitioner import average_record_size
from hoodie_datasource.write.record_writer import RecordWriter
from hoodie_datasource.write.rollback import rollback_failed_writes, rollback_pending
from hoodie_datasource.write.stage_timer import StageTimer
from hoodie_datasource.write.targets import WriteContext

logger = logging.getLogger(__name__)


def _names(listing: Listing) -> list[str]:
    return [f.name for f in listing.files] + listing.dirs


def _check_path(storage: Storage) -> bool:
    """Whether a table exists at ``storage``; refuses a table path that is a file, or a non-empty
    directory holding no table."""
    if storage.stat("") is not None:
        raise InvalidTablePathError(f"{storage.uri} is a file, not a table directory")
    if table_exists(storage):
        return True
    top = storage.list_dir("")
    stray = [n for n in _names(top) if not n.startswith(".")]
    # a .hoodie holding only .temp is the staging area of the first write through the data source
    if not stray and METAFOLDER in top.dirs:
        stray = [f"{METAFOLDER}/{n}" for n in _names(storage.list_dir(METAFOLDER)) if n != ".temp"]
    if stray:
        raise InvalidTablePathError(
            f"{storage.uri} is not empty and holds no Hudi table (found e.g. {sorted(stray)[:3]}); "
            "write a hoodie table to an empty or new directory"
        )
    return False


DEFAULT_RECORD_SIZE = 1024  # HoodieCompactionConfig.COPY_ON_WRITE_RECORD_SIZE_ESTIMATE


@dataclass(frozen=True)
class CommitResult:
    """What a committed write did, and ``table``: the table as the commit left it (the timeline listed under
    the lock before the commit point, with this commit completed), on which the table services run."""

    instant: str
    table: Table
    inserts: int = 0
    updates: int = 0
    deletes: int = 0
    files_written: int = 0
    rows_rewritten: int = 0  # unchanged rows a copy-on-write merge rewrote into the new file slices

    @staticmethod
    def of(instant: str, table: Table, stats: list[WriteStat]) -> CommitResult:
        """The counts of the write stats (``numWrites`` counts the rewritten rows too)."""
        inserts = sum(s.numInserts for s in stats)
        updates = sum(s.numUpdateWrites for s in stats)
        rewritten = sum(max(0, s.numWrites - s.numInserts - s.numUpdateWrites) for s in stats)
        return CommitResult(instant, table, inserts, updates, sum(s.numDeletes for s in stats), len(stats), rewritten)

    def summary(self) -> str:
        """What the commit changed, for its log line."""
        return (f"{self.inserts} inserts, {self.updates} updates, {self.deletes} deletes; "
                f"{self.files_written} files written, {self.rows_rewritten} unchanged rows rewritten")


@dataclass
class WriteSession:
    table: Table  # as the write started, with its requested instant
    config: WriteConfig
    index: Index  # made once from the config (``index.registry.index_for``), bound to the table as it started
    instant: Instant
    data_schema: pa.Schema
    new_table: bool
    services: ServicesConfig = field(default_factory=ServicesConfig)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    stage_counts: dict[str, int] = field(default_factory=dict)  # the index work (``write.stage_timer``)
    concurrency: ConcurrencyConfig = field(default_factory=ConcurrencyConfig)
    transactions: TransactionManager | None = None
    finished: bool = False  # committed or aborted
    owns_instant: bool = True  # False when another writer completed an instant of the same time
    extra_metadata: Mapping[str, str] = field(default_factory=dict)  # the commit's, besides the schema
    measured_record_size: int | None = None  # bytes a record of this write's input takes, measured on a sample
    metadata: MetadataConfig = field(default_factory=MetadataConfig)  # hoodie.metadata.* of this write
    group_runner: GroupRunner = run_here  # runs an inline clustering's groups (the engine's: Spark tasks on Spark)

    @property
    def instant_time(self) -> str:
        return self.instant.timestamp

    @property
    def operation(self) -> WriteOperation:
        return self.config.operation

    @property
    def looks_up_keys(self) -> bool:
        """The write looks its keys up among the table's stored ones: its operation is tagged, by an index that does
        not place records by hash, in a table with files."""
        return not (self.new_table or self.index.places_by_hash) and self.index.requires_tagging(self.operation)

    @property
    def streams_bulk_insert(self) -> bool:
        """A bulk insert each task writes straight into new file groups (``write.bulk_insert``): records need no
        index to place them (an index placing by hash sends them to their buckets' file groups) and are not
        combined before the insert (which needs all records of a key together)."""
        return self.operation is WriteOperation.BULK_INSERT and not self.index.places_by_hash \
            and not self.config.dedupes

    def context(self) -> WriteContext:
        """What every write task shares; the tasks collect the keys each file adds and removes when the metadata
        table keeps a record index or the index is kept outside the table (``Index.tracks_written_keys``)."""
        tracking = index_tracking(self.table.config, self.metadata)
        return WriteContext(
            storage=self.table.storage,
            instant=self.instant_time,
            data_schema=self.data_schema,
            index=self.config.index,
            compression=self.config.sizing.compression,
            precombine_field=self.config.precombine_field if self.config.precombine_field in self.data_schema.names
            else None,
            dedupe=self.config.dedupes,
            event_time_ordering=self.config.event_time_ordering,
            concat_inserts=self.config.concats_inserts,
            log_block_format=self.config.log_block_format,
            table_name=self.table.config.name,
            record_key_fields=self.config.keygen.record_key_fields,
            cdc_logging_mode=self.table.config.cdc_logging_mode if self.table.config.cdc_enabled else None,
            **{**tracking, "tracks_record_keys": tracking["tracks_record_keys"] or self.index.tracks_written_keys},
        )

    def record_writer(self, listed: Mapping[str, tuple[FileInfo, ...]] | None = None) -> RecordWriter:
        """What tagging, planning and writing need, in a picklable object (for Spark tasks too). The
        instant files every task's file-system view asks about are read here, once, and travel with
        the timeline, instead of once per task; so does ``listed``, the table's files, when given."""
        self.table.timeline.replaced_file_ids()
        self.table.timeline.pending_clustering()
        if self.config.is_mor:
            self.table.timeline.pending_compactions()
        scope = self.index.scope(self.table, self.instant_time, self.operation, self.data_schema)
        return RecordWriter(self.context(), self.config, self.table, self.average_record_size(), self.new_table,
                            self.index, scope, listed, self.measures_record_size())

    def measures_record_size(self) -> bool:
        """Nothing tells the bytes a record of this write, which may insert, takes: the table has no write, no
        ``hoodie.copyonwrite.record.size.estimate`` is given, and no sample of the input was measured
        (``measured_record_size``)."""
        return (not self.operation.is_delete and self.config.sizing.record_size_estimate is None
                and self.measured_record_size is None and self.table.timeline.last_completed_write() is None)

    def average_record_size(self) -> int:
        """Bytes per record of the last write (its write stats); before any write,
        ``hoodie.copyonwrite.record.size.estimate`` when given, else the size measured on this write's
        input (``measured_record_size``), else Hudi's default estimate. Hudi takes its 1024-byte default
        for a new table's first write, which for records of ~100 bytes cut a large first insert into
        files of a tenth of ``hoodie.parquet.max.file.size``."""
        estimate = self.config.sizing.record_size_estimate or self.measured_record_size or DEFAULT_RECORD_SIZE
        latest = self.table.timeline.last_completed_write()
        if latest is None:
            return estimate
        return average_record_size(list(write_stats_of(self.table.timeline.read_metadata(latest))), estimate)

    def replaced_file_groups(self, written_partitions: Iterable[str]) -> dict[str, list[str]]:
        """File groups an overwrite replaces: all in the written partitions and the static ones
        (``hoodie.static.overwrite.partition.paths``: those are replaced even with no record written, and
        Hudi replaces only them when set; a record written elsewhere would then duplicate a stored one),
        or the whole table."""
        if not self.operation.replaces_file_groups or self.new_table:
            return {}
        view = self.table.file_system_view()
        partitions = None if self.operation.replaces_table else sorted(
            set(written_partitions) | set(self.config.static_overwrite_partitions))
        replaced: dict[str, list[str]] = {}
        for s in view.latest_file_slices(partitions=partitions):
            replaced.setdefault(s.partition_path, []).append(s.file_id)
        return replaced

    def mark_inflight(self, profile: Mapping[str, Mapping[str, int]]) -> None:
        """``T.inflight`` with the workload profile (per partition: inserts / updates counts)."""
        body = {
            "partitionToWriteStats": {
                p: [{"fileId": "", "path": None, "prevCommit": "null", "numInserts": c.get("inserts", 0),
                     "numUpdateWrites": c.get("updates", 0), "partitionPath": None}]
                for p, c in profile.items()
            },
            "compacted": False,
            "extraMetadata": {},
            "operationType": self.operation.commit_type,
        }
        self.instant = transition_to_inflight(self.table, self.instant, json.dumps(body, indent=2).encode())
        fault_points.reach(fault_points.AFTER_INFLIGHT, storage=self.table.storage, instant=self.instant_time)

    def run(self, engine: Callable[[WriteSession], CommitResult]) -> CommitResult:
        """``engine(self)``: move the records and commit. Any failure, an interrupt too, rolls the instant
        back before it is raised again."""
        try:
            return engine(self)
        except BaseException:
            self.abort()
            raise

    def drop_partitions(self, partitions: Iterable[str]) -> CommitResult:
        """``delete_partition``: the partitions' file groups are replaced by nothing; no file is written."""
        self.mark_inflight({})
        return self.commit([], partitions, single_attempt=True)

    def commit(self, stats: list[WriteStat], written_partitions: Iterable[str] | None = None,
               single_attempt: bool = False) -> CommitResult:
        """Finalize: drop files of failed task attempts, write partition markers, complete the instant,
        drop files of task attempts that wrote after the first reconciliation (``write.task_attempt``).
        ``written_partitions`` (the partitions of the incoming records) are those an overwrite replaces.
        ``single_attempt``: the files were written in this process, once (the local engine): every marked
        file is in ``stats``, so the markers are not listed. The time until the metadata is written is the
        ``commit`` stage. No table service runs here (``run_table_services`` runs them after)."""
        try:
            _refuse_file_groups_written_twice(stats)
        except FileGroupWrittenTwiceError:
            self.abort()
            raise
        replaced = None if written_partitions is None else self.replaced_file_groups(written_partitions)
        timer = StageTimer(self.stage_seconds)
        if self.index.tracks_written_keys:
            # an index kept outside the table learns where the keys went, before the commit point (Hudi's
            # ``updateIndex`` in ``BaseCommitActionExecutor``): a failure here rolls the write back
            self.index.update_location(stats, self.instant_time)
            timer.lap("index")
        written = {s.path for s in stats if s.path} | {p for s in stats for p in s.cdcStats or ()}
        if not single_attempt:
            self._reconcile_markers(written)
        # a partition holding a file group this write updates has its metafile: every commit writes
        # its partitions' metafiles before it completes (Hudi's write handles too)
        known = {s.partitionPath for s in stats if s.prevCommit not in (None, "null")}
        for partition in {s.partitionPath for s in stats} - known:
            write_partition_metafile(self.table.storage, partition, self.instant_time)
        name = self.table.config.name
        schema_json = to_avro_json(arrow_to_avro_schema(self.data_schema, f"{name}_record", f"hoodie.{name}"))
        extra = {**self.extra_metadata, "schema": schema_json}
        timer.lap("commit")
        extra.update({f"hoodie.stage.{k}.ms": str(int(v * 1000)) for k, v in self.stage_seconds.items()})
        extra.update({f"hoodie.stage.{k}": str(v) for k, v in self.stage_counts.items()})
        metadata = CommitMetadata(
            self.operation.commit_type,
            sorted(stats, key=lambda s: (s.partitionPath, s.fileId)),
            extra,
            replaced_file_ids=replaced if self.instant.action == REPLACE_COMMIT else None,
        )
        if self.instant.state.value == "requested":
            self.mark_inflight({})
        touched = {(s.partitionPath or "", s.fileId) for s in stats if s.fileId}
        touched |= {(p, f) for p, ids in (replaced or {}).items() for f in ids}
        fault_points.reach(fault_points.BEFORE_COMMIT, storage=self.table.storage, instant=self.instant_time)
        table = self._complete(metadata, touched)
        if self.index.tracks_written_keys:
            self._forget_removed(stats)
        # an attempt that found the instant pending after the first reconciliation wrote its files before
        # the commit point, and its markers are listed now (``write.task_attempt``)
        if not single_attempt:
            self._reconcile_markers(written)
        delete_marker_dir(self.table.storage, self.instant_time)
        result = CommitResult.of(self.instant_time, table, stats)
        logger.info("Committed %s %s: %s", self.instant.action, self.instant_time, result.summary())
        return result

    def _forget_removed(self, stats: list[WriteStat]) -> None:
        """The index kept outside the table drops the keys the commit removed, after the commit point: a failure
        leaves entries naming file groups that no longer hold those keys, which an upsert of them writes into
        (once), so it is logged, not raised."""
        try:
            self.index.forget_removed(stats, self.instant_time)
        except HoodieError:
            logger.warning("Committed %s, but the index did not drop the keys it deleted", self.instant_time,
                           exc_info=True)

    def _reconcile_markers(self, written: set[str]) -> None:
        """Delete the marked files that are not in the write stats: files of task attempts that failed or
        lost to another attempt of their task (Hudi's ``HoodieTable.reconcileAgainstMarkers``). A marked file
        is matched to the stats by its name too, which holds its file id, write token and instant: a listing
        may spell a path the stats spell otherwise, and a file the commit lists is never deleted."""
        names = {posixpath.basename(path) for path in written}
        for relative in marked_files(self.table.storage, self.instant_time):
            if relative not in written and posixpath.basename(relative) not in names \
                    and self.table.storage.delete(relative):
                logger.info("Removed %s: written by a task attempt that did not succeed", relative)

    def _complete(self, metadata: CommitMetadata, touched: set[FileGroup]) -> Table:
        """The commit point; the table after it. Under optimistic concurrency control: lock, list the timeline
        again, check for conflicts, record the commit in the metadata table, complete the instant, unlock. In
        ``single_writer`` mode the same check runs without a lock: it catches a second writer that completed
        before this check, but not one completing between the check and this write's completed file (a window
        of one listing and one create)."""
        tx = self._transactions()
        completed = None
        try:
            with tx.locked():
                now = self._roll_back_clustering_in_the_way(self.table.refresh(), touched)
                try:
                    check_conflicts(self.table.timeline, now.timeline, self.instant_time, touched)
                except HoodieWriteConflictError as exc:
                    if self.concurrency.is_occ:
                        raise
                    raise HoodieWriteConflictError(
                        f"{exc}. Another writer wrote the table meanwhile: to let several writers write one table, "
                        f"set {k.CONCURRENCY_MODE.key}=optimistic_concurrency_control (and {k.LOCK_PROVIDER.key})"
                    ) from None
                sync_commit(now, self.instant_time, metadata)
                try:
                    completed = now.with_instant(transition_to_completed(self.table, self.instant, metadata.to_json()))
                except CommitConflictError:
                    self.owns_instant = False  # another writer completed an instant of this time: never roll it back
                    raise
        except BaseException:
            if completed is None:
                self.abort()
                raise
            # the commit landed; only releasing the lock failed (it expires with its lease or session):
            # rolling back now would delete the files of a completed write
            logger.exception("Committed %s, but releasing the table lock failed", self.instant_time)
        self.finished = True
        tx.stop_heartbeat()
        return completed

    def _roll_back_clustering_in_the_way(self, now: Table, touched: set[FileGroup]) -> Table:
        """With ``SparkAllowUpdateStrategy`` and ``hoodie.clustering.rollback.pending.replacecommit.on.conflict``, the
        pending clusterings of file groups this write changed are rolled back before it commits (Hudi's
        ``BaseSparkCommitActionExecutor.clusteringHandleUpdate``); the table after them."""
        cfg = self.services.clustering
        if cfg.rejects_updates or not cfg.rollback_pending_on_conflict:
            return now
        held = now.timeline.pending_clustering()
        in_the_way = sorted({held[g] for g in touched if g in held})
        for instant_time in in_the_way:
            logger.info("Rolling back pending clustering %s: write %s updates its file groups", instant_time,
                        self.instant_time)
            rollback_pending(now, now.timeline.find(instant_time))
        return now.refresh() if in_the_way else now

    def _transactions(self) -> TransactionManager:
        if self.transactions is None:
            self.transactions = TransactionManager(self.table.storage, self.concurrency)
        return self.transactions

    def run_table_services(self, table: Table) -> Table:
        """The inline services, after the commit point, on ``table`` (the table the commit left): compaction
        (MOR, when enabled), cleaning, archival, under the table lock in optimistic concurrency control; the
        table after them. The write is already committed: a failing service is logged and retried by the
        next write (the table is then returned as the commit left it). Frees the table lock's provider."""
        tx = self._transactions()
        try:
            return run_inline_services(table, self.services, tx.locked if self.concurrency.is_occ else None,
                                       self.group_runner)
        except Exception:
            logger.exception("A table service failed after commit %s; the next write retries it", self.instant_time)
            return table
        finally:
            tx.close()

    def abort(self) -> None:
        """Roll back this write's own instant (never another writer's) and end its heartbeat. Idempotent."""
        if self.finished:
            return
        self.finished = True
        tx = self._transactions()
        try:
            if self.owns_instant:
                # its record in the metadata table is made under the table lock, as every change there
                rollback_pending(self.table, self.instant, tx.locked, self.index)
        except Exception:  # the next writer rolls it back; never hide the original failure
            logger.exception("Rollback of %s failed; the next write will retry it", self.instant_time)
        finally:
            tx.stop_heartbeat(delete=self.owns_instant)
            tx.close()


def _refuse_file_groups_written_twice(stats: list[WriteStat]) -> None:
    """A file group gets at most one new base file in a commit: two (tasks that each took a file group for
    theirs) would leave readers one of them and lose the other's rows, so the commit is refused (and the
    write rolled back). Log files may be several (each is merged)."""
    seen: dict[tuple[str, str], str] = {}
    for stat in stats:
        name = stat.path.rsplit("/", 1)[-1] if stat.path else ""
        if BaseFileName.parse(name) is None:
            continue
        other = seen.setdefault((stat.partitionPath or "", stat.fileId), stat.path)
        if other != stat.path:
            raise FileGroupWrittenTwiceError(
                f"Two tasks of this write wrote base files of file group {stat.fileId} in partition "
                f"{stat.partitionPath!r} ({other} and {stat.path}): the write is rolled back, nothing is committed")


@dataclass(frozen=True)
class _CheckedWrite:
    storage: Storage
    config: WriteConfig
    index: Index  # made once from the config
    table: Table | None  # the existing table, loaded once for the whole start of the write
    data_schema: pa.Schema


def _check_write(storage: Storage, options: Mapping[str, str], incoming_schema: pa.Schema,
                 writing: bool = True) -> _CheckedWrite:
    """Resolve and validate the options and schema of a write (or, not ``writing``, of a CREATE TABLE that
    may only register an existing table), changing nothing."""
    existing = load_table_config(storage) if _check_path(storage) else None
    if existing is not None and writing:
        existing.check_writable(storage.uri)
    config = resolve_write_config(options, existing)
    config.keygen.validate_schema(incoming_schema)
    if writing:
        config.keygen.check_complete()
    if IS_DELETED_COLUMN in incoming_schema.names and not pa.types.is_boolean(incoming_schema.field(IS_DELETED_COLUMN).type):
        # HoodieSparkSqlWriter.validateSchemaForHoodieIsDeleted
        raise SchemaMismatchError(
            f"{IS_DELETED_COLUMN} marks soft deletes and must be boolean; the data has it as "
            f"{incoming_schema.field(IS_DELETED_COLUMN).type}"
        )
    deleting = config.operation.is_delete
    if config.precombine_field and config.precombine_field not in incoming_schema.names and not deleting:
        raise SchemaMismatchError(_missing_precombine(config.precombine_field, incoming_schema.names, existing))
    index = index_for(config.index)
    table = Table.load(storage, config=existing) if existing else None
    if table is not None:
        index.check_table(table.timeline)
    table_schema = table.data_schema if table else None
    if deleting and table_schema is not None:
        data_schema = table_schema
    else:
        data_schema = evolve_schema(table_schema, incoming_schema, allow_missing=deleting)
    return _CheckedWrite(storage, config, index, table, data_schema)


def _missing_precombine(field: str, columns: list[str], existing: TableConfig | None) -> str:
    """What to do when the data lacks the precombine field. A table that has one keeps it (an option
    naming another column is refused, as Hudi's ``HoodieWriterUtils.validateTableConfig`` refuses a
    precombine key differing from the table's), so then the only fix is the column; otherwise the
    option is the write's own and may name another column or be left out."""
    found = f"Precombine field {field!r} not found in the data; columns are: {', '.join(columns)}"
    if existing is not None and existing.precombine_field:
        return (f"{found}. The table's precombine field is {field!r} (hoodie.table.precombine.field, set when "
                f"the table was created; it cannot change): add a column {field!r} to the data")
    return (f"{found}. Set hoodie.datasource.write.precombine.field to one of them, or leave it unset: "
            "then the table has no precombine field and, of records with the same key, the one written last "
            "wins (dedupe the batch first when the order of its records matters)")


def _create_table(checked: _CheckedWrite) -> TableConfig:
    config, name = checked.config, checked.config.table_name
    avro = arrow_to_avro_schema(checked.data_schema, f"{name}_record", f"hoodie.{name}")
    table = config.table_config(to_avro_json(avro))
    write_table_config(checked.storage, table)
    return table


def create_table(storage: Storage, options: Mapping[str, str], schema: pa.Schema) -> None:
    """What SQL ``CREATE TABLE`` does: ``hoodie.properties`` with the schema, and no commit.

    An existing table is left as it is, once the options are known to agree with it."""
    checked = _check_write(storage, options, schema, writing=False)
    if checked.table is None:
        _create_table(checked)
        logger.info("Created table %s at %s", checked.config.table_name, storage.uri)


def start_write(storage: Storage, options: Mapping[str, str], incoming_schema: pa.Schema,
                extra_metadata: Mapping[str, str] | None = None) -> WriteSession:
    """Validate everything, then create the requested instant. Nothing is written before the
    options and schema are known to be good, so a bad call leaves the table unchanged. The commit will
    carry ``extra_metadata`` in its ``extraMetadata`` (the streaming sink's checkpoint).

    A restore that died midway is finished and failed writes (pending, their heartbeat expired) are rolled back
    first; the heartbeat of the new instant starts before its requested file exists. Under optimistic concurrency
    control both happen under the table lock, which makes instant times unique and increasing across writers."""
    checked = _check_write(storage, options, incoming_schema)
    config, data_schema = checked.config, checked.data_schema
    services = resolve_services_config(options, config.index, config.sizing.compression)
    concurrency = resolve_concurrency_config(options, config.table_name)
    metadata = resolve_metadata_config(options)
    created = None if checked.table else _create_table(checked)
    tx = TransactionManager(storage, concurrency)
    action = REPLACE_COMMIT if config.operation.replaces_file_groups else (DELTA_COMMIT if config.is_mor else COMMIT)
    for attempt in range(PLAN_RACE_ATTEMPTS):
        with tx.locked():
            instant, table, index = _create_instant(checked, created, concurrency, tx, metadata, services, action,
                                                    relist=attempt > 0)
            scheduled = _compactions_scheduled_meanwhile(table, instant.timestamp) if table.config.is_mor else []
            if not scheduled:
                break
            # a compactor in another process planned while this write picked its time: the plan is
            # later, yet it covers slices this write would change; the write starts again after it, nothing written
            try:
                storage.delete(instant_path(table.config, instant))
            finally:  # a requested instant left behind without a heartbeat is rolled back by the next writer
                tx.stop_heartbeat(delete=True)
            logger.info("Withdrew %s %s: %s scheduled meanwhile; starting again after it", action, instant.timestamp,
                        ", ".join(scheduled))
    else:
        tx.close()
        raise HoodieWriteConflictError(f"Could not start a write on {storage.uri}: a compactor in another process "
                                       f"scheduled a compaction each time it started ({PLAN_RACE_ATTEMPTS} times)")
    logger.info("Started %s %s (%s) on %s", action, instant.timestamp, config.operation, storage.uri)
    session = WriteSession(table.with_instant(instant), config, index, instant, data_schema,
                           not table.timeline.completed(), services, concurrency=concurrency, transactions=tx,
                           extra_metadata={**(extra_metadata or {}), **index.commit_metadata()}, metadata=metadata)
    try:
        fault_points.reach(fault_points.AFTER_REQUESTED, storage=storage, instant=instant.timestamp)
    except BaseException:
        session.abort()
        raise
    return session


PLAN_RACE_ATTEMPTS = 3


def _create_instant(checked: _CheckedWrite, created: TableConfig | None, concurrency: ConcurrencyConfig,
                    tx: TransactionManager, metadata: MetadataConfig, services: ServicesConfig, action: str,
                    relist: bool) -> tuple[Instant, Table, Index]:
    """The write's requested instant, the table it plans against and its index, under ``tx``'s lock."""
    if checked.table is None and not relist:
        table = Table.load(checked.storage, config=created)
    else:  # with several writers, the timeline as it is under the lock
        base = checked.table or Table.load(checked.storage, config=created)
        table = base.refresh() if concurrency.is_occ or relist else base
    table = prepare_metadata_table(table, metadata)
    if table.timeline.pending():  # failed writes and dead rollbacks are rolled back here: list the timeline again
        table = finish_pending_restores(table)  # a restore that died midway first: its plan is the newest writes
        rollback_failed_writes(table, concurrency.heartbeat_expiry_ms, checked.index)
        table = table.refresh()
    table = build_metadata_table(table, metadata)
    table = run_metadata_table_services(table, metadata, services)
    # tagging, small files, overwrites and the services after the commit take the table's files from there:
    # the metadata table as opened above, its timeline listed once for the whole write
    table = planning_from_metadata(table, metadata.enabled)
    index = checked.index.for_table(table)  # the record index as the write starts
    instant_time = new_instant_time(table.timeline.last_instant_time())
    tx.start_heartbeat(instant_time)
    try:
        instant = create_requested(table, instant_time, action)
    except BaseException as exc:  # the instant may be another writer's, and so the heartbeat file
        tx.stop_heartbeat(delete=not isinstance(exc, CommitConflictError))
        tx.close()
        raise
    return instant, table, index


def _compactions_scheduled_meanwhile(table: Table, instant_time: str) -> list[str]:
    """Pending compactions later than ``instant_time``, listed after its requested file exists. A compactor creates
    its plan, then lists the timeline and withdraws the plan if a write is pending (``schedule_compaction``); a write
    creates its instant, then lists it here: whichever lists second sees the other, so a write never appends to a
    slice a plan it did not see was made from (its log would be left out of the compacted slice: the compactor alone
    misses a write between picking its time and creating it). A clustering needs no such check: a write that meets
    one fails either way (``SparkRejectUpdateStrategy``, or the conflict check at its commit). One listing of the
    timeline folder; the timeline is loaded only when it holds a later compaction's file."""
    names = (f.name for f in table.storage.list_dir(timeline_dir(table.config)).files)
    if not any(i is not None and i.timestamp > instant_time and i.action == COMPACTION and not i.is_completed
               for i in map(Instant.parse, names)):
        return []
    return sorted({t for t in table.refresh().timeline.pending_compactions().values() if t > instant_time})

def run_write(storage: Storage, options: Mapping[str, str], incoming_schema: pa.Schema,
              engine: Callable[[WriteSession], CommitResult],
              extra_metadata: Mapping[str, str] | None = None) -> CommitResult:
    """``start_write`` then ``session.run(engine)``; a write that loses to a concurrent one
    (``HoodieWriteConflictError``: its own instant is rolled back) is run again from the start, against
    the table as the winner left it, up to ``hoodie.write.num.retries.on.conflict`` times (Hudi's
    ``HoodieWriteConfig.NUM_RETRIES_ON_CONFLICT_FAILURES``). ``engine`` must be able to run again. After the
    commit point, the table services run on the table the commit left; the result carries the table after them."""
    retries = resolve_concurrency_config(options).retries_on_conflict
    attempt = 0
    while True:
        try:
            session = start_write(storage, options, incoming_schema, extra_metadata)
            result = session.run(engine)
            break
        except HoodieWriteConflictError as exc:
            if attempt >= retries:
                raise
            attempt += 1
            logger.warning("%s; running the write again (retry %d of %d)", exc, attempt, retries)
    return replace(result, table=session.run_table_services(result.table))
