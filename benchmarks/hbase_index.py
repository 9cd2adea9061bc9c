"""HBASE tagging against BLOOM, GLOBAL_BLOOM and RECORD_INDEX (issue 34, section 1), and what the HBase index adds
to a commit, on a real HBase (``tests/hbase_server.py``: a standalone master with its region server and
ZooKeeper, and its Thrift gateway, started here on loopback, ``make hbase`` installs it).

Tagging is ``benchmarks/record_index.py``'s (``tag_once``): the tagging step of an upsert of ``--incoming`` keys,
half of them stored (random, over the whole table) and half new, as the write pipeline runs it, counted in one
Spark job; the write session aborted after. BLOOM, GLOBAL_BLOOM and RECORD_INDEX tag that benchmark's copy-on-write
table (bulk-inserted, its record index built); HBASE tags the same rows bulk-inserted into a second table under the
HBase index, whose commit put every key into HBase. HBASE looks the keys up where the records are, in batched gets
of ``--get-batch-size`` keys (Hudi's rate limiter allows ten batches a second per task). Cases interleave, medians
of ``--runs`` after a warm-up round.

A commit's added latency: the ``index`` stage of the commit (``hoodie.stage.index.ms``, the puts of every key a
file added, before the commit completes) of the 5M bulk insert and of an upsert of ``--upsert-rows`` rows (half
new), with the upsert's whole time beside the same upsert into the RECORD_INDEX table.

    python -m benchmarks.hbase_index --rows 5000000 --runs 3 --work /tmp/hbase_index --shared
"""

from __future__ import annotations

import logging
import shlex
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from benchmarks import cli, ours, spark_session
from benchmarks.machine import facts, load_average, versions
from benchmarks.memory import PeakMemory
from benchmarks.pristine import stage
from benchmarks.record_index import GLOBAL_BLOOM, RECORD_INDEX, _tables, incoming, tag_once
from benchmarks.timing import Case, Measurement, interleave
from benchmarks.workload import SEED, base_table
from tests.hbase_server import HBaseServer, start_hbase

logger = logging.getLogger(__name__)

INCOMING = 1_000_000
UPSERT_ROWS = 100_000
GET_BATCH_SIZE = 1000
PUT_BATCH_SIZE = 100_000
HBASE_HEAP = "2g"  # the master and region server's: a 5M-key table's memstore
BLOOM = {"hoodie.index.type": "BLOOM", "hoodie.metadata.record.index.enable": "true"}  # keeps the record index
INDEXES = {  # case: (table, label)
    "bloom": ("lookup", "BLOOM"),
    "global_bloom": ("lookup", "GLOBAL_BLOOM"),
    "record_index": ("lookup", "RECORD_INDEX"),
    "hbase": ("hbase", "HBASE"),
}


@dataclass
class SizeResult:
    rows: int
    incoming: int
    load_s: float = 0.0  # the HBASE table's bulk insert
    load_index_ms: int = 0  # its commit's index stage: every key put
    tagging: dict[str, Measurement] = field(default_factory=dict)
    upserts: dict[str, dict[str, Any]] = field(default_factory=dict)


def _hbase_options(server: HBaseServer, table: str, get_batch: int) -> dict[str, str]:
    return {**server.index_options(table), "hoodie.index.hbase.get.batch.size": str(get_batch),
            "hoodie.index.hbase.put.batch.size": str(PUT_BATCH_SIZE)}


