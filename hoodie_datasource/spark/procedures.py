"""``CALL <procedure>(...)`` through the Python source: the jvm-shim reads the source with the procedure's
name and arguments as options (``spark.shim_options.PROCEDURE_OPTION``); ``schema()`` is the
procedure's result columns (its arguments checked, nothing run), and the read's one partition runs the
procedure (``hoodie_datasource.procedures``) and returns its rows. The other ``hoodie.*`` options are the
session's (``SET``), which the procedure's own ``options`` and arguments override, as in Hudi."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from hoodie_datasource.procedures import call, procedure
from hoodie_datasource.spark.shim_options import PROCEDURE_OPTION
from hoodie_datasource.spark.storage_keys import HADOOP_STORAGE_PREFIXES
from hoodie_datasource.spark.types import spark_schema

_ARG = f"{PROCEDURE_OPTION}.arg."
_POSITION = f"{PROCEDURE_OPTION}.position."


def _arguments(options: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    lowered = {k.lower(): v for k, v in options.items()}
    named = {k[len(_ARG):]: v for k, v in lowered.items() if k.startswith(_ARG)}
    positions = sorted((int(k[len(_POSITION):]), v) for k, v in lowered.items() if k.startswith(_POSITION))
    return named, [v for _, v in positions]


def procedure_schema(options: Mapping[str, str]) -> StructType:
    """The result columns of the procedure the options name, once its arguments are checked."""
    proc = procedure(options[PROCEDURE_OPTION])
    proc.bind(*_arguments(options))
    return spark_schema(proc.output)


class ProcedureReader(DataSourceReader):
    def __init__(self, options: Mapping[str, str]):
        self.options = dict(options)

    def partitions(self) -> list[InputPartition]:
        return [InputPartition(0)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        named, positional = _arguments(self.options)
        conf = {k: v for k, v in self.options.items()
                if k.lower().startswith(("hoodie.", *HADOOP_STORAGE_PREFIXES))
                and not k.lower().startswith(PROCEDURE_OPTION)}
        result = call(self.options[PROCEDURE_OPTION], self.options.get("path"), named, positional, conf)
        yield from result.to_batches()
