"""hoodie-datasource side by side with Apache Hudi 0.15.0 (its Spark 3.5 bundle, metadata table on and off).

    python benchmarks/run_hudi.py                     # 1,000,000 rows, 3 runs (make bench-hudi)
    python benchmarks/run_hudi.py --rows 1000000,5000000
    python benchmarks/run_hudi.py --rows 200000 --runs 1 --warmup 0 --name hudi_smoke   # a quick check

Needs ``make oracle`` (the bundle from Maven Central and a pyspark 3.5 venv under ``.tools/hudi-oracle``).
At each size, in our warm local[2] Spark session and in Hudi's (a process of its own, the same settings):
bulk_insert of the base table, COW and MOR upserts of the seed and uniform batches, a 1-row upsert, snapshot
and incremental reads. Writes benchmarks/results/<name>.md (default hudi_0_15) and its PNG charts.
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

from benchmarks import cli, hudi_report, machine, spark_session  # noqa: E402
from benchmarks.cpu_time import CpuClock  # noqa: E402
from benchmarks.hudi_suite import HudiSizeSuite  # noqa: E402
from benchmarks.markdown import Run  # noqa: E402
from benchmarks.memory import PeakMemory  # noqa: E402
from benchmarks.peer_hudi import BUNDLE, VERSION, HudiPeer  # noqa: E402
from benchmarks.size_result import SizeResult  # noqa: E402
from benchmarks.targets import against_hudi  # noqa: E402
from benchmarks.workload import SEED, UNIFORM, VARIANTS  # noqa: E402

logger = logging.getLogger("benchmarks")


def main(argv: list[str] | None = None) -> None:
    args = cli.parse_run(__doc__, argv, variants=(SEED.name, UNIFORM.name), name="hudi_0_15")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    for noisy in ("hoodie_datasource", "py4j"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    started, load_before, clock = datetime.now(timezone.utc), machine.load_average(), time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="hoodie-bench-hudi-", dir=args.work))
    peer, spark = None, None
    results: dict[int, SizeResult] = {}
    try:
        peer = HudiPeer(work / "hudi", args.driver_memory, spark_session.SHUFFLE_PARTITIONS)
        spark = spark_session.start(driver_memory=args.driver_memory)
        memory = PeakMemory(spark_session.jvm_pid(spark))
        cpu = CpuClock(os.getpid(), spark_session.jvm_pid(spark))
        java = spark.sparkContext._jvm.java.lang.System.getProperty("java.version")
        for rows in args.rows:
            suite = HudiSizeSuite(spark, peer, rows, work / str(rows), memory, args.runs, args.warmup, cpu)
            results[rows] = suite.run([VARIANTS[name] for name in args.variants])
    except BaseException:
        if peer is not None:  # the scratch folder goes; Hudi's log stays
            kept = work.with_name(f"{work.name}-hudi-driver.log")
            shutil.copyfile(peer.log_path, kept)
            logger.error("the run failed; Hudi's process logged to %s", kept)
        raise
    finally:
        if spark is not None:
            spark.stop()
        if peer is not None:
            peer.close()
        shutil.rmtree(work, ignore_errors=True)

    args.out.mkdir(parents=True, exist_ok=True)
    charts = {rows: hudi_report.size_charts(result, args.out, args.name) for rows, result in results.items()}
    versions = {**machine.versions(), "Apache Hudi (peer)": f"{VERSION} ({BUNDLE.name})",
                "Spark of the peer": f"{peer.spark_version} (pyspark), Java {peer.java_version}"}
    run = Run(command=cli.command_line("run_hudi.py", argv if argv is not None else sys.argv[1:]),
              started=started.strftime("%Y-%m-%d %H:%M"), minutes=(time.perf_counter() - clock) / 60,
              load_before=load_before, load_after=machine.load_average(), note=args.note, runs=args.runs,
              warmup=args.warmup, machine=machine.facts(java), versions=versions,
              memory_resettable=memory.resettable and peer.memory.resettable)
    found = against_hudi(results, tuple(args.variants))
    out = args.out / f"{args.name}.md"
    out.write_text(hudi_report.render(run, results, found, charts, args.variants, spark_session.SHUFFLE_PARTITIONS,
                                      args.driver_memory) + "\n")
    logger.info("wrote %s", out)
    for verdict in found:
        logger.info("%s [%s]: %s %s", verdict.target, verdict.where, verdict.measured, verdict.status)


if __name__ == "__main__":
    main()
