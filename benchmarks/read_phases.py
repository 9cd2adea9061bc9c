"""Where a snapshot read's time goes, ours and Apache Hudi 0.15.0's: resolving the relation, planning the query,
running it.

    python benchmarks/read_phases.py --rows 1000000 --out benchmarks/results/hudi_0_15_read_phases.md

``run_hudi.py`` times each read whole; at 1M rows a COW read takes a few hundred milliseconds on both sides,
so a fixed cost decides the ratio. Here each read is split as Spark runs it: ``resolve`` is
``spark.read.format(...).load(path)`` (the relation and its schema: our Python data source's planning worker,
Hudi's ``DefaultSource`` and its file index), ``plan`` the physical plan of the query (the file listing and its
pruning), ``run`` the action on that plan (``count(*)``, ``sum(fare)`` collected, or every row counted as
Spark's ``noop`` sink reads them). The tables are those of ``run_hudi.py``'s reads: the base table
bulk-inserted, then the seed batch upserted, by each side; the cases are interleaved round by round after
warm-up rounds that let each JVM compile its scan.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pyspark.sql import SparkSession  # noqa: E402

from benchmarks import cli, machine, ours, peer_hudi, spark_session  # noqa: E402
from benchmarks.fixtures import stage  # noqa: E402
from benchmarks.hudi_driver import read_phases  # noqa: E402
from benchmarks.markdown import markdown_table  # noqa: E402
from benchmarks.workload import SEED, base_table, upsert_batch  # noqa: E402

logger = logging.getLogger(__name__)

PHASES = ("resolve", "plan", "run")
ACTIONS = {"scan": "full scan", "aggregate": "count + sum(fare)"}


@dataclass(frozen=True)
class PhaseCase:
    label: str
    measure: Callable[[], dict[str, float]]


def build_tables(spark: SparkSession, peer: peer_hudi.HudiPeer, rows: int, root: Path) -> dict[str, Path]:
    """Each side's COW and MOR tables: the base table bulk-inserted, then the seed batch upserted."""
    staged = {}
    for name, table in (("base", base_table(rows, SEED)), ("seed", upsert_batch(rows, SEED))):
        path = root / "staging" / f"{name}.parquet"
        staged[name] = stage(spark, table, path, cache=True)
        peer.stage(name, path)
    tables = {}
    for kind, table_type in (("COW", ours.COW), ("MOR", ours.MOR)):
        path = root / f"hoodie_{kind}"
        ours.write(staged["base"], path, table_type, "bulk_insert")
        ours.write(staged["seed"], path, table_type, "upsert")
        tables[f"hoodie {kind}"] = path
        for config in peer_hudi.CONFIGS:
            path = root / f"{config.key}_{kind}"
            peer.write("base", path, peer_hudi.write_options(table_type, "bulk_insert", config))
            peer.write("seed", path, peer_hudi.write_options(table_type, "upsert", config))
            tables[f"Apache Hudi {peer_hudi.VERSION} {kind} ({config.label})"] = path
    for name, df in staged.items():
        df.unpersist()
        peer.unstage(name)
    return tables


def cases(spark: SparkSession, peer: peer_hudi.HudiPeer, tables: dict[str, Path]) -> list[PhaseCase]:
    options = {config.label: config.options for config in peer_hudi.CONFIGS}
    found = []
    for action, what in ACTIONS.items():
        for label, path in tables.items():
            if label.startswith("hoodie"):
                found.append(PhaseCase(f"{label} snapshot, {what}", lambda p=path, a=action:
                                       read_phases(spark, "hoodie", str(p), {}, a)))
            else:
                config = next(c for c in options if c in label)
                found.append(PhaseCase(f"{label} snapshot, {what}", lambda p=path, a=action, o=options[config]:
                                       peer.call("phases", path=str(p), options=o, action=a)))
    return found


def measure(found: list[PhaseCase], warmup: int, runs: int) -> dict[str, dict[str, list[float]]]:
    """Each case's phases over ``runs`` rounds, after ``warmup`` rounds not counted; a round runs every case once."""
    times: dict[str, dict[str, list[float]]] = {c.label: {p: [] for p in PHASES} for c in found}
    for round_number in range(warmup + runs):
        for case in found:
            phases = case.measure()
            if round_number >= warmup:
                for phase in PHASES:
                    times[case.label][phase].append(phases[phase])
        logger.info("round %d of %d done", round_number + 1, warmup + runs)
    return times


def render(command: str, started: float, loads: tuple[str, str], rows: int, warmup: int, runs: int,
           times: dict[str, dict[str, list[float]]]) -> str:
    header = ["case", *(f"{p} s" for p in PHASES), "total s"]
    body = []
    for label, phases in times.items():
        medians = [statistics.median(phases[p]) for p in PHASES]
        body.append([label, *(f"{m:.3f}" for m in medians), f"{sum(medians):.3f}"])
    minutes = (time.time() - started) / 60
    return "\n".join([
        f"# Where a snapshot read's time goes: hoodie-datasource and Apache Hudi {peer_hudi.VERSION}, "
        f"{rows:,} rows", "",
        f"`{command}`: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}, {minutes:.1f} minutes. "
        f"Load average (1, 5, 15 min) at start: {loads[0]}; at end: {loads[1]}.", "",
        f"Medians of {runs} interleaved rounds after {warmup} warm-up rounds. {__doc__.split(chr(10) + chr(10))[2]}",
        "", *markdown_table(header, body)])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=10, help="rounds not counted (each JVM's JIT compiles a scan "
                                                                "over its first ten or so runs)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/read_phases"), help="scratch folder (emptied)")
    parser.add_argument("--out", type=Path, help="markdown results file (default: printed)")
    cli.add_driver_memory(parser, "6g")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    command = "python benchmarks/read_phases.py " + " ".join(argv if argv is not None else sys.argv[1:])
    started, load_at_start = time.time(), machine.load_average()
    shutil.rmtree(args.work, ignore_errors=True)
    spark = spark_session.start(driver_memory=args.driver_memory)
    peer = peer_hudi.HudiPeer(args.work, args.driver_memory, spark_session.SHUFFLE_PARTITIONS)
    try:
        tables = build_tables(spark, peer, args.rows, args.work)
        times = measure(cases(spark, peer, tables), args.warmup, args.runs)
    finally:
        peer.close()
        spark.stop()
    text = render(command, started, (load_at_start, machine.load_average()), args.rows, args.warmup, args.runs,
                  times)
    cli.publish(text, args.out)
    shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    main()
