"""hoodie-sharing under load: queries per second and latency percentiles of the query endpoint with
``--clients`` concurrent clients on a copy-on-write table of ``--files`` files, and the time to first byte of a
merge-on-read table's first query (its slices merged into the server's cache) against later ones (cached).

The server runs as its own process (``python -m hoodie_datasource.sharing``, one uvicorn worker) on a loopback
port; the clients are coroutines of one httpx client in this process, each sending its next query as soon as the
previous answer is read whole. Writes ``--out`` (markdown).

    flock /tmp/bench.lock python -m benchmarks.sharing --out benchmarks/results/sharing.md
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np
import pyarrow as pa
import yaml

from benchmarks.machine import facts
from hoodie_datasource.hoodie_table import HoodieTable

TOKEN = "bench-token"
QUERY = "/shares/bench/schemas/default/tables/{table}/query"
OPTS = {"hoodie.table.name": "bench", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.index.bloom.num_entries": "1000"}


def _rows(ids: np.ndarray, parts: np.ndarray, ts: int) -> pa.Table:
    return pa.table({"id": ids, "ts": np.full(len(ids), ts), "part": pa.array(parts.astype(str)),
                     "fare": np.random.default_rng(ts).random(len(ids)), "note": pa.array([f"n{ts}"] * len(ids))})


def make_tables(root: Path, files: int, mor_rows: int, mor_groups: int) -> dict[str, str]:
    cow = str(root / "cow")
    ids = np.arange(files * 20)
    HoodieTable(cow).write(_rows(ids, ids % files, 0), **OPTS, **{"hoodie.datasource.write.operation": "insert"})
    mor = str(root / "mor")
    opts = {**OPTS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    ids = np.arange(mor_rows)
    table = HoodieTable(mor)
    table.write(_rows(ids, ids % mor_groups, 0), **opts, **{"hoodie.datasource.write.operation": "insert"})
    updated = ids[::10]
    table.write(_rows(updated, updated % mor_groups, 1), **opts)
    return {"cow": cow, "mor": mor}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(tables: dict[str, str], work: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    config = {"version": 1, "host": "127.0.0.1", "port": port, "authorization": {"bearerToken": TOKEN},
              "fileTokenSecret": "bench", "shares": [{"name": "bench", "schemas": [{"name": "default", "tables": [
                  {"name": name, "location": path} for name, path in tables.items()]}]}]}
    path = work / "sharing.yaml"
    path.write_text(yaml.safe_dump(config))
    log = (work / "server.log").open("w")
    process = subprocess.Popen([sys.executable, "-m", "hoodie_datasource.sharing", "--config", str(path)],
                               stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/delta-sharing"
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=5)
            return process, url
        except httpx.HTTPError:
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError((work / "server.log").read_text()[-2000:]) from None
            time.sleep(0.2)


def cpu_seconds(pid: int) -> float:
    """The user and system CPU time a process has used (``/proc/<pid>/stat``): on a shared machine the
    server's CPU time per query tells its cost where wall time tells the machine's load."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_average() -> float:
    return os.getloadavg()[0]


async def load(url: str, table: str, clients: int, seconds: float) -> dict[str, float]:
    latencies: list[float] = []
    lines: set[int] = set()
    stop_at = time.monotonic() + seconds

    async def worker(client: httpx.AsyncClient) -> None:
        while time.monotonic() < stop_at:
            started = time.perf_counter()
            response = await client.post(url + QUERY.format(table=table), json={})
            body = response.content
            latencies.append(time.perf_counter() - started)
            assert response.status_code == 200, body[:300]
            lines.add(body.count(b"\n"))

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, limits=limits, timeout=120) as client:
        started = time.monotonic()
        await asyncio.gather(*(worker(client) for _ in range(clients)))
        elapsed = time.monotonic() - started
    ms = np.array(latencies) * 1000
    return {"requests": len(latencies), "seconds": elapsed, "qps": len(latencies) / elapsed,
            "p50": float(np.percentile(ms, 50)), "p99": float(np.percentile(ms, 99)), "files": max(lines) - 2}


