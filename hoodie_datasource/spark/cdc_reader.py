"""The Spark reader of CDC queries (``hoodie.datasource.query.incremental.format=cdc``): file groups
spread over the read tasks, each task reading its groups' changes with the core reader
(``read.cdc_reader``), as Hudi's ``HoodieCDCRDD`` makes one partition per file group's splits.

Under the jvm-shim, whose native reads hand base files to Spark's parquet scan, a CDC query lists one
placeholder slice that needs the Python reader, so the whole query comes here.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition
from pyspark.sql.types import StringType, StructField, StructType

from hoodie_datasource.read.cdc_reader import CDC_SCHEMA, CDCPlan, read_cdc_groups
from hoodie_datasource.read.planned_files import PlannedFile, PlannedFiles
from hoodie_datasource.table.meta_columns import conform

CDC_SPARK_SCHEMA = StructType([StructField(f.name, StringType(), True) for f in CDC_SCHEMA])


def cdc_listing(plan: CDCPlan) -> PlannedFiles:
    """What the jvm-shim lists for a CDC query: one slice its parquet scan cannot read."""
    return PlannedFiles(plan.end, None, (PlannedFile("cdc", None, 0, False),))


class CDCReader(DataSourceReader):
    def __init__(self, plan: CDCPlan, parallelism: int, arrow_schema: pa.Schema):
        self.plan = plan
        self.parallelism = max(1, parallelism)
        self.arrow_schema = arrow_schema  # what Spark expects: the CDC columns, maybe fewer

    def partitions(self) -> list[InputPartition]:
        groups = self.plan.groups
        tasks = min(self.parallelism, len(groups)) or 1
        return [InputPartition(groups[i::tasks]) for i in range(tasks)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        changes = read_cdc_groups(self.plan, partition.value)
        if changes.num_rows:
            yield from conform(changes, self.arrow_schema).to_batches()
