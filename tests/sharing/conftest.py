"""The sharing tests' fixtures: hoodie tables written in this process, a server on a free loopback port (a thread
of this process running uvicorn), and the official client, run in its own environment as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import requests

from hoodie_datasource.hoodie_table import HoodieTable
from hoodie_datasource.sharing.config import parse_config
from hoodie_datasource.sharing.server import make_server
from tests.conftest import REPO, _missing

CLIENT_PYTHON = REPO / ".tools" / "sharing-client" / "venv" / "bin" / "python"
CLIENT_WORKER = Path(__file__).with_name("client_worker.py")
TOKEN = "test-token-alice"


def table_options(table_type: str, partitioned: bool) -> dict[str, str]:
    opts = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.table.type": table_type}
    if partitioned:
        opts["hoodie.datasource.write.partitionpath.field"] = "city"
    return opts


def rows(ids: list[int], ts: int, value: str = "v") -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "ts": pa.array([ts] * len(ids), pa.int64()),
                     "city": pa.array(["sf" if i % 2 else "nyc" for i in ids]),
                     "fare": pa.array([i * 1.5 + ts for i in ids]),
                     "note": pa.array([f"{value}{i}@{ts}" for i in ids])})


def write_versions(path: str, table_type: str, partitioned: bool, count: int, **extra: str) -> list[str]:
    """``count`` versions: inserts, updates, a delete; returns the instants, version 0 first. ``extra``: more
    write options."""
    table = HoodieTable(path)
    opts = {**table_options(table_type, partitioned), **extra}
    instants = [table.write(rows(list(range(10)), 0), **opts)]
    for n in range(1, count):
        if n % 4 == 3:
            instants.append(table.write(rows([n % 10], n), **opts,
                                        **{"hoodie.datasource.write.operation": "delete"}))
        else:
            instants.append(table.write(rows([n % 10, (n * 3) % 10, 10 + n], n, "u"), **opts))
    return instants


def new_table(path: str, table_type: str, ids: list[int]) -> tuple[HoodieTable, dict[str, str]]:
    """A partitioned table at ``path`` with the rows ``ids`` (version 0), and its write options."""
    opts = table_options(table_type, True)
    table = HoodieTable(path)
    table.write(rows(ids, 0), **opts)
    return table, opts


def file_urls(response: requests.Response, kind: str = "file") -> list[str]:
    """The file URLs of a query's answer (after its protocol and metaData lines)."""
    assert response.status_code == 200, response.text
    return [json.loads(line)[kind]["url"] for line in response.text.splitlines()[2:]]


def read_served(urls: list[str], columns: list[str]) -> pa.Table:
    """The rows of the files at ``urls``, as a recipient reads them, sorted by id."""
    tables = [pq.read_table(pa.BufferReader(requests.get(u, timeout=30).content)).select(columns) for u in urls]
    return pa.concat_tables(tables).sort_by("id")


def config_of(tables: dict[str, str], **extra: Any) -> dict[str, Any]:
    """A configuration sharing ``tables`` (name -> location) in share ``share``, schema ``default``."""
    return {"version": 1, "shares": [{"name": "share", "schemas": [{"name": "default", "tables": [
        {"name": name, "location": location, "historyShared": True} for name, location in tables.items()]}]}],
        "authorization": {"bearerToken": TOKEN}, "fileTokenSecret": "test-secret", **extra}


@dataclass
class RunningServer:
    url: str  # the endpoint: http://127.0.0.1:<port>/delta-sharing
    port: int

    def profile(self, directory: Path, token: str = TOKEN) -> str:
        path = directory / f"profile-{self.port}-{token[:8]}.share"
        path.write_text(json.dumps({"shareCredentialsVersion": 1, "endpoint": self.url, "bearerToken": token}))
        return str(path)

    def get(self, path: str, token: str | None = TOKEN, **kwargs) -> requests.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return requests.get(self.url + path, headers=headers, timeout=60, **kwargs)

    def post(self, path: str, token: str | None = TOKEN, **kwargs) -> requests.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return requests.post(self.url + path, headers=headers, timeout=60, **kwargs)


@pytest.fixture
def serve() -> Iterator[Callable[[dict[str, Any]], RunningServer]]:
    """Starts servers of configurations (as parsed YAML) on free loopback ports; stops them after the test."""
    started: list[tuple[Any, threading.Thread]] = []

    def start(raw: dict[str, Any]) -> RunningServer:
        config = parse_config(raw)
        server = make_server(config, "127.0.0.1", 0)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 30
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the sharing server did not start")
            time.sleep(0.02)
        started.append((server, thread))
        port = server.servers[0].sockets[0].getsockname()[1]
        return RunningServer(f"http://127.0.0.1:{port}{config.endpoint}", port)

    yield start
    for server, thread in started:
        server.should_exit = True
        thread.join(30)


@pytest.fixture(scope="session")
def client_python() -> Path:
    """The official client's environment (``make sharing-client``)."""
    if not CLIENT_PYTHON.exists():
        _missing(f"the official delta-sharing client is not installed at {CLIENT_PYTHON} (make sharing-client)")
    return CLIENT_PYTHON


@pytest.fixture
def client(client_python: Path, tmp_path: Path) -> Callable[..., Any]:
    """Runs one request of ``client_worker.py`` in the client's environment; a frame read comes back as Arrow."""
    counter = iter(range(1_000_000))

    def run(op: str, **request: Any) -> Any:
        out = tmp_path / f"client-{next(counter)}.parquet"
        body = {"op": op, **request}
        if op not in ("list_all_tables", "table_version"):
            body["out"] = str(out)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        done = subprocess.run([str(client_python), str(CLIENT_WORKER), json.dumps(body)], capture_output=True,
                              text=True, timeout=300, env=env)
        if done.returncode != 0:
            raise AssertionError(f"the official client failed: {done.stderr[-3000:]}")
        if not body.get("out"):
            return json.loads(done.stdout.strip().splitlines()[-1])
        return json.loads(out.read_text()) if request.get("as_json") else pq.read_table(out)

    return run
