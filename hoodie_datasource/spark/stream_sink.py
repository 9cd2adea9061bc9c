"""The Structured Streaming sink: each micro-batch is one commit, written exactly once.

Design. ``writeStream.format("hoodie")...start(path)`` (after ``register()``, see ``spark.stream_start``)
runs the query with ``foreachBatch(HoodieStreamSink(...))``: Spark hands the sink each micro-batch as a
DataFrame together with its batch id, in the process that owns the query's SparkSession (the driver on
classic Spark; the Connect server's streaming worker, with a Connect session, on Spark Connect). The
sink gives that DataFrame to ``write_dataframe``, the same distributed write DAG a batch ``save()`` runs,
so the records move only between Spark tasks and the batch is one write session: one instant, one commit
(and the inline compaction, cleaning and archival that follow a commit). PySpark's own streaming writer
API (``DataSourceStreamWriter``) was not used: its ``write()`` sees each task's rows as the source
partitioned them and its ``commit()`` runs in a worker without a SparkSession, so a commit there could
not run the shuffles of tagging and file sizing; the records would have to be staged and written again
by one process (as ``spark.staged_writer`` does for SQL INSERT).

Exactly once. Spark writes a micro-batch's offsets before running it and marks it done in its commit log
after the sink returns; after a failure between the two it runs the same batch id again on restart. Like
Apache Hudi's ``HoodieStreamingSink`` the sink records the batch id in the commit's ``extraMetadata``
(``_hudi_streaming_sink_checkpoint``, see ``timeline.sink_checkpoint``), and before writing a batch it
reads the last batch id the table holds for its identifier
(``hoodie.datasource.write.streaming.checkpoint.identifier``): a batch id at or below it was committed
already and is skipped (logged). The query's checkpoint location is recorded beside it, so a second query
writing under the same identifier (running at once, or started on a new checkpoint, whose batch ids start
at 0 again and would be skipped as "already written") fails with ``StreamingSinkError`` instead.

Failures. A failing micro-batch is tried ``hoodie.datasource.write.streaming.retry.count`` times in all,
waiting ``...retry.interval.ms``, doubled after each attempt (each failed attempt rolled itself back); a
bad option, schema or record fails at once. With ``...streaming.ignore.failed.batch=true`` a batch that
still fails is logged and the query goes on without it (Hudi's setting; off by default).

Differences from Apache Hudi's sink: Hudi does not skip replayed batches of ``delete`` (its SQL deletes
use a sentinel batch id); here every operation is skipped on replay, deletes being as much a part of the
stream. Hudi maps every output mode other than append to an overwrite of the table; here only
``complete`` does (``insert_overwrite_table``): ``update`` emits only the changed rows, which an upsert
writes. Empty micro-batches make no commit.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from pyspark.sql import DataFrame

from hoodie_datasource import fault_points
from hoodie_datasource.config.streaming_config import StreamingSinkConfig
from hoodie_datasource.config.table_config import table_exists
from hoodie_datasource.errors import (
    HoodieConfigError,
    InvalidRecordError,
    InvalidTablePathError,
    SchemaMismatchError,
    StreamingSinkError,
    UnsupportedTableError,
)
from hoodie_datasource.spark.write_dag import write_dataframe
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.sink_checkpoint import latest_sink_checkpoint, sink_metadata

logger = logging.getLogger(__name__)

UNNAMED_QUERY = "unnamed-query-"  # the identity of a query Spark gives a checkpoint folder of its own each run
# errors of the batch itself or of the options: another attempt would fail the same way
NOT_RETRIED = (HoodieConfigError, SchemaMismatchError, InvalidRecordError, InvalidTablePathError,
               UnsupportedTableError, StreamingSinkError)


@dataclass(frozen=True)
class HoodieStreamSink:
    """The ``foreachBatch`` function of a hoodie streaming query. It is pickled with the query (Spark
    Connect runs it in the server's Python worker), so it holds only resolved values."""

    path: str
    options: dict[str, str]  # the write options, the operation resolved
    config: StreamingSinkConfig
    query: str  # the query's checkpoint location: what a restart of the same query shares

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        try:
            self._write_with_retries(batch, batch_id)
        except StreamingSinkError:
            raise  # never ignored: every later batch would be dropped the same way
        except Exception:
            if not self.config.ignore_failed_batch:
                raise
            logger.exception("Micro-batch %d for %s failed and is dropped: the query goes on without its rows "
                             "(hoodie.datasource.write.streaming.ignore.failed.batch=true)", batch_id, self.path)

    def _write_with_retries(self, batch: DataFrame, batch_id: int) -> None:
        waits = self.config.retry_waits_s()
        for attempt, wait in enumerate([*waits, None], start=1):
            try:
                self._write(batch, batch_id)
                return
            except NOT_RETRIED:
                raise
            except Exception as exc:
                if wait is None:
                    raise
                logger.warning("Micro-batch %d for %s failed (attempt %d of %d): %s; trying again in %.1f s",
                               batch_id, self.path, attempt, len(waits) + 1, exc, wait)
                time.sleep(wait)

    def _write(self, batch: DataFrame, batch_id: int) -> None:
        """One attempt: skip a batch the table holds already, else write it as one commit. The checkpoint is
        read again on every attempt, so a retry never writes a batch an earlier attempt committed."""
        last = self.last_committed_batch()
        if last is not None and batch_id <= last:
            logger.warning("Skipping micro-batch %d for %s: the table holds batches up to %d of writer %r "
                           "(a batch Spark runs again after a restart)", batch_id, self.path, last,
                           self.config.identifier)
            return
        if batch.isEmpty():
            logger.info("Micro-batch %d for %s has no rows: no commit", batch_id, self.path)
            return
        metadata = sink_metadata(self.config.identifier, batch_id, self.query)
        instant = write_dataframe(batch, self.path, self.options, metadata)
        logger.info("Micro-batch %d for %s committed as %s", batch_id, self.path, instant)
        fault_points.reach(fault_points.AFTER_STREAM_BATCH_COMMITTED, path=self.path, batch_id=batch_id,
                           instant=instant)

    def last_committed_batch(self) -> int | None:
        """The last batch id the table holds for this sink's identifier; a batch of another query under
        that identifier is an error (its batch ids cannot be told from this query's)."""
        storage = open_storage(self.path, self.options)
        if not table_exists(storage):
            return None
        found = latest_sink_checkpoint(Table.load(storage).timeline, self.config.identifier)
        if found is None:
            return None
        if found.query is not None and found.query != self.query:
            this = (f"checkpoints at {self.query}" if not self.query.startswith(UNNAMED_QUERY) else
                    "has no checkpoint location of its own (option checkpointLocation), so it can never resume")
            raise StreamingSinkError(
                f"Commit {found.instant} of {self.path} holds micro-batch {found.batch_id} of writer "
                f"{self.config.identifier!r} written by the query checkpointing at {found.query}, and this query "
                f"{this}. Two queries cannot share a writer identifier: give each its own "
                f"hoodie.datasource.write.streaming.checkpoint.identifier (and optimistic concurrency control "
                f"when they run at once), or restart the query from its own checkpoint"
            )
        return found.batch_id