def first_byte_ms(url: str, table: str) -> float:
    started = time.perf_counter()
    with httpx.stream("POST", url + QUERY.format(table=table), json={}, timeout=600,
                      headers={"Authorization": f"Bearer {TOKEN}"}) as response:
        next(response.iter_raw())
        assert response.status_code == 200
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--mor-rows", type=int, default=1_000_000)
    parser.add_argument("--mor-groups", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default="benchmarks/results/sharing.md")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sharing-bench-"))
    try:
        started = time.monotonic()
        tables = make_tables(work, args.files, args.mor_rows, args.mor_groups)
        print(f"tables written in {time.monotonic() - started:.0f} s", flush=True)
        first, cached = [], []
        for _ in range(args.repeat):  # each run a new server and an empty cache: the first query merges
            shutil.rmtree(os.path.join(tables["mor"], ".hoodie", ".aux", "sharing"), ignore_errors=True)
            process, url = start_server(tables, work)
            try:
                first.append(first_byte_ms(url, "mor"))
                cached += [first_byte_ms(url, "mor") for _ in range(5)]
            finally:
                process.terminate()
                process.wait(30)
        process, url = start_server(tables, work)
        try:
            asyncio.run(load(url, "cow", args.clients, 3))  # warm: footers read, the timeline's state kept
            cpu = cpu_seconds(process.pid)
            result = asyncio.run(load(url, "cow", args.clients, args.seconds))
            result["cpu_ms"] = (cpu_seconds(process.pid) - cpu) * 1000 / result["requests"]
            result["load"] = load_average()
        finally:
            process.terminate()
            process.wait(30)
        report = render(args, result, first, cached)
        Path(args.out).write_text(report)
        print(report)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def render(args, result: dict[str, float], first: list[float], cached: list[float]) -> str:
    machine = facts("not used")
    return "\n".join([
        "# hoodie-sharing: query endpoint under load, merge-on-read first query",
        "",
        f"`python -m benchmarks.sharing --files {args.files} --clients {args.clients} --seconds {args.seconds:g} "
        f"--mor-rows {args.mor_rows} --mor-groups {args.mor_groups}`, run under `flock /tmp/bench.lock`, on a machine "
        f"shared with other engineers' work ({machine['CPU']}, {machine['cores']} cores, {machine['RAM']}).",
        "The server is one uvicorn process; the clients are coroutines of one httpx client in another process.",
        "",
        f"## Query endpoint: {args.clients} concurrent clients, a copy-on-write table of {result['files']} files",
        "",
        "| requests | seconds | queries/s | p50 ms | p99 ms | server CPU ms / query | load average (1 min) |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| {result['requests']} | {result['seconds']:.1f} | {result['qps']:.1f} | {result['p50']:.0f} | "
        f"{result['p99']:.0f} | {result['cpu_ms']:.1f} | {result['load']:.1f} |",
        "",
        "Each answer holds 1,002 lines (protocol, metadata, a line per file with its signed URL and stats), about "
        "600 KB. The server's CPU time per query is what a query costs it; queries/s and the latencies also carry "
        "the machine's load (the load average beside them, on 2 cores) and the clients' own parsing.",
        "",
        f"## Merge-on-read table: {args.mor_rows:,} rows in {args.mor_groups} file groups, 10% updated into log files",
        "",
        "Time to the first byte of the query's response: the first query of a server with an empty cache merges "
        "every slice with log files into parquet; later ones find them cached.",
        "",
        "| query | runs | median ms | min ms | max ms |",
        "| --- | ---: | ---: | ---: | ---: |",
        f"| first (merges) | {len(first)} | {statistics.median(first):.0f} | {min(first):.0f} | {max(first):.0f} |",
        f"| later (cached) | {len(cached)} | {statistics.median(cached):.0f} | {min(cached):.0f} | {max(cached):.0f} |",
        "",
    ])


if __name__ == "__main__":
    main()
