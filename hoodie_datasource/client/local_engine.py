"""The whole write in one Python process with pyarrow: for tests, small tables and for the data
source's own ``commit()`` (SQL inserts), where no SparkSession is available."""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.client.write_client import CommitResult, WriteSession, run_write
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.file_names import UNKNOWN_WRITE_TOKEN
from hoodie_datasource.table.meta_columns import PARTITION_PATH_COLUMN, RECORD_KEY_COLUMN
from hoodie_datasource.write import record_keys
from hoodie_datasource.write.bulk_insert import write_bulk_insert_task
from hoodie_datasource.write.stage_timer import StageTimer


def write_local(table: str | Storage, data: pa.Table, options: Mapping[str, str],
                extra_metadata: Mapping[str, str] | None = None) -> str:
    """Write ``data`` with the operation in ``options``; return the committed instant time. The commit
    carries ``extra_metadata`` in its ``extraMetadata``.

    ``table`` is the table's storage, or its URI (a Python API entry point: the storage is then
    opened with the ``hoodie.storage.*`` keys of ``options``)."""
    storage = open_storage(table, options) if isinstance(table, str) else table
    return run_local_write(storage, data, options, extra_metadata).instant


def run_local_write(storage: Storage, data: pa.Table, options: Mapping[str, str],
                    extra_metadata: Mapping[str, str] | None = None) -> CommitResult:
    """``write_local``'s whole result: the commit's counts and the table after it and its table services."""
    return run_write(storage, options, data.schema, lambda session: _run(session, data), extra_metadata)


def _run(session: WriteSession, data: pa.Table) -> CommitResult:
    if session.streams_bulk_insert:
        return _bulk_insert(session, data)
    records = record_keys.keyed(data, session.config)
    if session.index.is_global:
        records = record_keys.combined_across_partitions(records, session.config)
    partitions = pc.unique(records.column(PARTITION_PATH_COLUMN)).to_pylist()
    if session.operation.drops_partitions:
        return session.drop_partitions(partitions)
    timer = StageTimer(session.stage_seconds, session.stage_counts)
    writer = session.record_writer()
    tagged, files, index_counts = writer.tag(records)
    timer.lap("tag")
    if index_counts is not None:
        timer.count(index_counts.as_dict())
    routed, targets, counts = writer.route(tagged, files)
    session.mark_inflight({p: {"inserts": n} for p, n in counts.items()})
    timer.lap("profile")
    stats = writer.write_groups(routed, targets, UNKNOWN_WRITE_TOKEN, 0)
    timer.lap("write")
    return session.commit(stats, partitions, single_attempt=True)


# the order of the records of a bulk insert in its one task, by ``hoodie.bulkinsert.sort.mode`` (None: the
# option unset); NONE and PARTITION_PATH_REPARTITION keep the input's, as one Spark task would receive it
_SORT_KEYS = {
    None: (PARTITION_PATH_COLUMN,),
    "GLOBAL_SORT": (PARTITION_PATH_COLUMN, RECORD_KEY_COLUMN),
    "PARTITION_SORT": (PARTITION_PATH_COLUMN, RECORD_KEY_COLUMN),
    "PARTITION_PATH_REPARTITION_AND_SORT": (PARTITION_PATH_COLUMN,),
}


def _bulk_insert(session: WriteSession, data: pa.Table) -> CommitResult:
    """A bulk insert as one task (``write.bulk_insert``), fed the records' batches one by one as a Spark
    task is, sorted as ``_SORT_KEYS`` says: one task holds every record, so the size-balanced default
    (``write.bulk_insert_layout``) amounts to writing one partition after the other."""
    cfg = session.config
    session.mark_inflight({})
    timer = StageTimer(session.stage_seconds)
    records = record_keys.keyed(data, cfg)
    sort_keys = _SORT_KEYS.get(cfg.bulk_insert_sort_mode, ())
    if sort_keys:
        records = records.sort_by([(column, "ascending") for column in sort_keys])
    timer.lap("keys")
    batches = (pa.Table.from_batches([batch]) for batch in records.to_batches())
    stats = write_bulk_insert_task(session.context(), cfg, session.average_record_size(), batches,
                                   UNKNOWN_WRITE_TOKEN, 0, timer, keyed=True, sorted_by_partition=bool(sort_keys))
    return session.commit(stats, single_attempt=True)
