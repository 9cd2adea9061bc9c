"""``HoodieTable(path)``: the table from Python, without Spark: its timeline and commit metadata, reads
(``scan``, and by key through the index: ``read_keys``, ``filter_exists``) and writes (``write``) in this process,
and the table services (compaction, cleaning, archival, rollback, savepoints and restore); and its metadata table:
what it lists (``metadata_partitions``, ``metadata_files``, ``metadata_column_stats``, ``metadata_stats``), that
listing checked against storage (``validate_metadata``), and building or deleting it (``create_metadata_table``,
``delete_metadata_table``); and the whole table checked against its timeline (``validate``).

It holds the table handle (``table.table.Table``: ``hoodie.properties`` and one listing of the timeline),
loaded once, the first time something asks for it; what it shows is the table as of that listing, until
``refresh()`` lists the timeline again. Its own writes and services leave it holding the table they left.
A service first lists the timeline again (under the table lock, when there is one), since a change must
start from the table as it is.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from hoodie_datasource.client.local_engine import run_local_write
from hoodie_datasource.config.concurrency_config import resolve_concurrency_config
from hoodie_datasource.config.keys import METADATA_ENABLE
from hoodie_datasource.config.metadata_config import resolve_metadata_config
from hoodie_datasource.config.read_config import resolve_read_config
from hoodie_datasource.config.services_config import ServicesConfig, resolve_services_config
from hoodie_datasource.config.table_config import TableConfig
from hoodie_datasource.config.write_config import resolve_write_config
from hoodie_datasource.errors import MetadataTableError, MetadataTableNotReadyError, TimelineError
from hoodie_datasource.metadata.reader import MetadataTableReader, planning_from_metadata
from hoodie_datasource.metadata.records import MetadataPartition, unwrap_values
from hoodie_datasource.metadata.validation import FileListingDifference, compare_file_listings
from hoodie_datasource.read.key_lookup import KeyLookup
from hoodie_datasource.read.table_reader import read_query
from hoodie_datasource.services import restore, savepoint
from hoodie_datasource.services.archival import archive
from hoodie_datasource.services.cleaner import clean, files_to_clean
from hoodie_datasource.services.clustering import (
    ClusteringPlanInfo,
    GroupRunner,
    commits_since_last_clustering,
    execute_clustering,
    pending_clustering_info,
    run_here,
    schedule_clustering,
)
from hoodie_datasource.services.compaction import execute_compaction, schedule_compaction
from hoodie_datasource.services.metadata_lifecycle import build_metadata_table, prepare_metadata_table
from hoodie_datasource.services.service_execution import Guard
from hoodie_datasource.services.service_run import ServiceRun
from hoodie_datasource.services.table_services import cluster_now, compact_now
from hoodie_datasource.services.table_validation import Progress, TableProblem, validate_table
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.metadata_table import metadata_partitions, ready_partitions
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.instant import Instant
from hoodie_datasource.timeline.timeline import Timeline
from hoodie_datasource.transaction.transaction_manager import TransactionManager
from hoodie_datasource.write.rollback import rollback_completed, rollback_failed_writes, rollback_pending


@dataclass(unsafe_hash=True)
class HoodieTable:
    """``path`` is a local path or a table URI (``s3://bucket/t``, ``az://container/t``, ...);
    ``storage_options`` are ``hoodie.storage.*`` keys (credentials and endpoints)."""

    path: str
    storage_options: Mapping[str, str] = field(default_factory=dict, compare=False)
    _table: Table | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def storage(self) -> Storage:
        """The table's storage (opened with ``storage_options``): every file access goes through it."""
        return self._table.storage if self._table is not None else open_storage(self.path, self.storage_options)

    @property
    def base_path(self) -> str:
        """The table's URI as the storage spells it."""
        return self.storage.uri

    @property
    def table(self) -> Table:
        """The table handle: loaded the first time it is asked for, then as ``refresh()`` or this object's own
        writes and services left it."""
        if self._table is None:
            self._table = planning_from_metadata(Table.load(self.storage))
        return self._table

    @property
    def config(self) -> TableConfig:
        """The table's ``hoodie.properties``: type, key fields, version."""
        return self.table.config

    def refresh(self) -> HoodieTable:
        """List the timeline again, to see what others did since; returns this object."""
        self._table = self._table.refresh() if self._table is not None else self.table
        return self

    def timeline(self) -> Timeline:
        """The timeline: every instant, each in its latest state."""
        return self.table.timeline

    def instants(self) -> list[Instant]:
        """Every instant on the timeline (any action, any state), oldest first."""
        return list(self.timeline().instants)

    def completed_commits(self) -> list[str]:
        """Completed writes (commit, deltacommit, replacecommit), oldest first."""
        return [i.timestamp for i in self.timeline().completed()]

    def latest_commit(self) -> str | None:
        """The instant time of the latest completed write, or None while the table has none."""
        latest = self.timeline().last_completed_write()
        return latest.timestamp if latest else None

    def commit_metadata(self, instant_time: str) -> dict[str, Any]:
        """The commit metadata of a completed instant (files written, counts, schema, ``extraMetadata``)."""
        timeline = self.timeline()
        instant = timeline.find(instant_time)
        if instant is None or not instant.is_completed:
            raise TimelineError(f"No completed instant {instant_time} in {self.path}")
        return timeline.read_metadata(instant)

    def scan(self, **options: str) -> pa.Table:
        """The query the read options ask for (``hoodie.datasource.query.type`` and the others of a Spark read;
        a snapshot of the latest commit by default), read in this process into one Arrow table."""
        cfg = resolve_read_config(options)  # the table plans from its metadata table unless the read says not to
        return read_query(self.table if cfg.metadata_enable else planning_from_metadata(self.table, False), cfg)

    def read_keys(self, keys: pa.Table, **options: str) -> pa.Table:
        """The latest record of each key of ``keys`` the table holds, in the schema ``scan()`` returns, found through
        the index (``read.key_lookup``): only the file groups it names are read, each slice's log blocks merged as a
        snapshot merges them. ``keys`` has the record key fields, and the partition fields unless the index is
        global; a key asked twice is read once, a row without a record key finds nothing. ``options``: the index
        the table's writes use (``hoodie.index.type``, BLOOM by default, and its options)."""
        return KeyLookup.of(self.table, options).read_keys(keys)

    def filter_exists(self, records: pa.Table, **options: str) -> pa.Table:
        """The rows of ``records`` whose keys the table does not hold, found through the index as ``read_keys`` finds
        them (Hudi's ``filterExists``: to drop records already written before inserting a batch). Under an index
        that is not global a key is held only in its own partition; a row without a record key is never held."""
        return KeyLookup.of(self.table, options).filter_exists(records)

    def write(self, data: pa.Table, **options: str) -> str:
        """Write ``data`` in this process (the operation and the table's settings are the options of a Spark
        write, ``hoodie.datasource.write.operation`` upsert by default); returns the committed instant. The
        table is created by its first write."""
        result = run_local_write(self.storage, data, {**self.storage_options, **options})
        self._table = result.table
        return result.instant

    def _to_change(self, options: Mapping[str, str]) -> Table:
        """The table as it is now (its timeline listed again), for a service that will change it: refused for
        a table version this library does not write; its metadata table deleted when ``options`` switch it
        off (``hoodie.metadata.enable=false``), else kept whole, and the service's changes recorded there
        (``services.metadata_lifecycle``). Called under the table lock, when there is one."""
        cfg = resolve_metadata_config(options)
        prepared = prepare_metadata_table(self.refresh().table, cfg, drops_switched_off=False)
        self._table = planning_from_metadata(prepared, cfg.enabled)
        return self._table

    def _after(self, run: ServiceRun) -> list[str]:
        self._table = run.table
        return list(run.instants)

    @contextmanager
    def _table_lock(self, options: Mapping[str, str]) -> Iterator[Guard | None]:
        """The table lock's ``locked`` under optimistic concurrency control (``hoodie.write.concurrency.mode``
        and ``hoodie.write.lock.*`` in ``options``), so a service run here can share the table with writers
        in other processes; None for a single writer."""
        concurrency = resolve_concurrency_config(options)
        if not concurrency.is_occ:
            yield None
            return
        transactions = TransactionManager(self.storage, concurrency)
        try:
            yield transactions.locked
        finally:
            transactions.close()

    def compact(self, **options: str) -> list[str]:
        """Finish pending compactions, then schedule and run a new one (MERGE_ON_READ); returns the
        compaction instants completed. Options: the ``hoodie.compaction.*`` keys (and, beside other
        writers, the concurrency ones: scheduling and completion then take the table lock)."""
        with self._table_lock(options) as guard:
            with (guard or nullcontext)():
                table = self._to_change(options)
            return self._after(compact_now(table, resolve_services_config(options), guard))

    def schedule_compaction(self, **options: str) -> str | None:
        """Plan a compaction (MERGE_ON_READ) without running it; returns its instant, or None when no file
        slice needs one."""
        with self._table_lock(options) as guard, (guard or nullcontext)():
            table = self._to_change(options)
            scheduled = self._after(schedule_compaction(table, resolve_services_config(options).compaction))
        return scheduled[0] if scheduled else None

    def run_compaction(self, instant_time: str, **options: str) -> str:
        """Run the planned compaction ``instant_time`` (from ``schedule_compaction``, maybe in another process)."""
        with self._table_lock(options) as guard:
            with (guard or nullcontext)():
                table = self._to_change(options)
            run = execute_compaction(table, instant_time, resolve_services_config(options).compaction,
                                     guard or nullcontext)
        return self._after(run)[0]

    def clean(self, **options: str) -> str | None:
        """Delete file slices outside the retained window (``hoodie.cleaner.*`` options)."""
        with self._table_lock(options) as guard, (guard or nullcontext)():
            cleaned = self._after(clean(self._to_change(options), resolve_services_config(options).clean))
        return cleaned[0] if cleaned else None

    def archive(self, **options: str) -> list[str]:
        """Move old instants off the active timeline (``hoodie.keep.min/max.commits``)."""
        with self._table_lock(options) as guard, (guard or nullcontext)():
            return self._after(archive(self._to_change(options), resolve_services_config(options).archive))

    def rollback(self, instant_time: str | None = None, **options: str) -> list[str]:
        """Roll back ``instant_time`` (pending, or the latest completed write); with no argument,
        every failed write (pending, its heartbeat expired: ``hoodie.client.heartbeat.*`` options).
        A restore that died midway is finished first. Returns the instants rolled back."""
        with self._table_lock(options) as guard, (guard or nullcontext)():
            table = restore.finish_pending_restores(self._to_change(options))  # one that died midway goes first
            rolled = self._rollback(table, instant_time, options)
            self.refresh()
        return rolled

    @staticmethod
    def _rollback(table: Table, instant_time: str | None, options: Mapping[str, str]) -> list[str]:
        if instant_time is None:
            return rollback_failed_writes(table, resolve_concurrency_config(options).heartbeat_expiry_ms)
        instant = table.timeline.find(instant_time)
        if instant is not None and not instant.is_completed:
            rollback_pending(table, instant)
        else:
            rollback_completed(table, instant_time)
        return [instant_time]

    # ---- the metadata table

    def _metadata(self) -> MetadataTableReader:
        """The metadata table as of this object's table, when its ``files`` partition is ready."""
        reader = MetadataTableReader.listing_of(self.table)
        if reader is None:
            raise MetadataTableNotReadyError(
                f"Table {self.path} has no metadata table this library reads (hoodie.table.metadata.partitions="
                f"{','.join(ready_partitions(self.config)) or 'none'}, a 'files' partition with a completed instant "
                "needed); build it with create_metadata_table() or CALL create_metadata_table")
        return reader

    def metadata_partitions(self) -> list[str]:
        """The data table's partitions as its metadata table lists them, sorted (``""``: a non-partitioned
        table's one). ``MetadataTableNotReadyError`` when it has no metadata table (so for every ``metadata_*``)."""
        return self._metadata().all_partitions()

    def metadata_files(self, partition: str = "") -> dict[str, int]:
        """The files of ``partition`` (``""``: a non-partitioned table's) as the metadata table lists them, name
        -> size, sorted by name; none for a partition it does not list."""
        return dict(sorted(self._metadata().partition_files([partition])[partition].items()))

    def metadata_column_stats(self, column: str, partitions: Sequence[str] | None = None) -> pa.Table:
        """What the metadata table's ``column_stats`` partition keeps of ``column`` for each file (base and log)
        of the latest file slices of ``partitions`` (every partition when None): rows ``partition``,
        ``file_name``, ``min_value`` and ``max_value`` (of the column's type), ``null_count``, ``value_count``,
        ``total_size``, ``total_uncompressed_size``, sorted by partition and file; a file with no statistics of
        the column has no row. ``MetadataTableNotReadyError`` when ``column_stats`` is not ready."""
        reader = self._metadata()
        reader.file_slices(MetadataPartition.COLUMN_STATS)  # refused here when it is not ready
        wanted = reader.all_partitions() if partitions is None else list(partitions)
        view = self.table.file_system_view(wanted, reader.partition_file_infos(wanted))
        files = [(s.partition_path, name) for s in view.latest_file_slices(partitions=wanted) for name in s.file_names]
        stats = reader.column_stats([column], files)
        partition_of = {name: partition for partition, name in files}
        schema = self.table.schema
        typ = schema.field(column).type if column in schema.names else None
        return pa.table({
            "partition": pa.array([partition_of[n] for n in stats.column("file_name").to_pylist()], pa.string()),
            "file_name": stats.column("file_name"),
            "min_value": unwrap_values(stats.column("min_value"), typ),
            "max_value": unwrap_values(stats.column("max_value"), typ),
            **{c: stats.column(c) for c in ("null_count", "value_count", "total_size", "total_uncompressed_size")},
        }).sort_by([("partition", "ascending"), ("file_name", "ascending")])

    def metadata_stats(self) -> dict[str, int]:
        """The metadata table's size per partition of it (``files.totalBaseFileSizeInBytes``,
        ``.totalLogFileSizeInBytes``, ``.baseFileCount``, ``.logFileCount`` of its latest file slices) and the data
        table's ``partitionCount``: Hudi's ``HoodieMetadataMetrics`` statistics."""
        return self._metadata().stats()

    def validate_metadata(self, verbose: bool = False) -> list[FileListingDifference]:
        """The metadata table's listing against a listing of storage, file by file with sizes: the files of every
        partition either lists that differ (in one listing only, or of another size), all files with
        ``verbose``. Storage's side holds every data file, committed or not, as Hudi's
        ``validate_metadata_table_files`` lists it: a write in flight shows its files as in storage only."""
        return compare_file_listings(self.table, self._metadata(), verbose)

    def create_metadata_table(self, **options: str) -> list[str]:
        """Build the metadata table from a listing of the table: ``files`` and each index partition ``options``
        switch on (``hoodie.metadata.index.column.stats.enable``, ``...bloom.filter.enable``,
        ``hoodie.metadata.record.index.enable``) that is not ready; returns the partitions built. Refused
        (``MetadataTableError``) while a data instant is pending, whose files could not be told from committed
        ones. Writes keep it from then on."""
        options = {**options, METADATA_ENABLE.key: "true"}
        with self._table_lock(options) as guard, (guard or nullcontext)():
            table = self._to_change(options)
            pending = table.timeline.pending()
            if pending:
                raise MetadataTableError(
                    f"Cannot build the metadata table of {self.path} while instants are pending: "
                    f"{', '.join(f'{i.timestamp} ({i.action})' for i in pending)}; complete or roll them back first")
            before = set(ready_partitions(table.config))
            self._table = build_metadata_table(table, resolve_metadata_config(options))
        ready = set(ready_partitions(self.config)) - before
        return [p.path for p in MetadataPartition if p.path in ready]

    def delete_metadata_table(self, **options: str) -> bool:
        """Delete the metadata table (``HoodieTableMetadataUtil.deleteMetadataTable``): ``hoodie.properties``
        stops listing its partitions, then its folder goes; readers list storage from then on, and the next write
        with ``hoodie.metadata.enable=true`` builds it again. Returns whether there was one."""
        with self._table_lock(options) as guard, (guard or nullcontext)():
            before = self.refresh().table
            off = resolve_metadata_config({**options, METADATA_ENABLE.key: "false"})
            self._table = prepare_metadata_table(before, off)
        return bool(metadata_partitions(before.config)) or before.timeline.metadata_folder

    # ---- savepoints and restore (services.savepoint, services.restore)

    def create_savepoint(self, instant_time: str | None = None, user: str = "", comments: str = "",
                         **options: str) -> str:
        """Savepoint the completed commit ``instant_time`` (the latest when None), recording ``user`` and
        ``comments``: the cleaner keeps its files and ``rollback_to_savepoint`` can return the table to it.
        Returns the savepointed commit. ``SavepointError`` for an unknown, pending, cleaned or savepointed one."""
        with self._table_lock(options) as guard, (guard or nullcontext)():
            return self._after(savepoint.create_savepoint(self._to_change(options), instant_time, user, comments))[0]

    def show_savepoints(self) -> list[savepoint.SavepointInfo]:
        """The savepoints, oldest first."""
        return savepoint.show_savepoints(self.timeline())

    def delete_savepoint(self, instant_time: str, **options: str) -> None:
        """Delete the savepoint of ``instant_time``; the cleaner may remove its files from then on."""
        with self._table_lock(options) as guard, (guard or nullcontext)():
            self._table = savepoint.delete_savepoint(self._to_change(options), instant_time)

    def rollback_to_savepoint(self, instant_time: str, **options: str) -> str:
        """Restore the table to the savepoint ``instant_time``: every write, compaction and clustering after it is
        rolled back (``services.restore``), and the metadata table, deleted first, is built again from storage with
        the partitions it had (when ``hoodie.metadata.enable``, its default, and nothing older is pending). Returns
        the restore instant.
        Under optimistic concurrency control it holds the table lock throughout; it refuses while a writer of a
        later instant is at work."""
        cfg = resolve_metadata_config(options)
        with self._table_lock(options) as guard, (guard or nullcontext)():
            run = restore.restore_to_savepoint(self.refresh().table, instant_time,
                                               resolve_concurrency_config(options).heartbeat_expiry_ms, cfg,
                                               resolve_services_config(options).archive.beyond_savepoint)
            self._table = planning_from_metadata(run.table, cfg.enabled)
        return run.instants[0]

    # ---- clustering

    def schedule_clustering(self, **options: str) -> str | None:
        """Plan a clustering (``hoodie.clustering.plan.strategy.*`` options) without running it; returns its instant,
        or None when no file slice is worth clustering (or, with ``hoodie.clustering.inline`` or
        ``hoodie.clustering.async.enabled`` set, fewer commits than their ``max.commits`` followed the last one)."""
        with self._table_lock(options) as guard, (guard or nullcontext)():
            table = self._to_change(options)
            services = self._clustering_services(options)
            gated = services.inline_cluster or services.async_cluster or services.schedule_cluster_inline
            if gated and commits_since_last_clustering(table.timeline) < services.cluster_max_commits:
                return None
            scheduled = self._after(schedule_clustering(table, services.clustering))
        return scheduled[0] if scheduled else None

    def run_clustering(self, instant_time: str, *, runner: GroupRunner = run_here, **options: str) -> str:
        """Run the planned clustering ``instant_time`` (from ``schedule_clustering``, maybe in another process).
        ``runner`` runs its groups: in this process by default (``spark.clustering`` runs them on Spark)."""
        with self._table_lock(options) as guard:
            with (guard or nullcontext)():
                table = self._to_change(options)
            run = execute_clustering(table, instant_time, self._clustering_services(options).clustering,
                                     guard or nullcontext, runner)
        return self._after(run)[0]

    def cluster(self, *, runner: GroupRunner = run_here, **options: str) -> list[str]:
        """Schedule a clustering when none is pending, then run every pending one; returns the clustering instants
        completed. Options: the ``hoodie.clustering.*`` and ``hoodie.layout.optimize.*`` keys (and, beside other
        writers, the concurrency ones); ``runner`` as for ``run_clustering``."""
        with self._table_lock(options) as guard:
            with (guard or nullcontext)():
                table = self._to_change(options)
            return self._after(cluster_now(table, self._clustering_services(options), guard, runner))

    def _clustering_services(self, options: Mapping[str, str]) -> ServicesConfig:
        """The services' settings, the files a clustering writes made as the table's writes make them (the index's
        bloom filter, the compression) from the same options."""
        write = resolve_write_config(options, self.config)
        return resolve_services_config(options, write.index, write.sizing.compression)

    def pending_clustering(self) -> list[ClusteringPlanInfo]:
        """The pending clusterings (requested or inflight), oldest first."""
        return pending_clustering_info(self.table)

    # ---- the command line's questions: a clean planned, the whole table checked

    def clean_plan(self, **options: str) -> tuple[dict[str, list[str]], str]:
        """What ``clean(**options)`` would delete now, per partition (file names), and the earliest instant it
        would retain, with nothing deleted: the cleaner's plan (``CleanPlanner``) on the table as it is now.
        A pending clean or failed write ``clean`` would finish or roll back first is left as it is."""
        return files_to_clean(self.refresh().table, resolve_services_config(options).clean)

    def validate(self, progress: Progress | None = None) -> list[TableProblem]:
        """Every problem of the table as it is now (its timeline listed again), none when it is sound: files of
        completed writes missing, orphan data files, leftover markers, unreadable base files and log blocks, the
        metadata table out of step with storage (``services.table_validation``). ``progress`` is told
        ``(files read, files to read)``."""
        return validate_table(self.refresh().table, progress)
