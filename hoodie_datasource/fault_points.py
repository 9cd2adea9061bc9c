"""Named fault points: the places in writes and table services where tests inject failures. No-ops in
normal use.

A point does something only when the environment variable ``HOODIE_FAULT_POINTS`` names it with a
hook to call, as comma-separated ``<point>=<module>:<function>`` entries, e.g.
``HOODIE_FAULT_POINTS=after_data_file_written=tests.cluster.fault_hooks:after_data_file_written``.
The hook is called with the point's name and its context (keyword arguments) and may raise, sleep or
kill the process; the variable is read once per process, so on a Spark cluster it is set for the
executors (``spark.executorEnv.HOODIE_FAULT_POINTS``) and the hook module must be importable there.

Points, in the order a write reaches them (context in brackets; ``storage`` is the table's):
    after_requested           the write's ``T.<action>.requested`` exists, the lock (if any) released
                              [storage, instant]
    after_inflight            ``T.<action>.inflight`` exists, before any data file [storage, instant]
    after_data_file_written   a base or log file was written (its marker first), before the task
                              reports its write stat [storage, path (relative to the table)]
    before_commit             every data file and partition metafile written, markers reconciled;
                              before the table lock and the completed instant [storage, instant]
    while_holding_lock        the table lock was just taken (optimistic concurrency control only)
                              [storage]
    metadata_before_commit    the metadata table's files of one of its instants (a deltacommit's log files,
                              a compaction's or a partition's first base files) are written, before that
                              instant completes [storage (the metadata table's), instant]
    metadata_after_commit     the metadata table's deltacommit of a data instant completed, before the data
                              instant does [storage, instant]
    metadata_initialized      a metadata-table partition's first deltacommit completed, before
                              ``hoodie.properties`` lists the partition as ready [storage, partition]
    after_completed_create    the completed instant file of a data-table instant was created (the commit
                              point passed), before its creator learns so: a failure here is a lost answer
                              to the create, for writes and table services alike [storage, path]
    mid_compaction            a compaction wrote one of its base files [storage, instant, path]
    after_clustering_scheduled  a clustering plan's ``T.replacecommit.requested`` exists [storage, instant]
    mid_clustering            a clustering wrote one of its base files [storage, instant, path]
    mid_clean                 a clean deleted one of the files it planned [storage, instant, path]
    mid_rollback              a rollback deleted one of the data files of the instant it undoes
                              [storage, instant, path]
    mid_archival              archival moved one instant off the active timeline [storage, instant]
    after_savepoint_inflight  ``T.savepoint.inflight`` exists, before the completed savepoint [storage, instant]
    after_restore_requested   a restore's plan (``R.restore.requested``) exists, before anything is rolled back
                              [storage, instant]
    mid_restore               a restore rolled back one instant of its plan [storage, instant, rolled_back]
    after_stream_batch_committed  the streaming sink committed a micro-batch, before it returns to Spark
                              (which then records the batch in its own checkpoint) [path (the table),
                              batch_id, instant]
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable

from hoodie_datasource.errors import HoodieConfigError

ENV_VAR = "HOODIE_FAULT_POINTS"
AFTER_REQUESTED = "after_requested"
AFTER_INFLIGHT = "after_inflight"
AFTER_DATA_FILE_WRITTEN = "after_data_file_written"
BEFORE_COMMIT = "before_commit"
WHILE_HOLDING_LOCK = "while_holding_lock"
AFTER_COMPLETED_CREATE = "after_completed_create"
METADATA_BEFORE_COMMIT = "metadata_before_commit"
METADATA_AFTER_COMMIT = "metadata_after_commit"
METADATA_INITIALIZED = "metadata_initialized"
MID_COMPACTION = "mid_compaction"
AFTER_CLUSTERING_SCHEDULED = "after_clustering_scheduled"
MID_CLUSTERING = "mid_clustering"
MID_CLEAN = "mid_clean"
MID_ROLLBACK = "mid_rollback"
MID_ARCHIVAL = "mid_archival"
AFTER_STREAM_BATCH_COMMITTED = "after_stream_batch_committed"
AFTER_SAVEPOINT_INFLIGHT = "after_savepoint_inflight"
AFTER_RESTORE_REQUESTED = "after_restore_requested"
MID_RESTORE = "mid_restore"
POINTS = (AFTER_REQUESTED, AFTER_INFLIGHT, AFTER_DATA_FILE_WRITTEN, BEFORE_COMMIT, WHILE_HOLDING_LOCK,
          METADATA_BEFORE_COMMIT, METADATA_AFTER_COMMIT, METADATA_INITIALIZED, AFTER_COMPLETED_CREATE, MID_COMPACTION,
          AFTER_CLUSTERING_SCHEDULED, MID_CLUSTERING, MID_CLEAN, MID_ROLLBACK, MID_ARCHIVAL,
          AFTER_STREAM_BATCH_COMMITTED, AFTER_SAVEPOINT_INFLIGHT, AFTER_RESTORE_REQUESTED, MID_RESTORE)


def reach(point: str, **context) -> None:
    """Call the hook ``HOODIE_FAULT_POINTS`` gives for ``point``, if any."""
    hook = _hooks().get(point)
    if hook is not None:
        hook(point, **context)


@functools.cache
def _hooks() -> dict[str, Callable[..., None]]:
    spec = os.environ.get(ENV_VAR, "").strip()
    hooks = {}
    for entry in filter(None, (e.strip() for e in spec.split(","))):
        point, _, target = entry.partition("=")
        module, _, function = target.partition(":")
        if point not in POINTS or not module or not function:
            raise HoodieConfigError(f"{ENV_VAR} entry {entry!r} is not <point>=<module>:<function> with a point "
                                    f"among {', '.join(POINTS)}")
        hooks[point] = getattr(importlib.import_module(module), function)
    return hooks