def measure_size(spark: SparkSession, server: HBaseServer, rows: int, count: int, runs: int, root: Path,
                 memory: PeakMemory, get_batch: int, upsert_rows: int) -> SizeResult:
    result = SizeResult(rows, count)
    paths = _tables(spark, rows, root)
    paths["hbase"] = root / "hbase"
    hbase = _hbase_options(server, server.create_table(f"bench_{rows}"), get_batch)
    base = stage(spark, base_table(rows, SEED), root / "staging" / "base.parquet", cache=False)
    started = time.perf_counter()
    ours.write(base, paths["hbase"], ours.COW, "bulk_insert", hbase)
    result.load_s = time.perf_counter() - started
    result.load_index_ms = ours.commit_facts(paths["hbase"])["stages"].get("index", 0)
    logger.info("loaded the HBASE table: %.1f s (index %d ms)", result.load_s, result.load_index_ms)
    options = {"bloom": BLOOM, "global_bloom": GLOBAL_BLOOM, "record_index": RECORD_INDEX, "hbase": hbase}
    batch = stage(spark, incoming(rows, count), root / "staging" / "incoming.parquet", cache=True)
    seen: dict[str, dict[str, Any]] = {name: {} for name in INDEXES}
    cases = [Case(name, label, run=lambda n=name, t=table: tag_once(paths[t], options[n], batch, seen[n]),
                  facts=lambda n=name: dict(seen[n]))
             for name, (table, label) in INDEXES.items()]
    result.tagging = interleave(f"{rows}/tagging", cases, runs, 1, memory)
    found = {name: m.median_fact("found") for name, m in result.tagging.items()}
    assert all(n == count // 2 for n in found.values()), found
    upsert = stage(spark, incoming(rows, upsert_rows, seed=77), root / "staging" / "upsert.parquet", cache=True)
    for name in ("record_index", "hbase"):
        started = time.perf_counter()
        ours.write(upsert, paths[INDEXES[name][0]], ours.COW, "upsert", options[name])
        result.upserts[name] = {"s": time.perf_counter() - started,
                                "index_ms": ours.commit_facts(paths[INDEXES[name][0]])["stages"].get("index", 0)}
    return result


def report(results: list[SizeResult], command: str, started: str, minutes: float, loads: tuple[str, str],
           shared: bool, java: str, note: str, get_batch: int, upsert_rows: int) -> str:
    lines = ["# HBASE tagging against BLOOM, GLOBAL_BLOOM and RECORD_INDEX (issue 34, section 1)", "",
             f"`{command}`: started {started}, {minutes:.1f} minutes. Load average (1, 5, 15 min) at start: "
             f"{loads[0]}; at end: {loads[1]}.", ""]
    if shared:
        lines += ["**The machine was shared with other engineers' test runs while this ran** (2 cores, load average "
                  "above): the times are indicative; the ratios between interleaved cases hold better; keys found "
                  "are exact.", ""]
    if note:
        lines += [note, ""]
    lines += ["Tagging: incoming keys, half stored (random over the whole table), half new, as an upsert's tagging "
              "step runs it (`benchmarks/record_index.py`'s `tag_once`), one Spark job counting the keys found. "
              "HBASE: batched gets through HBase's Thrift gateway in the tasks holding the records, "
              f"`hoodie.index.hbase.get.batch.size={get_batch}` (Hudi's rate limiter: at most "
              f"{get_batch * 10:,} keys a second per task; Hudi's default of 100 allows 1,000). HBase 2.6.1 "
              f"standalone (master, region server and ZooKeeper in one JVM of {HBASE_HEAP} heap, a 256 MB "
              "gateway) on the same 2 cores. local[2]; medians after one warm-up round; cases interleaved.", ""]
    for r in results:
        lines += [f"## {r.rows:,} rows, {r.incoming:,} incoming keys", "",
                  "| index | tag s | keys found | vs HBASE |", "|---|---|---|---|"]
        hb = r.tagging["hbase"].median_fact("tag_s")
        for name, m in r.tagging.items():
            tag_s = m.median_fact("tag_s")
            lines.append(f"| {INDEXES[name][1]} | {tag_s:.2f} | {int(m.median_fact('found')):,} | {tag_s / hb:.2f}x |")
        runs = {name: ", ".join(f"{f['tag_s']:.2f}" for f in m.facts) for name, m in r.tagging.items()}
        lines += ["", "Runs, tag s: " + "; ".join(f"{name} {seconds}" for name, seconds in runs.items()), "",
                  f"HBASE keys a second tagged: {r.incoming / hb:,.0f}.", "",
                  "The commit's added latency (the `index` stage: HBase puts of every key a file added, "
                  f"`put.batch.size={PUT_BATCH_SIZE:,}`, before the commit completes):", "",
                  "| write | s | index stage s | keys put a second |", "|---|---|---|---|",
                  f"| bulk_insert of {r.rows:,} rows (HBASE) | {r.load_s:.1f} | {r.load_index_ms / 1000:.1f} | "
                  f"{r.rows / max(r.load_index_ms / 1000, 1e-9):,.0f} |"]
        for name, u in r.upserts.items():
            lines.append(f"| upsert of {upsert_rows:,} rows, half new ({INDEXES[name][1]}) | {u['s']:.1f} | "
                         f"{u['index_ms'] / 1000:.2f} | "
                         f"{(upsert_rows // 2) / max(u['index_ms'] / 1000, 1e-9):,.0f} |" if name == "hbase" else
                         f"| upsert of {upsert_rows:,} rows, half new ({INDEXES[name][1]}) | {u['s']:.1f} | - | - |")
        lines.append("")
    lines += ["## Machine", ""] + [f"- {k}: {v}" for k, v in {**facts(java), **versions()}.items()] + [""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = cli.parser(__doc__)
    parser.add_argument("--work", type=Path, required=True, help="scratch folder (emptied first)")
    parser.add_argument("--shared", action="store_true", help="say in the results that the machine was shared")
    parser.add_argument("--note", default="", help="a remark printed in the results")
    parser.add_argument("--incoming", type=int, default=INCOMING, help=f"keys tagged (default {INCOMING:,})")
    parser.add_argument("--get-batch-size", type=int, default=GET_BATCH_SIZE,
                        help=f"hoodie.index.hbase.get.batch.size (default {GET_BATCH_SIZE})")
    parser.add_argument("--upsert-rows", type=int, default=UPSERT_ROWS, help=f"default {UPSERT_ROWS:,}")
    cli.add_driver_memory(parser, why="; 12g for 20M rows")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    for name in (__name__, "benchmarks.timing"):
        logging.getLogger(name).setLevel(logging.INFO)
    started, began, load_start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), time.monotonic(), load_average()
    shutil.rmtree(args.work, ignore_errors=True)
    server = start_hbase(args.work / "hbase-server", HBASE_HEAP)
    try:
        spark = spark_session.start(driver_memory=args.driver_memory)
        java = spark.sparkContext._jvm.java.lang.System.getProperty("java.version")
        memory = PeakMemory(spark_session.jvm_pid(spark))
        results = []
        for rows in args.rows:
            results.append(measure_size(spark, server, rows, args.incoming, args.runs, args.work / str(rows), memory,
                                        args.get_batch_size, args.upsert_rows))
            shutil.rmtree(args.work / str(rows), ignore_errors=True)
        spark.stop()
    finally:
        server.stop()
        shutil.rmtree(args.work, ignore_errors=True)
    command = shlex.join(["python", "-m", "benchmarks.hbase_index", *(argv if argv is not None else sys.argv[1:])])
    text = report(results, command, started, (time.monotonic() - began) / 60, (load_start, load_average()),
                  args.shared, java, args.note, args.get_batch_size, args.upsert_rows)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "hbase_index.md").write_text(text)


if __name__ == "__main__":
    main()
