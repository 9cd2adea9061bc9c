"""Running the table services in order after a commit, or on demand."""

from __future__ import annotations

import logging
from contextlib import nullcontext

from hoodie_datasource.config.services_config import ServicesConfig
from hoodie_datasource.config.table_config import TableConfig
from hoodie_datasource.services.archival import archive
from hoodie_datasource.services.cleaner import clean, earliest_retained
from hoodie_datasource.services.compaction import (
    Guard,
    delta_commits_since_last_compaction,
    execute_compaction,
    run_pending_compactions,
    schedule_compaction,
)
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.timeline.timeline import Timeline

logger = logging.getLogger(__name__)


def compact_now(storage: Storage, table: TableConfig, services: ServicesConfig, guard: Guard | None = None) -> list[str]:
    """Finish pending compactions, then schedule and run a new one if any slice has logs. With several
    writers (``guard``: the table lock), scheduling and each completion happen under the lock, on a
    timeline listed under it."""
    lock = guard or nullcontext
    timeline = Timeline.load(storage, table)
    done = run_pending_compactions(timeline, services.compaction, lock)
    with lock():
        instant = schedule_compaction(Timeline.load(storage, table) if done or guard else timeline, services.compaction)
    if instant is not None:
        done.append(execute_compaction(Timeline.load(storage, table), instant, services.compaction, lock))
    return done


def run_inline_services(storage: Storage, table: TableConfig, services: ServicesConfig, guard: Guard | None = None) -> None:
    """Compaction (when due), cleaning, archival. The timeline is listed once, and again only after a
    service that changed it (each listing is a LIST request on an object store). With several writers
    (``guard``: the table lock), compaction is scheduled and completed under the lock, and cleaning and
    archival run under it whole, on a timeline listed under it."""
    compacting = table.is_mor and services.inline_compact
    if not (compacting or services.auto_clean or services.auto_archive):
        return
    timeline = Timeline.load(storage, table)
    listed = True
    if compacting and delta_commits_since_last_compaction(timeline) >= services.compaction.max_delta_commits:
        compact_now(storage, table, services, guard)
        listed = False
    with (guard or nullcontext)():
        if not listed or guard is not None:
            timeline = Timeline.load(storage, table)
        if services.auto_clean and clean(timeline, services.clean) is not None:
            timeline = Timeline.load(storage, table)
        if services.auto_archive:
            archive(timeline, services.archive, earliest_retained(timeline, services.clean) or None)
