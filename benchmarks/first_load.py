"""The first load alone: hoodie ``bulk_insert`` (COW, MOR) against Spark's ``partitionBy("dt").parquet`` of the
same cached DataFrame, as ``run.py`` measures it (``SizeSuite.first_load``), in a session that holds no other
format's tables: ``run.py`` keeps every format's pristine and working copies on disk while it measures, and at
20M rows they outgrow the page cache, which slows the writes of one run more than another's.

    python -m benchmarks.first_load --rows 20000000 --work /tmp/first_load
"""

from __future__ import annotations

import argparse
import logging
import shutil
from pathlib import Path

from benchmarks import spark_session, workload
from benchmarks.memory import PeakMemory
from benchmarks.size_result import FIRST_LOAD
from benchmarks.suite import SizeSuite

logger = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--work", type=Path, required=True, help="scratch folder (emptied first)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logger.setLevel(logging.INFO)
    shutil.rmtree(args.work, ignore_errors=True)
    spark = spark_session.start()
    suite = SizeSuite(spark, args.rows, args.work, PeakMemory(spark_session.jvm_pid(spark)), args.runs, 0, None)
    suite.first_load(workload.base_table(args.rows, workload.SEED), args.work)
    measured = suite.result.groups[FIRST_LOAD]
    spark_write = measured["spark"].median
    for m in measured.values():
        logger.info("%s: median %.2f s (runs %s), %.2fx Spark's write", m.label, m.median,
                    ", ".join(f"{s:.2f}" for s in m.seconds), m.median / spark_write)
    spark.stop()
    shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    main()
