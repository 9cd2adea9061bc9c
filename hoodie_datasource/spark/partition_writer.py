"""The data source writer for input clustered by the table's partition columns (SQL writes through the
jvm-shim, which asks Spark for that distribution).

Every partition's rows are in one task, so each task does the whole write of its partitions, as a
task of the DataFrame write DAG does: tag them against the partition's files, plan their inserts,
write their file groups, check the instant is still pending (``write.task_attempt``). ``commit()``
completes the instant with the tasks' write stats. The instant is started when Spark asks for the
writer, before any task runs.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from hoodie_datasource.client.write_client import WriteSession, start_write
from hoodie_datasource.config.write_config import WriteConfig
from hoodie_datasource.errors import WriteLayoutError
from hoodie_datasource.index.registry import index_for
from hoodie_datasource.spark.arrow_steps import task_token
from hoodie_datasource.spark.shim_options import CLUSTERED_OPTION, is_set
from hoodie_datasource.spark.types import spark_arrow_schema
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.keygen import DEFAULT_PARTITION
from hoodie_datasource.timeline.commit_metadata import WriteStat
from hoodie_datasource.write import record_keys
from hoodie_datasource.write.stage_timer import StageTimer
from hoodie_datasource.write.task_attempt import end_task_attempt

logger = logging.getLogger(__name__)

def clustered_input(options: dict[str, str], config: WriteConfig) -> bool:
    """The input is clustered by partition and the write can run per partition (the index is not global: a
    partition's records are tagged against that partition's files alone). Clustering by a time-formatted field's
    values (``KeyGenerator.timestamp_fields``) does not cluster by path: many values make one path."""
    return (is_set(options, CLUSTERED_OPTION) and bool(config.keygen.partition_fields)
            and not config.keygen.timestamp_fields
            and not index_for(config.index).is_global and config.operation.runs_per_partition)


@dataclass
class PartitionStats(WriterCommitMessage):
    stats: list[dict] = field(default_factory=list)
    stage_seconds: dict[str, float] = field(default_factory=dict)  # tag, profile, write
    stage_counts: dict[str, int] = field(default_factory=dict)  # the index work of tagging


def _refuse_partitions_split(done: list[PartitionStats]) -> None:
    """Each task must have held whole partitions. Spark clusters the rows by the partition columns' values,
    and values that are one partition path can be apart: null, '' and the literal default partition of a
    string column (all ``__HIVE_DEFAULT_PARTITION__``), or a '/' in a value of a path of several fields.
    Two tasks that wrote one partition may have rewritten the same file group or inserted the same key
    twice, so the write is refused (and rolled back) rather than committed."""
    first: dict[str, int] = {}
    for task, message in enumerate(done):
        for partition in {s["partitionPath"] for s in message.stats}:
            if first.setdefault(partition, task) != task:
                raise WriteLayoutError(
                    f"Rows of partition {partition!r} reached two tasks of this SQL write (Spark clusters them "
                    f"by the partition columns' values, and null, '' and {DEFAULT_PARTITION!r} of a string "
                    "column, or values holding '/', can be one partition path); nothing was written. Write such "
                    "rows with SET spark.hoodie.sql.clusteredWrites=false (the commit then writes all rows)")


class PartitionWriter(DataSourceArrowWriter):
    def __init__(self, session: WriteSession):
        self.session = session
        self.writer = session.record_writer()

    @staticmethod
    def create(storage: Storage, options: dict[str, str], schema: StructType) -> PartitionWriter:
        options = {key: value for key, value in options.items() if key.lower() != CLUSTERED_OPTION}
        session = start_write(storage, options, spark_arrow_schema(schema))
        session.mark_inflight({})
        return PartitionWriter(session)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> PartitionStats:
        batches = list(iterator)
        if not batches:
            return PartitionStats()
        timer = StageTimer()
        records = record_keys.keyed(pa.Table.from_batches(batches), self.session.config)
        token, task_partition = task_token()
        stats = self.writer.write_records(records, token, task_partition, timer)
        stats = end_task_attempt(self.writer.table, self.session.instant, stats)  # the attempt's last step
        return PartitionStats([s.as_dict() for s in stats], timer.seconds, timer.counts)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        try:
            done = [m for m in messages if isinstance(m, PartitionStats)]
            _refuse_partitions_split(done)
            stats = [WriteStat.from_dict(s) for m in done for s in m.stats]
            for stage in {stage for m in done for stage in m.stage_seconds}:
                self.session.stage_seconds[f"{stage}_task"] = sum(m.stage_seconds.get(stage, 0.0) for m in done)
            counter = StageTimer(counts=self.session.stage_counts)
            for m in done:
                counter.count(m.stage_counts)
            result = self.session.commit(stats)
            logger.info("Committed %s (%s, %d file groups)", result.instant, self.session.config.operation, len(stats))
        except BaseException:  # rolled back here, whether or not Spark calls abort()
            self.session.abort()
            raise
        self.session.run_table_services(result.table)  # after the commit point: a failing service fails no write

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        self.session.abort()

