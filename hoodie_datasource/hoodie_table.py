"""``HoodieTable(path)``: the table from Python, without Spark: its timeline and commit metadata, reads
(``scan``, and by key through the index: ``read_keys``, ``filter_exists``) and writes (``write``) in this process,
and the table services (compaction, cleaning, archival, rollback).

It holds the table handle (``table.table.Table``: ``hoodie.properties`` and one listing of the timeline),
loaded once, the first time something asks for it; what it shows is the table as of that listing, until
``refresh()`` lists the timeline again. Its own writes and services leave it holding the table they left.
A service first lists the timeline again (under the table lock, when there is one), since a change must
start from the table as it is.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from hoodie_datasource.client.local_engine import run_local_write
from hoodie_datasource.config.concurrency_config import resolve_concurrency_config
from hoodie_datasource.config.metadata_config import resolve_metadata_config
from hoodie_datasource.config.read_config import resolve_read_config
from hoodie_datasource.config.services_config import resolve_services_config
from hoodie_datasource.config.table_config import TableConfig
from hoodie_datasource.errors import TimelineError
from hoodie_datasource.metadata.reader import planning_from_metadata
from hoodie_datasource.read.key_lookup import KeyLookup
from hoodie_datasource.read.table_reader import read_query
from hoodie_datasource.services.archival import archive
from hoodie_datasource.services.cleaner import clean
from hoodie_datasource.services.compaction import Guard, execute_compaction, schedule_compaction
from hoodie_datasource.services.metadata_lifecycle import prepare_metadata_table
from hoodie_datasource.services.service_run import ServiceRun
from hoodie_datasource.services.table_services import compact_now
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.storage.storage import Storage
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
        Returns the instants rolled back."""
        with self._table_lock(options) as guard, (guard or nullcontext)():
            rolled = self._rollback(self._to_change(options), instant_time, options)
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
