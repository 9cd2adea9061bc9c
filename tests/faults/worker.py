"""One operation on a table, run in its own process by the fault-injection tests:

    python -m tests.faults.worker '{"op": "upsert", "path": ..., "options": {...}, "rows": {...}}'

``op`` is ``upsert`` (the local engine), ``spark_write`` (a local Spark session, the write DAG; ``operation``
names the save mode, ``upsert`` unless given),
``compact``, ``clean``, ``archive``, ``rollback``, ``savepoint`` or ``restore`` (``HoodieTable``'s services;
``instant`` names what to roll back, savepoint or restore to). A failure prints
``FAILED <exception type>: <message>`` on stderr and exits with 3."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

import pyarrow as pa

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.hoodie_table import HoodieTable

FAILED_EXIT = 3


def _spark_write(path: str, rows: pa.Table, options: dict[str, str], operation: str) -> None:
    from pyspark.sql import SparkSession

    import hoodie_datasource

    spark = (SparkSession.builder.master("local[2]").appName("hoodie-fault-writer")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2").getOrCreate())
    hoodie_datasource.register(spark)
    spark.createDataFrame(rows).write.format("hoodie").options(**options).mode(operation).save(path)
    spark.stop()


def run(spec: dict[str, Any]) -> None:
    path, options, op = spec["path"], spec["options"], spec["op"]
    table = HoodieTable(path)
    if op == "upsert":
        write_local(path, pa.table(spec["rows"]), options)
    elif op == "spark_write":
        _spark_write(path, pa.table(spec["rows"]), options, spec.get("operation", "upsert"))
    elif op == "compact":
        table.compact(**options)
    elif op == "cluster":
        table.cluster(**options)
    elif op == "clean":
        table.clean(**options)
    elif op == "archive":
        table.archive(**options)
    elif op == "rollback":
        table.rollback(spec["instant"], **options)
    elif op == "savepoint":
        table.create_savepoint(spec["instant"], **options)
    elif op == "restore":
        table.rollback_to_savepoint(spec["instant"], **options)
    else:
        raise ValueError(f"unknown op {op!r}")


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        run(json.loads(sys.argv[1]))
    except Exception as exc:
        print(f"FAILED {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return FAILED_EXIT
    return 0


if __name__ == "__main__":
    sys.exit(main())
