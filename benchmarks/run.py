"""hoodie-datasource against delta-rs, pyiceberg, a Spark parquet reload and a pyarrow floor.

    python benchmarks/run.py                      # 1,000,000 rows, 3 runs (make bench)
    python benchmarks/run.py --rows 1000000,5000000,20000000
    python benchmarks/run.py --rows 200000 --variants seed --name smoke

In one warm Spark session, for each size: upserts of each batch variant (hoodie COW and MOR,
delta-rs MERGE, the pyarrow floor; for the seed batch also the bulk reload, delta-rs with its change
data feed and pyiceberg), a 1-row upsert, incremental and snapshot reads, MOR compaction, index
counts, and the smallest size's batch again at the larger sizes. Writes benchmarks/results/<name>.md
and its PNG charts; peers are the ``bench`` extra (pip install -e '.[bench]').
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import charts, cli, machine, spark_session  # noqa: E402
from benchmarks.cpu_time import CpuClock  # noqa: E402
from benchmarks.markdown import Run  # noqa: E402
from benchmarks.memory import PeakMemory  # noqa: E402
from benchmarks.report import render  # noqa: E402
from benchmarks.size_result import SizeResult  # noqa: E402
from benchmarks.suite import SizeSuite  # noqa: E402
from benchmarks.targets import verdicts  # noqa: E402
from benchmarks.workload import SEED, VARIANTS, upsert_batch  # noqa: E402

logger = logging.getLogger("benchmarks")


def main(argv: list[str] | None = None) -> None:
    args = cli.parse_run(__doc__, argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    for noisy in ("hoodie_datasource", "py4j"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    started, load_before, clock = datetime.now(timezone.utc), machine.load_average(), time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="hoodie-bench-", dir=args.work))
    spark = spark_session.start(driver_memory=args.driver_memory)
    memory = PeakMemory(spark_session.jvm_pid(spark))
    cpu = CpuClock(os.getpid(), spark_session.jvm_pid(spark))
    java = spark.sparkContext._jvm.java.lang.System.getProperty("java.version")
    growth_batch = upsert_batch(args.rows[0], SEED)
    results: dict[int, SizeResult] = {}
    try:
        for rows in args.rows:
            suite = SizeSuite(spark, rows, work / str(rows), memory, args.runs, args.warmup,
                              growth_batch if rows != args.rows[0] else None, cpu)
            results[rows] = suite.run([VARIANTS[name] for name in args.variants])
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)

    args.out.mkdir(parents=True, exist_ok=True)
    size_charts = {rows: charts.size_charts(result, args.out, args.name) for rows, result in results.items()}
    growth = charts.growth_chart(results, args.out, args.name)
    run = Run(command=cli.command_line("run.py", argv if argv is not None else sys.argv[1:]),
              started=started.strftime("%Y-%m-%d %H:%M"), minutes=(time.perf_counter() - clock) / 60,
              load_before=load_before, load_after=machine.load_average(), note=args.note, runs=args.runs,
              warmup=args.warmup, machine=machine.facts(java), versions=machine.versions(),
              memory_resettable=memory.resettable)
    found = verdicts(results)
    out = args.out / f"{args.name}.md"
    out.write_text(render(run, results, found, size_charts, growth) + "\n")
    logger.info("wrote %s", out)
    for verdict in found:
        logger.info("%s [%s]: %s %s", verdict.target, verdict.where, verdict.measured, verdict.status)


if __name__ == "__main__":
    main()
