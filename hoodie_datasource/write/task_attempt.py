"""The last step of a write task attempt: its instant must still be pending, or its files go.

Spark may run several attempts of one task (a retry after a failure, a speculative duplicate) and keeps
the write stats of one; an attempt it abandons is not always stopped at once, and may still write
files after the driver committed. The files of every attempt are named with the write's instant, so a
late one would sit among the committed files, in no commit's write stats (a later rollback or clean
never finds it). Three rules keep the table exact:

1. every data file gets its marker before it is written (``table.markers``);
2. a task attempt, after its last file and before it returns its write stats, asks whether the instant
   is still pending (``is_still_pending``: completed file absent, then inflight file present). If not,
   the driver completed it without this attempt or it was rolled back: the attempt deletes its files
   and their markers and raises ``StaleTaskAttemptError``, so its stats are never used;
3. the driver reconciles the markers (deletes marked files that are not in the winning write stats)
   before it creates the completed instant, as Hudi's ``HoodieTable.reconcileAgainstMarkers`` does in
   ``finalizeWrite``, and once more after it (``WriteSession.commit``), then deletes the marker folder.
   A rollback likewise deletes files marked after it deleted the pending instant files
   (``write.rollback``).

Why no file is left: take a file F of a losing attempt A. If A's check found the instant pending, the
completed file was absent when A asked, after F and its marker were written; so the commit point came
later, and the driver's second reconciliation, listing the markers after the commit point, finds F's
marker and deletes F (for a rollback: the inflight file was there, so the rollback's second listing of
the markers, after it deleted that file, finds F's marker). If A's check found the instant completed or
rolled back, A deletes F itself. An attempt killed between writing a file and its check is covered by
the second reconciliation when its write landed before it, which is the case for a local or HDFS write
that the kill ended; an object-store PUT still in flight that lands after the second reconciliation is
the one file this cannot catch (Hudi's writers reconcile once, before the commit point). Readers may
see a late file between the commit point and the second reconciliation: it holds the same records as
the winning attempt's file of that file group.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from hoodie_datasource.errors import StaleTaskAttemptError
from hoodie_datasource.table.markers import delete_markers_of
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.commit_metadata import WriteStat
from hoodie_datasource.timeline.instant import Instant
from hoodie_datasource.timeline.transitions import is_still_pending

logger = logging.getLogger(__name__)


def end_task_attempt(table: Table, instant: Instant, stats: Sequence[WriteStat]) -> Sequence[WriteStat]:
    """``stats`` when the write's ``instant`` is still pending; otherwise delete the files they list and
    their markers and raise ``StaleTaskAttemptError``. One check per task attempt (two HEADs on an
    object store); none when the attempt wrote nothing."""
    written = [s.path for s in stats if s.path] + [p for s in stats for p in s.cdcStats or ()]
    if not written or is_still_pending(table, instant):
        return stats
    storage, instant_time = table.storage, instant.timestamp
    for path in written:
        storage.delete(path)
    delete_markers_of(storage, instant_time, written)
    logger.warning("Instant %s is no longer pending (committed without this task attempt, or rolled back): "
                   "removed the %d files the attempt wrote", instant_time, len(written))
    raise StaleTaskAttemptError(
        f"Instant {instant_time} of {storage.uri} was completed without this task attempt or rolled back; the "
        f"attempt removed its {len(written)} files ({', '.join(written[:3])}{', ...' if len(written) > 3 else ''})")
