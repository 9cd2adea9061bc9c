"""Running the table services in order after a commit (compaction, clustering, cleaning, archival), or on
demand."""

from __future__ import annotations

import logging
from contextlib import nullcontext

from hoodie_datasource.config.services_config import ServicesConfig
from hoodie_datasource.services.archival import archive
from hoodie_datasource.services.cleaner import clean, earliest_retained
from hoodie_datasource.services.clustering import (
    GroupRunner,
    commits_since_last_clustering,
    pending_clustering_instants,
    run_here,
    run_pending_clustering,
    schedule_clustering,
)
from hoodie_datasource.services.compaction import (
    delta_commits_since_last_compaction,
    execute_compaction,
    run_pending_compactions,
    schedule_compaction,
)
from hoodie_datasource.services.service_execution import Guard
from hoodie_datasource.services.service_run import ServiceRun
from hoodie_datasource.table.table import Table

logger = logging.getLogger(__name__)


def compact_now(table: Table, services: ServicesConfig, guard: Guard | None = None) -> ServiceRun:
    """Finish pending compactions, then schedule and run a new one if any slice has logs. With several
    writers (``guard``: the table lock), scheduling and each completion happen under the lock, on a
    timeline listed under it."""
    lock = guard or nullcontext
    pending = run_pending_compactions(table, services.compaction, lock)
    table = pending.table
    with lock():
        scheduled = schedule_compaction(table.refresh() if guard else table, services.compaction)
    if not scheduled.instants:
        return pending
    done = execute_compaction(scheduled.table, scheduled.instants[0], services.compaction, lock)
    return ServiceRun(pending.instants + done.instants, done.table)


def cluster_now(table: Table, services: ServicesConfig, guard: Guard | None = None,
                runner: GroupRunner = run_here) -> ServiceRun:
    """Schedule a clustering when none is pending, then run every pending one. With several writers (``guard``:
    the table lock), scheduling and each completion happen under the lock."""
    lock = guard or nullcontext
    if not pending_clustering_instants(table.timeline):
        with lock():
            table = schedule_clustering(table.refresh() if guard else table, services.clustering).table
    return run_pending_clustering(table, services.clustering, lock, runner)


def _clustering_due(table: Table, services: ServicesConfig) -> bool:
    return commits_since_last_clustering(table.timeline) >= services.cluster_max_commits


def run_inline_services(table: Table, services: ServicesConfig, guard: Guard | None = None,
                        runner: GroupRunner = run_here) -> Table:
    """Compaction and clustering (when due; ``runner`` runs a clustering's groups), cleaning, archival, on
    ``table`` (the table a commit left); the table after them. Each service hands the next the table it left, so
    the timeline is listed again only where a service cannot know what changed (each listing is a LIST request on
    an object store). With several writers (``guard``: the table lock), compaction and clustering are scheduled
    and completed under the lock, and cleaning and archival run under it whole, on a timeline listed under it."""
    compacting = table.config.is_mor and services.inline_compact
    clustering = services.inline_cluster or services.schedule_cluster_inline
    if not (compacting or clustering or services.auto_clean or services.auto_archive):
        return table
    if compacting and delta_commits_since_last_compaction(table.timeline) >= services.compaction.max_delta_commits:
        table = compact_now(table, services, guard).table
    if clustering and _clustering_due(table, services):
        if services.inline_cluster:  # hoodie.clustering.inline: schedule and run
            table = cluster_now(table, services, guard, runner).table
        else:  # hoodie.clustering.schedule.inline: another process runs it
            with (guard or nullcontext)():
                table = schedule_clustering(table.refresh() if guard else table, services.clustering).table
    with (guard or nullcontext)():
        if guard is not None:
            table = table.refresh()
        if services.auto_clean:
            table = clean(table, services.clean).table
        if services.auto_archive:
            table = archive(table, services.archive, earliest_retained(table.timeline, services.clean) or None).table
    return table
