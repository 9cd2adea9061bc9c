"""``HoodieTable(path)``: the table from Python, without Spark: timeline, commit metadata and the
table services (compaction, cleaning, archival, rollback)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from hoodie_datasource.config.concurrency_config import resolve_concurrency_config
from hoodie_datasource.config.services_config import resolve_services_config
from hoodie_datasource.config.table_config import TableConfig, load_table_config
from hoodie_datasource.errors import TimelineError
from hoodie_datasource.services.archival import archive
from hoodie_datasource.services.cleaner import clean
from hoodie_datasource.services.compaction import Guard, execute_compaction, schedule_compaction
from hoodie_datasource.services.table_services import compact_now
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.metadata_table import drop_metadata_table
from hoodie_datasource.timeline.instant import Instant
from hoodie_datasource.timeline.timeline import Timeline
from hoodie_datasource.transaction.transaction_manager import TransactionManager
from hoodie_datasource.write.rollback import rollback_completed, rollback_failed_writes, rollback_pending


@dataclass(frozen=True)
class HoodieTable:
    """``path`` is a local path or a table URI (``s3://bucket/t``, ``az://container/t``, ...);
    ``storage_options`` are ``hoodie.storage.*`` keys (credentials and endpoints)."""

    path: str
    storage_options: Mapping[str, str] = field(default_factory=dict, compare=False)

    @property
    def storage(self) -> Storage:
        """The table's storage (opened with ``storage_options``): every file access goes through it."""
        return open_storage(self.path, self.storage_options)

    @property
    def base_path(self) -> str:
        """The table's URI as the storage spells it."""
        return self.storage.uri

    @property
    def config(self) -> TableConfig:
        """The table's ``hoodie.properties``: type, key fields, version."""
        return load_table_config(self.storage)

    def timeline(self) -> Timeline:
        """The timeline as it is now: every instant, each in its latest state."""
        return Timeline.load(self.storage, self.config)

    def _timeline_to_change(self) -> Timeline:
        """The timeline, for a service that will change the table: refused for a table version this library
        does not write, and without Apache Hudi's metadata table, which it would leave stale
        (``table.metadata_table``). Called under the table lock, when there is one."""
        timeline = self.timeline()
        timeline.config.check_writable(timeline.storage.uri)
        kept = drop_metadata_table(timeline.storage, timeline.config, timeline.metadata_folder)
        return timeline if kept is timeline.config else self.timeline()

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
                timeline = self._timeline_to_change()
            return compact_now(timeline.storage, timeline.config, resolve_services_config(options), guard)

    def schedule_compaction(self, **options: str) -> str | None:
        """Plan a compaction (MERGE_ON_READ) without running it; returns its instant, or None when no file
        slice needs one."""
        with self._table_lock(options) as guard, (guard or nullcontext)():
            return schedule_compaction(self._timeline_to_change(), resolve_services_config(options).compaction)

    def run_compaction(self, instant_time: str, **options: str) -> str:
        """Run the planned compaction ``instant_time`` (from ``schedule_compaction``, maybe in another process)."""
        with self._table_lock(options) as guard:
            with (guard or nullcontext)():
                timeline = self._timeline_to_change()
            return execute_compaction(timeline, instant_time, resolve_services_config(options).compaction,
                                      guard or nullcontext)

    def clean(self, **options: str) -> str | None:
        """Delete file slices outside the retained window (``hoodie.cleaner.*`` options)."""
        with self._table_lock(options) as guard, (guard or nullcontext)():
            return clean(self._timeline_to_change(), resolve_services_config(options).clean)

    def archive(self, **options: str) -> list[str]:
        """Move old instants off the active timeline (``hoodie.keep.min/max.commits``)."""
        with self._table_lock(options) as guard, (guard or nullcontext)():
            return archive(self._timeline_to_change(), resolve_services_config(options).archive)

    def rollback(self, instant_time: str | None = None, **options: str) -> list[str]:
        """Roll back ``instant_time`` (pending, or the latest completed write); with no argument,
        every failed write (pending, its heartbeat expired: ``hoodie.client.heartbeat.*`` options).
        Returns the instants rolled back."""
        with self._table_lock(options) as guard, (guard or nullcontext)():
            return self._rollback(instant_time, options)

    def _rollback(self, instant_time: str | None, options: Mapping[str, str]) -> list[str]:
        timeline = self._timeline_to_change()
        if instant_time is None:
            return rollback_failed_writes(timeline, resolve_concurrency_config(options).heartbeat_expiry_ms)
        instant = timeline.find(instant_time)
        if instant is not None and not instant.is_completed:
            rollback_pending(timeline, instant)
        else:
            rollback_completed(timeline, instant_time)
        return [instant_time]
